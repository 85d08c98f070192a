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


# Modules whose subject does not depend on the Keras backend (command lines run in
# subprocesses, packaging, the benchmark harness) or that sweep every registered model
# through the same builder: they run once, in the TensorFlow pass of tests/run.sh, which
# keeps the two-backend default run within its time budget. The weights they load and
# the layers they build are exercised on every backend by the other tests.
ONCE_MODULES = (
    "tests/test_packaging.py",
    "tests/benchmarks/",
    "tests/reliability/test_training_runs.py",
    "tests/reliability/test_weights_cli.py",
    "tests/reliability/test_weights_hub.py",
    "tests/test_timm_api.py",
    "tests/analysis/",
    "tests/models/test_parameter_counts.py",  # counts do not depend on the backend
)
# The CIFAR checkpoints' full test-split evaluations (about 20-40 s each) likewise.
ONCE_TESTS = ("test_released_accuracy_is_reproduced[gresnet20.cifar10]",
              "test_released_accuracy_is_reproduced[preactresnet20.cifar10]",
              "test_released_accuracy_is_reproduced[gwrn_16_2.cifar10]")
ONCE_BACKEND = "tensorflow"


def pytest_collection_modifyitems(config, items):
    if keras.backend.backend() == ONCE_BACKEND:
        return
    skip = pytest.mark.skip(reason=f"backend-independent: runs once, in the {ONCE_BACKEND} pass")
    root = config.rootpath
    for item in items:
        path = item.path.relative_to(root).as_posix()
        if path.startswith(ONCE_MODULES) or item.name in ONCE_TESTS:
            item.add_marker(skip)
