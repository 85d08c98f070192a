"""A mistyped model name on the command line is a usage error before Keras or TensorFlow
is imported: exit 2, the close matches named, in well under a second."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv", [
    ["info", "gresnet-20"],
    ["evaluate", "gresnet-20"],
    ["evaluate", "gresnet-20", "--weights", "cifar10", "--dataset", "cifar10"],
    ["export", "gresnet-20.cifar10", "--format", "onnx"],
    ["analyze", "gresnet-20.cifar10", "--dataset", "cifar10", "--out", "x"],
    ["compress", "gresnet-20.cifar10", "--dataset", "cifar10", "--macs", "0.5", "--epochs", "1",
     "--out", "x"],
])
def test_a_typo_is_refused_at_once_with_its_suggestion(argv):
    # What makes it fast is what it imports (no Keras, TensorFlow, JAX or torch: -X
    # importtime lists every import); the time bound stays loose for a busy machine.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "keras_gated.cli", *argv],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env=env,
    )
    elapsed = time.perf_counter() - started
    assert result.returncode == 2, result.stderr[-2000:]
    error = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(error) == 1 and "'gresnet-20'" in error[0] and "gresnet20" in error[0]
    imported = {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines()
                if line.startswith("import time:")}
    assert not imported & {"keras", "tensorflow", "jax", "torch"}
    assert elapsed < 5  # well under a second where a core is free; Keras alone takes longer


def test_registered_names_and_weight_ids_pass():
    from keras_gated.cli import build_parser

    args = build_parser().parse_args(["export", "gresnet20.cifar10", "--format", "onnx"])
    assert args.name == "gresnet20.cifar10"
