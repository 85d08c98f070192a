"""Shared test set-up: quiet TF logs, fixed seeds, and helpers used across the suite."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.set_random_seed(1234)
    yield


@pytest.fixture
def backend() -> str:
    return keras.backend.backend()
