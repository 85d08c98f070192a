"""Residual Gates: u = g(k)·f_r(x) + s(x) and u = g(k)·f(x) + (1 − g(k))·x."""

import keras
import numpy as np
import pytest

from keras_gated.layers import ResidualGate
from tests.support.helpers import to_numpy


def _pair(shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape).astype("float32"), rng.normal(size=shape).astype("float32")


def test_k_starts_at_one_and_is_not_regularized():
    gate = ResidualGate()
    gate.build([(None, 4), (None, 4)])
    assert float(to_numpy(gate.k)) == 1.0
    assert gate.k.shape == ()
    assert gate.k.regularizer is None
    assert gate.losses == []


@pytest.mark.parametrize(
    "gate, k, g", [("relu", 0.7, 0.7), ("relu", -0.5, 0.0), ("identity", -0.5, -0.5),
                   ("sigmoid", 0.3, 1 / (1 + np.exp(-0.3)))]
)
def test_residual_form(gate, k, g):
    layer = ResidualGate(gate, form="residual", k_initializer=k)
    branch, shortcut = _pair()
    np.testing.assert_allclose(
        to_numpy(layer([branch, shortcut])), g * branch + shortcut, rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize("gate, k, g", [("relu", 0.25, 0.25), ("identity", 2.0, 2.0)])
def test_plain_form(gate, k, g):
    layer = ResidualGate(gate, form="plain", k_initializer=k)
    f, x = _pair()
    np.testing.assert_allclose(
        to_numpy(layer([f, x])), g * f + (1 - g) * x, rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize("gate", ["relu", "identity"])
@pytest.mark.parametrize("form", ["residual", "plain"])
def test_g_zero_gives_exactly_the_shortcut(gate, form):
    layer = ResidualGate(gate, form=form)
    branch, shortcut = _pair(seed=3)
    layer([branch, shortcut])
    layer.k.assign(layer.removal_k())
    np.testing.assert_array_equal(to_numpy(layer([branch, shortcut])), shortcut)


def test_sigmoid_gate_cannot_be_removed():
    layer = ResidualGate("sigmoid")
    with pytest.raises(ValueError, match="sigmoid"):
        layer.removal_k()


def test_bad_arguments_name_the_allowed_values():
    with pytest.raises(ValueError, match="relu, identity, sigmoid"):
        ResidualGate("tanh")
    with pytest.raises(ValueError, match="residual, plain"):
        ResidualGate(form="highway")


def test_round_trip(tmp_path):
    a, b = keras.Input((4,)), keras.Input((4,))
    model = keras.Model([a, b], ResidualGate("identity", form="plain", k_initializer=0.3)([a, b]))
    branch, shortcut = _pair()
    x = [branch, shortcut]
    expected = to_numpy(model(x))
    path = tmp_path / "gate.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(to_numpy(loaded(x)), expected, rtol=1e-6)
    assert loaded.layers[-1].gate == "identity" and loaded.layers[-1].form == "plain"
