"""``k_init``: the start value of every Residual Gate's k, a constructor argument of every
gated family, recorded in the layer configs and kept by a save/load round trip."""

from __future__ import annotations

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.layers import PreActUnit
from tests.support.helpers import assert_round_trip, images, to_numpy


def k_values(model: keras.Model) -> list[float]:
    return [float(to_numpy(w)) for w in model.weights if w.name == "k"]


@pytest.mark.parametrize(
    "build, blocks",
    [
        (lambda k: kg.GResNet20(k_init=k), 9),
        (lambda k: kg.GResNet(29, k_init=k), 9),
        (lambda k: kg.GWideResNet(1, 1, k_init=k), 3),
        (lambda k: kg.GPlainNet(2, k_init=k), 2),
        (lambda k: kg.GResNetFC(2, k_init=k), 1),
        (lambda k: kg.GResNet50(k_init=k, input_shape=(32, 32, 3)), 16),
    ],
)
def test_every_k_starts_at_k_init(build, blocks):
    assert k_values(build(0.5)) == [0.5] * blocks  # (1.0, the default: test_default_is_one)


def test_default_is_one():
    assert set(k_values(kg.GResNet20())) == {1.0}


def test_k_init_is_recorded_and_survives_a_round_trip(tmp_path):
    model = kg.GResNet20(k_init=0.5)
    assert model.get_layer("stage1_unit1").get_config()["k_initializer"] == 0.5
    loaded = assert_round_trip(model, images(1), tmp_path)
    assert k_values(loaded) == [0.5] * 9
    rebuilt = keras.Model.from_config(model.get_config())  # fresh weights, from the config
    assert k_values(rebuilt) == [0.5] * 9


def test_preact_unit_passes_k_initializer_to_its_gate():
    unit = PreActUnit(8, gate="relu", k_initializer=0.25)
    unit(np.zeros((1, 4, 4, 8), "float32"))
    assert float(to_numpy(unit.residual_gate.k)) == 0.25
    config = unit.get_config()
    assert PreActUnit.from_config(config).k_initializer == 0.25
    initializer = PreActUnit(8, gate="relu", k_initializer=keras.initializers.Constant(2.0))
    assert initializer.get_config()["k_initializer"]["class_name"] == "Constant"
