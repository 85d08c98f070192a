"""Fixtures and helpers for the weights and Hub tests.

``hub`` starts ``tests.support.hub_server.HubServer`` and points the real huggingface_hub at it.
huggingface_hub reads HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE when it is imported, and
keras / other tests may have imported it already, so the values it cached are patched
too (``constants.ENDPOINT`` and the resolve-URL template, the module-level ``HfApi``,
the cache and token paths). Each test gets its own empty cache and ``zoo/``
(``$KERAS_GATED_ZOO``) under ``tmp_path``.

Import the fixtures into a test module with ``from tests.support.hub_fixtures import hub``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keras
import numpy as np
import pytest

from tests.support.hub_server import HubServer

ORG = "keras-gated"


@pytest.fixture
def hf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HF_HOME (cache, token) and zoo/ for this test; online, no token."""
    from huggingface_hub import constants

    home = tmp_path / "hf_home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(home / ".agent_harnesses.json"))
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("KERAS_GATED_ZOO", str(tmp_path / "zoo"))
    return home


@pytest.fixture
def hub(hf_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    """A Hub-protocol server on 127.0.0.1 that huggingface_hub talks to."""
    import huggingface_hub.hf_api
    from huggingface_hub import constants

    with HubServer() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setattr(constants, "ENDPOINT", server.url)
        monkeypatch.setattr(
            constants,
            "HUGGINGFACE_CO_URL_TEMPLATE",
            server.url + "/{repo_id}/resolve/{revision}/{filename}",
        )
        monkeypatch.setattr(huggingface_hub.hf_api.api, "endpoint", server.url)
        yield server
        assert server.state.unhandled == [], "the client called endpoints the server lacks"


def go_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """HF_HUB_OFFLINE=1, as huggingface_hub would have read it at import."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


def trained_ish(model: keras.Model, seed: int) -> keras.Model:
    """Move every variable (BN statistics too) away from its initial value, reproducibly,
    so that two 'trainings' give different predictions."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        value = keras.ops.convert_to_numpy(variable)
        value = value + rng.normal(0.0, 0.1, size=value.shape).astype(value.dtype)
        if "moving_variance" in variable.path:
            value = np.abs(value) + 0.5
        variable.assign(value)
    return model


def flip_one_byte(path: Path) -> None:
    """Change one byte in the middle of a file (in place, through symlinks)."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
