"""training/release_jobs.sh checks its arguments before it trains anything."""

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "training" / "release_jobs.sh"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _run(tmp_path, *args):
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True,
                          env={"LOG_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}, timeout=60)


def test_unknown_data_set_is_refused(tmp_path):
    result = _run(tmp_path, "mnist")
    assert result.returncode == 2 and "usage:" in result.stderr


def test_unknown_model_is_refused_before_any_run(tmp_path):
    result = _run(tmp_path, "fashion_mnist", "plainnet50", "gplainet50")  # typo
    assert result.returncode == 2
    assert "no release run of 'gplainet50'" in result.stderr and "gplainnet50" in result.stderr
    assert not (tmp_path / "jobs.log").exists()  # nothing started


def test_model_of_another_data_set_is_refused(tmp_path):
    result = _run(tmp_path, "cifar10", "plainnet50")
    assert result.returncode == 2 and "no release run of 'plainnet50' for 'cifar10'" in result.stderr
