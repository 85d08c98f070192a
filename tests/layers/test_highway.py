"""Highway layers: the merge's forward and backward pass (supplementary eq. 2-4), the
four variants of Greff et al. 2017 Table 1a, T -> 0 carries x, serialization."""

import keras
import numpy as np
import pytest

from keras_gated.layers import HIGHWAY_VARIANTS, Highway, HighwayMerge, merge_inputs_for
from tests.support.helpers import assert_round_trip, to_numpy, trainable_count


def _vjp(fn, inputs, cotangent):
    """Gradients of sum(fn(*inputs) * cotangent) w.r.t. every input, on any backend."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        tensors = [tf.constant(a) for a in inputs]
        with tf.GradientTape() as tape:
            for t in tensors:
                tape.watch(t)
            y = fn(*tensors)
        return [g.numpy() for g in tape.gradient(y, tensors, output_gradients=tf.constant(cotangent))]
    if backend == "jax":
        import jax

        _, vjp = jax.vjp(fn, *inputs)
        return [np.asarray(g) for g in vjp(cotangent)]
    if backend == "torch":
        import torch

        tensors = [torch.tensor(a, requires_grad=True) for a in inputs]
        fn(*tensors).backward(torch.tensor(cotangent))
        return [t.grad.numpy() for t in tensors]
    pytest.skip(f"no gradient helper for backend {backend}")


def _random(shape, seed, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype("float32")


def test_coupled_merge_forward_is_eq_3():
    x, h = _random((4, 6), 0), _random((4, 6), 1)
    t = _random((4, 6), 2, 0.0, 1.0)
    y = to_numpy(HighwayMerge("coupled")([x, h, t]))
    np.testing.assert_allclose(y, h * t + x * (1 - t), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "variant, formula",
    [
        ("full", lambda x, h, t, c: h * t + x * c),
        ("carry_only", lambda x, h, t, c: h + x * c),
        ("transform_only", lambda x, h, t, c: h * t + x),
    ],
)
def test_variant_merges_follow_table_1a(variant, formula):
    x, h = _random((3, 5), 0), _random((3, 5), 1)
    t, c = _random((3, 5), 2, 0, 1), _random((3, 5), 3, 0, 1)
    named = {"x": x, "h": h, "t": t, "c": c}
    inputs = [named[n] for n in merge_inputs_for(variant)]
    y = to_numpy(HighwayMerge(variant)(inputs))
    np.testing.assert_allclose(y, formula(x, h, t, c), rtol=1e-6, atol=1e-6)


def test_merge_backward_pass_is_eq_4():
    """dH = T·dy, dT = (H − x)·dy, dx = (1 − T)·dy (supplementary eq. 4)."""
    x, h = _random((4, 7), 0), _random((4, 7), 1)
    t = _random((4, 7), 2, 0.0, 1.0)
    dy = _random((4, 7), 3)
    merge = HighwayMerge("coupled")
    dx, dh, dt = _vjp(lambda a, b, c: merge([a, b, c]), [x, h, t], dy)
    np.testing.assert_allclose(dh, t * dy, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dt, (h - x) * dy, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx, (1 - t) * dy, rtol=1e-5, atol=1e-6)


def test_merge_rejects_wrong_number_of_inputs():
    with pytest.raises(ValueError, match="takes 4 inputs"):
        HighwayMerge("full")([np.zeros((1, 2))] * 3)


def test_unknown_variant_names_the_allowed_ones():
    with pytest.raises(ValueError, match="coupled, full, carry_only, transform_only"):
        Highway(variant="residual")


@pytest.mark.parametrize("kind, shape", [("dense", (3, 8)), ("conv", (2, 6, 6, 4))])
def test_transform_gate_closed_carries_input_exactly(kind, shape):
    """T -> 0 (b_T = −1e4, sigmoid underflows to 0) gives y = x for every input."""
    layer = Highway(kind, transform_bias_initializer=-1e4)
    x = _random(shape, 0)
    np.testing.assert_array_equal(to_numpy(layer(x)), x)


def test_transform_bias_starts_at_the_given_value_and_carry_bias_at_minus_it():
    layer = Highway("dense", variant="full", transform_bias_initializer=-3.0)
    layer.build((None, 5))
    np.testing.assert_array_equal(to_numpy(layer.transform_gate.bias), np.full(5, -3.0))
    np.testing.assert_array_equal(to_numpy(layer.carry_gate.bias), np.full(5, 3.0))


def test_dense_highway_output_matches_the_equation():
    layer = Highway("dense", transform_bias_initializer=-1.0)
    x = _random((4, 6), 0)
    y = to_numpy(layer(x))
    wh, bh = (to_numpy(v) for v in layer.plain.weights)
    wt, bt = (to_numpy(v) for v in layer.transform_gate.weights)
    h = np.maximum(x @ wh + bh, 0)
    t = 1 / (1 + np.exp(-(x @ wt + bt)))
    np.testing.assert_allclose(y, h * t + x * (1 - t), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "variant, gates", [("coupled", 1), ("full", 2), ("carry_only", 1), ("transform_only", 1)]
)
def test_parameter_count_per_variant(variant, gates):
    """H plus one dense (units² + units) per gate; H and T equally expressive."""
    units = 9
    layer = Highway("dense", variant=variant)
    layer.build((None, units))
    assert trainable_count(layer) == (1 + gates) * (units * units + units)


def test_conv_highway_parameter_count():
    c, k = 5, 3
    layer = Highway("conv", kernel_size=k)
    layer.build((None, 8, 8, c))
    assert trainable_count(layer) == 2 * (k * k * c * c + c)


@pytest.mark.parametrize("variant", HIGHWAY_VARIANTS)
def test_round_trip_every_variant(variant, tmp_path):
    inputs = keras.Input((6, 6, 3))
    outputs = Highway("conv", variant=variant, name="hw")(inputs)
    model = keras.Model(inputs, outputs)
    loaded = assert_round_trip(model, _random((2, 6, 6, 3), 0), tmp_path)
    assert loaded.get_layer("hw").variant == variant


def test_rank_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="rank 4"):
        Highway("conv")(np.zeros((2, 5), "float32"))


def test_highway_fc_takes_the_papers_search_dimensions():
    """H's activation (ReLU or tanh) and the weights' initializer reach every highway layer;
    the default is He initialisation, as in Srivastava et al. 2015 §4.1."""
    import keras_gated as kg

    default = kg.HighwayFC(depth=2)
    for i in (1, 2):
        config = default.get_layer(f"block{i}").get_config()
        assert config["activation"] == "relu"
        assert config["kernel_initializer"]["class_name"] == "HeNormal"
    tanh = kg.HighwayFC(depth=2, activation="tanh", kernel_initializer="glorot_uniform")
    config = tanh.get_layer("block2").get_config()
    assert config["activation"] == "tanh"
    assert config["kernel_initializer"]["class_name"] == "GlorotUniform"
    x = np.full((2, 28, 28, 1), 200.0, "float32")
    assert np.all(np.isfinite(to_numpy(tanh(x))))
