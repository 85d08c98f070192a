"""PyTorch-backend smoke test: every layer family builds, runs and round-trips under
KERAS_BACKEND=torch. Runs in a subprocess (the backend is fixed at import); skipped when
torch is not installed (`pip install torch==2.13.0` on these machines)."""

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import keras
import pytest

SCRIPT = textwrap.dedent(
    """
    import os, sys, tempfile
    import numpy as np
    import keras
    assert keras.backend.backend() == "torch", keras.backend.backend()
    import keras_gated as kg
    builds = {
        "gresnetfc": (lambda: kg.GResNetFC(4), (28, 28, 1)),
        "gplainnet": (lambda: kg.GPlainNet(3), (28, 28, 1)),
        "highwayfc": (lambda: kg.HighwayFC(3), (28, 28, 1)),
        "gresnet": (lambda: kg.GResNet(8, shortcut="zeropad"), (32, 32, 3)),
        "gresnet_bottleneck": (lambda: kg.GResNet(11, block="bottleneck"), (32, 32, 3)),
        "gwrn": (lambda: kg.GWideResNet(1, 1, dropout=0.3), (32, 32, 3)),
        "highwaynet": (lambda: kg.HighwayNet(), (32, 32, 3)),
        "highwaynet50": (lambda: kg.HighwayNet50(input_shape=(32, 32, 3), classes=10), (32, 32, 3)),
    }
    tmp = tempfile.mkdtemp()
    for name, (build, shape) in builds.items():
        model = build()
        x = np.random.default_rng(0).uniform(0, 255, (2, *shape)).astype("float32")
        y = keras.ops.convert_to_numpy(model(x, training=False))
        assert y.shape == (2, 10) and np.all(np.isfinite(y)), name
        path = os.path.join(tmp, name + ".keras")
        model.save(path)
        z = keras.ops.convert_to_numpy(keras.saving.load_model(path)(x, training=False))
        np.testing.assert_allclose(z, y, rtol=1e-5, atol=1e-5)
    model = kg.GResNet20()
    kg.remove_block(model, "stage1_unit2")
    assert kg.gate_values(model)["stage1_unit2"] == 0.0
    print("torch smoke ok:", len(builds))
    """
)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="the torch subprocess runs once, in the TensorFlow pass of tests/run.sh",
)
def test_torch_backend_smoke():
    env = {**os.environ, "KERAS_BACKEND": "torch", "TF_CPP_MIN_LOG_LEVEL": "2"}
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=root, capture_output=True, text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "torch smoke ok: 8" in result.stdout
