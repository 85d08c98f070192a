"""Export for serving: ONNX (every backend), TensorFlow SavedModel and TFLite, with the
in-model preprocessing, outputs within 1e-4 of Keras. The default run covers one net
per family for ONNX and the pre-act net for the TensorFlow formats; `-m slow` runs
every family in every format."""

from __future__ import annotations

import importlib.util

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.export import BACKENDS, export, with_constant_preprocessing
from tests.support.helpers import to_numpy

BACKEND = keras.backend.backend()
FAMILIES = {  # one small net per family, and an input for it
    "gresnet20": {},
    "gwrn_16_2": {},
    "gresnetfc2": {},
    "highwaynet": {},
    "gresnet50": {"input_shape": (32, 32, 3), "classes": 5},
    "highwaynet50": {"input_shape": (32, 32, 3), "classes": 5},
}
DEFAULT_ONNX = ("gresnet20", "gresnetfc2")
ONNX_NEEDS = {"tensorflow": "tf2onnx", "jax": "jax2onnx", "torch": "onnxscript"}


def _needs(module: str):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install 'keras-gated[onnx]')")


def _model_and_input(name):
    model = kg.create_model(name, **FAMILIES[name])
    x = np.random.default_rng(0).uniform(0, 255, (2, *model.input_shape[1:])).astype("float32")
    return model, x, to_numpy(model(x))


def _onnx_outputs(path, x):
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path))
    assert [i.name for i in session.get_inputs()] == ["images"]  # no stray constant inputs
    return session.run(None, {"images": x})[0]


def _check_onnx(name, tmp_path):
    _needs("onnxruntime")
    _needs(ONNX_NEEDS[BACKEND])
    model, x, expected = _model_and_input(name)
    if BACKEND == "jax" and any(isinstance(layer, keras.layers.MaxPooling2D) for layer in model.layers):
        with pytest.raises(ValueError, match="KERAS_BACKEND=tensorflow or torch"):
            export(model, tmp_path / f"{name}.onnx", "onnx")
        assert not (tmp_path / f"{name}.onnx").exists()
        return
    path = export(model, tmp_path / f"{name}.onnx", "onnx")
    np.testing.assert_allclose(_onnx_outputs(path, x), expected, atol=1e-4, rtol=1e-4)


@pytest.mark.needs("onnxruntime")
@pytest.mark.parametrize("name", DEFAULT_ONNX)
def test_onnx_export_matches_keras(name, tmp_path):
    _check_onnx(name, tmp_path)


@pytest.mark.slow
@pytest.mark.needs("onnxruntime")
@pytest.mark.parametrize("name", sorted(set(FAMILIES) - set(DEFAULT_ONNX)))
def test_onnx_export_matches_keras_every_family(name, tmp_path):
    _check_onnx(name, tmp_path)


def _check_tf_formats(name, tmp_path):
    if BACKEND != "tensorflow":
        pytest.skip("SavedModel and TFLite are checked on the TensorFlow backend")
    import tensorflow as tf

    model, x, expected = _model_and_input(name)
    saved = export(model, tmp_path / "saved", "savedmodel")
    loaded = tf.saved_model.load(str(saved))  # keep it referenced while serving
    np.testing.assert_allclose(np.asarray(loaded.serve(x)), expected, atol=1e-4)
    tflite = export(model, tmp_path / f"{name}.tflite", "tflite")
    interpreter = tf.lite.Interpreter(str(tflite))
    index = interpreter.get_input_details()[0]["index"]
    interpreter.resize_tensor_input(index, list(x.shape))
    interpreter.allocate_tensors()
    interpreter.set_tensor(index, x)
    interpreter.invoke()
    got = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_savedmodel_and_tflite_match_keras(tmp_path):
    _check_tf_formats("gresnet20", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(FAMILIES) - {"gresnet20"}))
def test_savedmodel_and_tflite_every_family(name, tmp_path):
    _check_tf_formats(name, tmp_path)


def test_constant_preprocessing_is_the_same_function_without_variables():
    model, x, expected = _model_and_input("gresnet20")
    exported = with_constant_preprocessing(model)
    assert "Normalization" not in {type(layer).__name__ for layer in exported.layers}
    assert [v.path for v in exported.weights] == [v.path for v in model.weights]
    np.testing.assert_allclose(to_numpy(exported(x)), expected, atol=1e-6)


def test_export_refuses_a_backend_that_cannot_and_an_existing_path(tmp_path):
    model = kg.GResNetFC(2)
    unsupported = [f for f, backends in BACKENDS.items() if BACKEND not in backends]
    for format in unsupported:
        with pytest.raises(ValueError, match="KERAS_BACKEND="):
            export(model, tmp_path / "x", format)
    (tmp_path / "taken.onnx").write_text("keep me")
    with pytest.raises(FileExistsError):
        export(model, tmp_path / "taken.onnx", "onnx")
    assert (tmp_path / "taken.onnx").read_text() == "keep me"
