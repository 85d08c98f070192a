"""The lease, rehearsed on CPU end to end: ``prepare`` here, ``run`` in a fresh virtual
environment made like the lease host's (Python 3.12, jax at the host's version, no Keras,
no TensorFlow: Keras comes from the carried wheels), then ``release`` of its bundle.

Slow (a virtual environment, wheels and an evaluation on the full test split): CI runs it
on its own (``.ci/run``), ``bash tests/run.sh -m slow -k rehearsal`` here.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
HOST_REQUIREMENTS = ROOT / "training" / "lease" / "host_requirements.txt"
HOST_JAX = next(line.split("==")[1].strip() for line in HOST_REQUIREMENTS.read_text().splitlines()
                if line.startswith("jax=="))
# A venv made beforehand from HOST_REQUIREMENTS (CI makes it while other tests run).
HOST_VENV_VARIABLE = "KERAS_GATED_LEASE_HOST_VENV"
LEASE_DIR = ".lease-rehearsal"


def python312() -> str | None:
    candidates = [shutil.which("python3.12"), *sorted(glob.glob(
        os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "--version"], capture_output=True).returncode == 0:
            return candidate
    return None


def run(*command, cwd=ROOT, env=None, check=True, timeout=900):
    result = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"{command} exited {result.returncode}:\n{result.stdout[-3000:]}\n"
                             f"{result.stderr[-3000:]}")
    return result


@pytest.mark.slow
def test_prepare_run_and_release_rehearse_a_lease_on_cpu(tmp_path):
    from training.lease.bundle import check_limits

    host_python = python312()
    if host_python is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs a Python 3.12 for the lease rehearsal (the host's version).")
        pytest.skip("no Python 3.12 here: the lease host's Python")
    if os.environ.get(HOST_VENV_VARIABLE):
        host = Path(os.environ[HOST_VENV_VARIABLE]) / "bin" / "python"
    else:
        run(host_python, "-m", "venv", tmp_path / "host")
        host = tmp_path / "host" / "bin" / "python"
        run(host, "-m", "pip", "install", "-q", "-r", HOST_REQUIREMENTS, timeout=1200)
    assert run(host, "-c", "import sys; print(sys.version)").stdout.startswith("3.12")
    assert run(host, "-c", "import keras", check=False).returncode != 0  # as on the host
    assert run(host, "-c", "import tensorflow", check=False).returncode != 0

    env = {k: v for k, v in os.environ.items() if k not in ("KERAS_BACKEND", "PYTHONPATH")}
    try:
        prepared = run(sys.executable, "-m", "training.lease", "prepare", "--out", LEASE_DIR,
                       env=env, check=False)
        assert "a lease call copies" in prepared.stdout, prepared.stderr
        if prepared.returncode != 0:
            # A large release in zoo/ is over the limit: prepare names what to leave behind
            # (the leave-behind itself is tested on a repository of its own, not here,
            # where other tests read zoo/), and without it the call fits.
            from training.lease.prepare import LIMIT_BYTES, travelling_files
            from training.lease.travel import largest_releases

            files = travelling_files(ROOT, ROOT / LEASE_DIR)
            behind = largest_releases(files, sum(s for _, s in files) - LIMIT_BYTES)
            assert behind and all(b in prepared.stderr for b in behind), prepared.stderr
            kept = sum(s for n, s in files if not any(n.startswith(b + "/") for b in behind))
            assert kept <= LIMIT_BYTES

        bundle = tmp_path / "bundle"
        started = run(host, "-m", "training.lease", "run", "--model", "gresnet20", "--minutes", "5",
                      "--max-steps", "6", "--batch-size", "32", "--out", bundle,
                      "--lease-dir", LEASE_DIR, env=env)
        assert "checked against the manifest" in started.stdout
    finally:
        shutil.rmtree(ROOT / LEASE_DIR, ignore_errors=True)
    check_limits(bundle)
    metrics = json.loads((bundle / "metrics.json").read_text())
    assert metrics["status"] == "finished" and metrics["steps_done"] == metrics["steps"] == 6
    assert metrics["training_ended_before_deadline"]
    assert any(w.startswith("keras-") for w in metrics["wheels_unpacked"])  # carried Keras
    assert metrics["versions"]["jax"] == HOST_JAX

    released = run(sys.executable, "-m", "training.release", bundle, "--out", tmp_path / "release",
                   env={**env, "KERAS_BACKEND": "jax"})
    record = json.loads((tmp_path / "release" / "gresnet20.cifar10" / "metrics.json").read_text())
    assert record["test_accuracy"] == round(metrics["test_accuracy"], 4), released.stdout
    assert record["gpu_test_accuracy"] == metrics["test_accuracy"]
