"""PreActUnit: structure, closed-form parameter counts, removal identities, no-BN form."""

import keras
import numpy as np
import pytest

from keras_gated.layers import PreActUnit
from tests.support.helpers import assert_round_trip, to_numpy, trainable_count


def _x(shape=(2, 8, 8, 16), seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


def _built(unit, shape):
    unit.build(shape)
    return unit


@pytest.mark.parametrize(
    "cin, filters, strides, shortcut, expected",
    [
        # basic: BN(cin) + 3x3 cin->co + BN(co) + 3x3 co->co [+ 1x1 projection cin->co]
        (16, 16, 1, "projection", 2 * 16 + 9 * 16 * 16 + 2 * 16 + 9 * 16 * 16),
        (16, 32, 2, "projection", 2 * 16 + 9 * 16 * 32 + 2 * 32 + 9 * 32 * 32 + 16 * 32),
        (16, 32, 2, "zeropad", 2 * 16 + 9 * 16 * 32 + 2 * 32 + 9 * 32 * 32),
    ],
)
def test_basic_parameter_count(cin, filters, strides, shortcut, expected):
    unit = _built(PreActUnit(filters, strides, shortcut=shortcut), (None, 8, 8, cin))
    assert trainable_count(unit) == expected


def test_bottleneck_parameter_count():
    cin, out = 16, 64
    m = out // 4
    unit = _built(PreActUnit(out, block="bottleneck"), (None, 8, 8, cin))
    expected = 2 * cin + cin * m + 2 * m + 9 * m * m + 2 * m + m * out + cin * out
    assert trainable_count(unit) == expected


def test_gate_adds_exactly_one_parameter():
    plain = _built(PreActUnit(16), (None, 8, 8, 16))
    gated = _built(PreActUnit(16, gate="relu"), (None, 8, 8, 16))
    assert trainable_count(gated) == trainable_count(plain) + 1


@pytest.mark.parametrize("block", ["basic", "bottleneck"])
@pytest.mark.parametrize("gate", ["relu", "identity"])
def test_removed_same_shape_unit_is_the_identity(block, gate):
    unit = PreActUnit(16, block=block, gate=gate)
    x = _x()
    unit(x)
    unit.residual_gate.k.assign(0.0)
    np.testing.assert_array_equal(to_numpy(unit(x, training=False)), x)


@pytest.mark.parametrize("shortcut", ["projection", "zeropad"])
def test_removed_downsampling_unit_is_its_shortcut(shortcut):
    """g(k) = 0 leaves s(a), the shortcut of the shared pre-activation a = ReLU(BN(x))."""
    unit = PreActUnit(32, strides=2, shortcut=shortcut, gate="relu")
    x = _x()
    unit(x)
    unit.residual_gate.k.assign(0.0)
    a = np.maximum(to_numpy(unit.norms[0](x, training=False)), 0)
    if shortcut == "projection":
        expected = to_numpy(unit.projection(a))
    else:
        expected = np.pad(a[:, ::2, ::2, :], [(0, 0), (0, 0), (0, 0), (0, 16)])
    np.testing.assert_allclose(to_numpy(unit(x, training=False)), expected, rtol=1e-6, atol=1e-6)


def test_ungated_unit_is_branch_plus_identity():
    unit = PreActUnit(16)
    x = _x()
    unit(x)
    r, s = unit.branch_and_shortcut(x, training=False)
    np.testing.assert_array_equal(to_numpy(s), x)
    np.testing.assert_allclose(to_numpy(unit(x, training=False)), to_numpy(r) + x, rtol=1e-6)
    with pytest.warns(DeprecationWarning, match="branch_and_shortcut"):
        old_r, old_s = unit.residual(x, training=False)
    np.testing.assert_array_equal(to_numpy(old_r), to_numpy(r))


def test_no_batch_norm_unit_is_conv_relu_conv_relu():
    """Residual Gates Table 7: u = g(k)·ReLU(conv(ReLU(conv(x)))) + x, no BN layers."""
    unit = PreActUnit(16, batch_norm=False, gate="relu")
    x = _x()
    y = to_numpy(unit(x))
    assert unit.norms == []
    assert all(conv.use_bias for conv in unit.convs)
    r = np.maximum(to_numpy(unit.convs[0](x)), 0)
    r = np.maximum(to_numpy(unit.convs[1](r)), 0)
    np.testing.assert_allclose(y, r + x, rtol=1e-5, atol=1e-5)


def test_dropout_is_active_only_in_training():
    unit = PreActUnit(16, dropout=0.5)
    x = _x()
    inference = [to_numpy(unit(x, training=False)) for _ in range(2)]
    np.testing.assert_array_equal(inference[0], inference[1])
    assert not np.allclose(to_numpy(unit(x, training=True)), to_numpy(unit(x, training=True)))


def test_bad_arguments():
    with pytest.raises(ValueError, match="basic, bottleneck"):
        PreActUnit(16, block="wide")
    with pytest.raises(ValueError, match="projection, zeropad"):
        PreActUnit(16, shortcut="conv")
    with pytest.raises(ValueError, match="divisible by 4"):
        PreActUnit(18, block="bottleneck")
    with pytest.raises(ValueError, match="cannot reduce channels"):
        PreActUnit(8, shortcut="zeropad")(_x())


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(filters=32, strides=2, gate="relu", dropout=0.3),
        dict(filters=64, block="bottleneck", shortcut="zeropad", gate="sigmoid"),
        dict(filters=16, batch_norm=False, gate="identity"),
    ],
)
def test_round_trip(kwargs, tmp_path):
    inputs = keras.Input((8, 8, 16))
    model = keras.Model(inputs, PreActUnit(**kwargs, name="unit")(inputs))
    loaded = assert_round_trip(model, _x(), tmp_path)
    assert loaded.get_layer("unit").get_config() == model.get_layer("unit").get_config()
