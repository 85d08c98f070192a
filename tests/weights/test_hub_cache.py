"""The Hub and the Hugging Face cache: a bad cached copy is evicted without deleting
anything outside the cache and the same call falls through to a good copy; a refused
token names HF_TOKEN. Against the local Hub-protocol server of ``tests.support.hub_server``."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from huggingface_hub import constants, try_to_load_from_cache

import keras_gated as kg
from keras_gated.release import hub as kg_publish
from keras_gated.weights import hub as kg_hub
from keras_gated.weights import pretrained_cfgs_overlay, sha256_of
from keras_gated.release import zoo_folder as kg_zoo
from tests.support.helpers import images, to_numpy
from tests.support.hub_fixtures import hf_home, hub, trained_ish  # noqa: F401
from tests.support.hub_server import HubServer, _Handler

WEIGHT_ID = "gresnet8.cifar10"
REPO = f"keras-gated/{WEIGHT_ID}"
BAD_TOKEN = "hf_rejected_token"
X = images(2, seed=4)


def tree_hashes(root: Path, skip: Path | None = None) -> dict[str, str]:
    """sha256 of every file under ``root`` (not following links, none under ``skip``)."""
    hashes = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and not (skip and skip in path.parents):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            hashes[path.relative_to(root).as_posix()] = digest
    return hashes


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``keras-gated ARGS`` in a fresh process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "keras_gated.cli", *args],
        capture_output=True, text=True, timeout=300, env={**os.environ, **env},
    )


def write_zoo(folder: Path, seed: int = 1):
    model = trained_ish(kg.GResNet(8), seed=seed)
    kg_zoo.save_zoo_folder(
        model, folder, weight_id=WEIGHT_ID,
        metrics={"test_accuracy": 0.5, "split": "test", "num_examples": 4},
        recipe="test", command="none", dataset_note="synthetic",
    )
    return model


@pytest.fixture
def released(hub, tmp_path):  # noqa: F811
    """A published GResNet(8) and its registered config: (model, config)."""
    model = write_zoo(tmp_path / "src" / WEIGHT_ID)
    commit = kg_publish.publish(tmp_path / "src" / WEIGHT_ID, REPO)
    return model, kg_zoo.pretrained_cfg_from_folder(tmp_path / "src" / WEIGHT_ID, revision=commit)


def link_cache_entry_outside(tmp_path: Path, commit: str) -> tuple[Path, Path]:
    """Replace the cached weight file by a link to a file outside the cache."""
    cached = Path(try_to_load_from_cache(REPO, "model.weights.h5", revision=commit))
    outside = tmp_path / "home" / "x.txt"
    outside.parent.mkdir()
    outside.write_text("a file of the user's, not a weight file\n")
    cached.unlink()
    cached.symlink_to(outside)
    return cached, outside


def test_bad_cache_entry_linking_outside_is_evicted_safely(released, tmp_path):
    model, cfg = released
    with pretrained_cfgs_overlay(cfg):
        kg_hub.pull(WEIGHT_ID)
        cached, outside = link_cache_entry_outside(tmp_path, cfg.revision)
        cache = Path(constants.HF_HUB_CACHE)
        before = tree_hashes(tmp_path, skip=cache)
        with pytest.warns(UserWarning, match="outside the cache") as warned:
            loaded = kg.GResNet(8, weights="cifar10")  # the same call falls through
    assert any(str(outside) in str(w.message) for w in warned)
    np.testing.assert_array_equal(to_numpy(loaded(X)), to_numpy(model(X)))
    assert outside.read_text() == "a file of the user's, not a weight file\n"
    assert tree_hashes(tmp_path, skip=cache) == before
    assert sha256_of(cached) == cfg.sha256  # the cache holds a good copy again


def test_pull_cli_replaces_a_bad_cache_entry(released, tmp_path, hub):  # noqa: F811
    _, cfg = released
    with pretrained_cfgs_overlay(cfg):
        kg_hub.pull(WEIGHT_ID)
        cached, outside = link_cache_entry_outside(tmp_path, cfg.revision)
        # Re-pull the bad entry as a user would; the subprocess registers the same config.
        folder = str(tmp_path / "src" / WEIGHT_ID)
        script = (
            "import sys, keras_gated.weights as w, keras_gated.release.zoo_folder as h; "
            f"w.register_pretrained(h.pretrained_cfg_from_folder({folder!r}, "
            f"revision={cfg.revision!r})); from keras_gated.cli import main; "
            f"sys.exit(main(['pull', {WEIGHT_ID!r}]))"
        )
        env = {"HF_ENDPOINT": hub.url, "HF_HOME": constants.HF_HOME,
               "KERAS_GATED_ZOO": str(tmp_path / "zoo")}
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                timeout=300, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    assert outside.read_text() == "a file of the user's, not a weight file\n"
    assert sha256_of(cached) == cfg.sha256


class RejectingHandler(_Handler):
    """Answers 401 to any request carrying ``BAD_TOKEN``, as the Hub does."""

    def _route(self) -> None:
        if self.headers.get("Authorization") == f"Bearer {BAD_TOKEN}":
            self._body()
            self._reply(401, {"error": "Invalid credentials in Authorization header"})
            return
        super()._route()

    do_GET = do_HEAD = do_POST = _route


def test_publish_with_a_refused_token_names_hf_token(hf_home, tmp_path):  # noqa: F811
    folder = tmp_path / "zoo" / WEIGHT_ID
    write_zoo(folder)
    before = tree_hashes(tmp_path / "zoo")
    with HubServer() as server:
        server.RequestHandlerClass = RejectingHandler
        result = cli("publish", str(folder), "--repo-id", REPO,
                     env={"HF_ENDPOINT": server.url, "HF_TOKEN": BAD_TOKEN})
        assert server.state.repos == {}
    assert result.returncode == 1, result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("keras-gated:")]
    assert "HF_TOKEN" in line and "401" in line and REPO in line
    assert "Traceback" not in result.stderr
    assert tree_hashes(tmp_path / "zoo") == before
