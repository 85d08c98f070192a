"""``keras-gated`` as a user runs it: weights used on the wrong data, unreleased weight ids
and unreadable weight files end in one sentence and exit 2, with no traceback and no file
changed."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import keras_gated as kg
from keras_gated.weights import zoo_dir


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """``keras-gated ARGS`` in a fresh process: offline, with an empty HF cache."""
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf_home"), "HF_HUB_OFFLINE": "1"}
    env.pop("KERAS_GATED_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "keras_gated.cli", *args],
        capture_output=True, text=True, timeout=600, env=env,
    )


def error_line(result: subprocess.CompletedProcess) -> str:
    """The one error line (warnings of the weights' caveats aside)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("keras-gated: error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_evaluate_refuses_a_data_set_with_other_classes(tmp_path):
    zoo = zoo_dir()
    before = tree_hashes(zoo)
    result = cli(tmp_path, "evaluate", "gresnet20", "--weights", "cifar10",
                 "--dataset", "fashion_mnist")
    assert result.returncode == 2, result.stderr
    line = error_line(result)
    for expected in ("'cifar10'", "'fashion_mnist'", "airplane", "T-shirt/top", "trained on"):
        assert expected in line
    assert "test accuracy" not in result.stdout
    assert tree_hashes(zoo) == before


def test_info_of_planned_and_unknown_weight_ids_is_consistent(tmp_path):
    planned = cli(tmp_path, "info", "gresnet110.cifar10")
    assert planned.returncode == 0, planned.stderr
    assert "released weights: none yet" in planned.stdout
    assert "planned weights: gresnet110.cifar10" in planned.stdout
    assert "released weights: gresnet110.cifar10" not in planned.stdout

    unknown = cli(tmp_path, "info", "gresnet20.svhn")
    assert unknown.returncode == 2
    assert "No released weights 'gresnet20.svhn'" in error_line(unknown)
    assert unknown.stdout == ""

    released = cli(tmp_path, "info", "gresnet20.cifar10")
    assert released.returncode == 0, released.stderr
    assert "released weights: gresnet20.cifar10" in released.stdout


def test_truncated_weights_file_names_the_file(tmp_path):
    path = tmp_path / "gresnet20.weights.h5"
    kg.GResNet20().save_weights(path)
    path.write_bytes(path.read_bytes()[:4096])
    before = tree_hashes(tmp_path)
    result = cli(tmp_path, "demo", "--weights", str(path))
    assert result.returncode == 2, result.stderr
    line = error_line(result)
    assert str(path) in line and "truncated" in line and "save it again" in line
    assert tree_hashes(tmp_path) == before
