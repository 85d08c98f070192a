"""After one ``predict``, a batch of another image size or channel count is refused as a
fresh model refuses it: one sentence naming the expected and the given shape (a
compiled predict function, traced again with relaxed dimensions, would answer)."""

from __future__ import annotations

import numpy as np
import pytest

import keras_gated as kg
from tests.support.helpers import images


@pytest.fixture(scope="module")
def cifar_model():
    model = kg.create_model("preactresnet20")
    model.predict(images(2, (32, 32, 3)), verbose=0)  # the compiled path, traced once
    return model


@pytest.mark.parametrize("shape", [(2, 28, 28, 1), (2, 16, 16, 3)])
@pytest.mark.parametrize("method", ["predict", "predict_on_batch", "call", "evaluate"])
def test_another_input_shape_is_refused_naming_both_shapes(cifar_model, shape, method):
    x = np.zeros(shape, "float32")
    with pytest.raises(ValueError) as refused:
        if method == "predict":
            cifar_model.predict(x, verbose=0)
        elif method == "predict_on_batch":
            cifar_model.predict_on_batch(x)
        elif method == "evaluate":
            cifar_model.compile(loss="sparse_categorical_crossentropy")
            cifar_model.evaluate(x, np.zeros(shape[0], "int32"), verbose=0)
        else:
            cifar_model(x)
    message = str(refused.value)
    assert "(None, 32, 32, 3)" in message and str(shape) in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_the_right_shape_still_predicts_after_a_refusal(cifar_model):
    with pytest.raises(ValueError):
        cifar_model.predict(np.zeros((2, 16, 16, 3), "float32"), verbose=0)
    out = cifar_model.predict(images(3, (32, 32, 3)), verbose=0)
    assert out.shape == (3, 10) and np.isfinite(out).all()


def test_a_fresh_model_refuses_with_the_same_sentence():
    model = kg.create_model("preactresnet20")
    with pytest.raises(ValueError, match=r"takes inputs of shape \(None, 32, 32, 3\)"):
        model.predict(np.zeros((2, 16, 16, 3), "float32"), verbose=0)


def test_a_model_with_free_image_size_takes_any_size():
    model = kg.create_model("preactresnet20", input_shape=(None, None, 3))
    model.predict(images(1, (32, 32, 3)), verbose=0)
    assert model.predict(images(1, (16, 16, 3)), verbose=0).shape == (1, 10)
