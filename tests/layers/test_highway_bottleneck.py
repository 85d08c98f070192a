"""HighwayBottleneck (Greff et al. 2017 Table 1b block)."""

import keras
import numpy as np
import pytest

from keras_gated.layers import HighwayBottleneck
from tests.support.helpers import assert_round_trip, to_numpy, trainable_count


def _x(shape=(2, 8, 8, 32)):
    return np.random.default_rng(0).normal(size=shape).astype("float32")


def test_parameter_count_is_two_bottlenecks_plus_projection():
    cin, out = 32, 64
    m = out // 4
    branch = cin * m + 2 * m + 9 * m * m + 2 * m + m * out + 2 * out
    block = HighwayBottleneck(out, strides=2)
    block.build((None, 8, 8, cin))
    assert trainable_count(block) == 2 * branch + cin * out + 2 * out


def test_transform_bias_is_the_last_t_bn_beta():
    block = HighwayBottleneck(32, transform_bias=-3.0)
    block.build((None, 8, 8, 32))
    np.testing.assert_array_equal(to_numpy(block.transform_gate_bias), np.full(32, -3.0))


def test_closed_gate_carries_the_input():
    block = HighwayBottleneck(32, transform_bias=-1e4)
    x = _x()
    block(x)
    np.testing.assert_array_equal(to_numpy(block(x, training=False)), x)


@pytest.mark.parametrize("full_relu", [False, True])
def test_round_trip(full_relu, tmp_path):
    inputs = keras.Input((8, 8, 32))
    model = keras.Model(inputs, HighwayBottleneck(64, strides=2, full_relu=full_relu)(inputs))
    assert_round_trip(model, _x(), tmp_path)
