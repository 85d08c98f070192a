"""PyTorch-backend smoke test: every model family builds, runs and round-trips under
KERAS_BACKEND=torch. Runs in a subprocess (the backend is fixed at import); skipped when
torch is not installed (`pip install torch`)."""

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
    from keras_gated.registry import get_model_entry

    # One quick registered model per constructor (a new family is included when it
    # registers), then the options and layers no quick registered model uses.
    builds, seen = {}, set()
    for name in kg.list_models():
        entry = get_model_entry(name)
        if not entry.slow and entry.constructor not in seen:
            seen.add(entry.constructor)
            builds[name] = lambda name=name: kg.create_model(name)
    builds.update({
        "gresnet_zeropad": lambda: kg.GResNet(8, shortcut="zeropad"),
        "gresnet_bottleneck": lambda: kg.GResNet(11, block="bottleneck"),
        "gwrn_dropout": lambda: kg.GWideResNet(1, 1, dropout=0.3),
        "highwaynet50_small": lambda: kg.HighwayNet50(input_shape=(32, 32, 3), classes=10),
    })
    tmp = tempfile.mkdtemp()
    for name, build in builds.items():
        model = build()
        x = np.random.default_rng(0).uniform(0, 255, (2, *model.input_shape[1:])).astype("float32")
        y = keras.ops.convert_to_numpy(model(x, training=False))
        assert y.shape == (2, 10) and np.all(np.isfinite(y)), name
        path = os.path.join(tmp, name + ".keras")
        model.save(path)
        z = keras.ops.convert_to_numpy(keras.saving.load_model(path)(x, training=False))
        np.testing.assert_allclose(z, y, rtol=1e-5, atol=1e-5)
    model = kg.GResNet20()
    kg.remove_block(model, "stage1_unit2")
    assert kg.gate_values(model)["stage1_unit2"] == 0.0
    print("torch smoke ok:", ", ".join(builds))
    """
)


@pytest.mark.needs("torch")
@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="the torch subprocess runs once, in the TensorFlow pass of tests/run.sh",
)
def test_torch_backend_smoke():
    env = {**os.environ, "KERAS_BACKEND": "torch", "TF_CPP_MIN_LOG_LEVEL": "2"}
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=root, capture_output=True, text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    import keras_gated as kg
    from keras_gated.registry import get_model_entry

    tested = result.stdout.split("torch smoke ok: ", 1)[1].strip().split(", ")
    quick = [get_model_entry(n) for n in kg.list_models() if not get_model_entry(n).slow]
    assert {e.constructor for e in quick} <= {get_model_entry(n).constructor for n in tested
                                              if kg.is_model(n)}
