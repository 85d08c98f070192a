"""Initial weights are drawn independently per layer, as the reference implementations
draw them, and reproducibly under ``keras.utils.set_random_seed``."""

import hashlib

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.layers import Highway
from keras_gated.layers.initializers import independent
from keras_gated.registry import get_model_entry


def kernels(model):
    """(path, shape, sha256) of every 2-D and 4-D weight (dense and conv kernels)."""
    return [(w.path, tuple(w.shape), hashlib.sha256(np.asarray(w).tobytes()).hexdigest())
            for w in model.weights if len(w.shape) in (2, 4)]


def same_shaped_equal(model):
    seen, equal = {}, []
    for path, shape, digest in kernels(model):
        if (shape, digest) in seen:
            equal.append((seen[(shape, digest)], path))
        seen.setdefault((shape, digest), path)
    return equal


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if get_model_entry(n).slow else n
    for n in kg.list_models()
])
def test_no_two_same_shaped_kernels_of_a_fresh_model_are_equal(name):
    keras.utils.set_random_seed(0)
    equal = same_shaped_equal(kg.create_model(name))
    assert not equal, f"{name}: kernels start identical: {equal[:3]}"


def test_the_flagship_starts_from_independent_kernels():
    keras.utils.set_random_seed(0)
    wrn = kg.GWideResNet(4, 10)
    assert len(kernels(wrn)) == 29  # 28 conv kernels (stem, 24 in units, 3 projections), head
    assert not same_shaped_equal(wrn)


def test_gresnet20_starts_from_independent_kernels():
    keras.utils.set_random_seed(0)
    assert not same_shaped_equal(kg.GResNet20())


def test_initial_weights_are_reproducible_under_set_random_seed():
    keras.utils.set_random_seed(7)
    first = kernels(kg.GResNet20())
    keras.utils.set_random_seed(7)
    assert kernels(kg.GResNet20()) == first
    keras.utils.set_random_seed(8)
    assert [d for *_, d in kernels(kg.GResNet20())] != [d for *_, d in first]


def test_a_highway_layer_starts_its_transform_gate_apart_from_its_transform():
    keras.utils.set_random_seed(0)
    layer = Highway()
    layer.build((None, 16))
    h = np.asarray(layer.plain.kernel)
    t = np.asarray(layer.transform_gate.kernel)
    assert h.shape == t.shape and not np.array_equal(h, t)


def test_independent_gives_a_fresh_draw_and_keeps_an_explicit_seed():
    init = keras.initializers.HeNormal()
    a = np.asarray(independent(init)((4, 4)))
    b = np.asarray(independent(init)((4, 4)))
    assert not np.array_equal(a, b)
    assert np.array_equal(np.asarray(init((4, 4))), np.asarray(init((4, 4))))  # Keras's own rule
    seeded = keras.initializers.HeNormal(seed=3)
    assert independent(seeded) is seeded
    assert isinstance(independent("glorot_uniform"), keras.initializers.GlorotUniform)
