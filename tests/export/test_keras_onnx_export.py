"""Keras's habit: ``model.export("x.onnx", format="onnx")`` on a released model gives a
graph that takes raw pixels only and runs."""

import numpy as np
import pytest

import keras_gated as kg

pytestmark = pytest.mark.needs("onnxruntime")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime runs the exported graph")


def test_keras_onnx_export_of_a_released_model_runs(tmp_path, backend):
    from keras_gated.export import ONNX_MODULES

    for module in ONNX_MODULES[backend]:  # what the export itself checks for first
        pytest.importorskip(module, reason=f"pip install 'keras-gated[onnx]' installs {module}")
    model = kg.create_model("gresnet20.cifar10")
    path = tmp_path / "x.onnx"
    model.export(str(path), format="onnx", verbose=False)
    session = ort.InferenceSession(str(path))
    assert [i.name for i in session.get_inputs()] == ["images"]  # no preprocessing constants
    x = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype("float32")
    out = session.run(None, {"images": x})[0]
    np.testing.assert_allclose(out, np.asarray(model.predict(x, verbose=0)), atol=1e-5)
    assert [layer.__class__.__name__ for layer in model.layers][1] == "Normalization"
