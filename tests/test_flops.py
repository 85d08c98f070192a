"""MAC counting against closed forms."""

import keras
import pytest

import keras_gated as kg
from keras_gated.flops import ASSUMED_GPU_FLOPS, ComputeEstimate, count_macs


def test_fc_net_macs_are_the_dense_products():
    # stem 784x50, 2 middle layers 50x50, head 50x10
    assert count_macs(kg.PlainNet(2)) == 784 * 50 + 2 * 50 * 50 + 50 * 10


def test_conv_macs_closed_form():
    inputs = keras.Input((8, 8, 3))
    x = keras.layers.Conv2D(4, 3, padding="same")(inputs)
    x = keras.layers.Conv2D(6, 1, strides=2)(x)
    model = keras.Model(inputs, x)
    assert count_macs(model) == 8 * 8 * 4 * 9 * 3 + 4 * 4 * 6 * 4


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="slow in eager JAX; TF pass only")
def test_resnet50_is_4_1_gmacs():
    assert count_macs(kg.ResNet50()) == pytest.approx(4.09e9, rel=0.01)


def test_nested_units_are_counted():
    model = kg.GResNet20()
    assert count_macs(model) == pytest.approx(40.8e6, rel=0.01)  # ResNet-20: ~41 M MACs


def test_estimate_is_labelled_and_consistent():
    est = ComputeEstimate(forward_macs=10**9, examples_per_epoch=1000, epochs=2)
    assert est.training_flops == 6 * 10**9 * 1000 * 2
    assert est.gpu_hours == pytest.approx(est.training_flops / ASSUMED_GPU_FLOPS / 3600)
    assert est.describe().startswith("estimate:") and "assumed" in est.describe()
    # The printed factors multiply to the printed total (forward + backward, 2 FLOPs per MAC).
    text = est.describe()
    assert "× 3 (forward + backward) × 2 FLOPs per MAC × 1,000 images × 2 epochs" in text
    assert "= 1.20e+13 FLOPs" in text
