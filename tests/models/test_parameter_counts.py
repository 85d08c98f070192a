"""Trainable parameter counts against the reference numbers (architectures.md, the issue)
and against closed-form counts written here, never numbers read off a built model."""

import numpy as np
import pytest

import keras_gated as kg
from tests.helpers import images, to_numpy, trainable_count


def basic_preact_count(widths, units, classes=10, projection=True, gated=False):
    """Closed form of a basic pre-act CIFAR net (stem 16, final BN, dense head)."""
    total, cin = 27 * 16, 16
    for stage, co in enumerate(widths):
        for u in range(units):
            total += 2 * cin + 9 * cin * co + 2 * co + 9 * co * co + (1 if gated else 0)
            if projection and (cin != co):
                total += cin * co
            cin = co
    return total + 2 * cin + cin * classes + classes


REFERENCE = [
    # (constructor, kwargs, trainable parameters, source)
    (kg.WideResNet, dict(n=4, k=10), 36_479_194, "WRN-28-10, architectures.md §2"),
    (kg.GWideResNet, dict(n=4, k=10), 36_479_206, "G-WRN-28-10 = WRN + 3n, §3"),
    (kg.WideResNet, dict(n=2, k=4), 2_748_890, "WRN-16-4, §2 table"),
    (kg.WideResNet, dict(n=8, k=1), 758_362, "WRN-52-1, §2 table"),
    (kg.PreActResNet164, {}, 1_703_258, "§4, osmr table"),
    (kg.PreActResNet110, {}, 1_730_522, "§4, type B (projection)"),
    (kg.PreActResNet110, dict(shortcut="zeropad"), 1_727_962, "§4, type A (zeropad)"),
    (kg.HighwayNet, {}, 2_256_838, "§5, 19-layer CIFAR highway net"),
    (kg.ResNet50, {}, 25_557_032, "torchvision ResNet-50"),
]


@pytest.mark.parametrize("constructor, kwargs, expected, source", REFERENCE,
                         ids=[f"{c.__name__}{k}" for c, k, _, _ in REFERENCE])
def test_reference_parameter_counts(constructor, kwargs, expected, source):
    assert trainable_count(constructor(**kwargs)) == expected, source


def test_wide_resnet_100_classes():
    assert trainable_count(kg.WideResNet(4, 10, classes=100)) == 36_536_884


@pytest.mark.parametrize("constructor, expected", [
    (kg.PreActResNet1001, 10_327_706),  # architectures.md §4
    (kg.GResNet1001, 10_327_706 + 3 * 111),  # one k per unit
])
@pytest.mark.slow
def test_1000_layer_nets_count_and_run(constructor, expected):
    model = constructor(input_shape=(8, 8, 3))
    assert trainable_count(model) == expected
    # training=True: BN normalises with batch statistics. In inference mode an untrained
    # net uses the initial moving statistics (mean 0, variance 1), so each of the 333
    # units adds variance to the residual stream and the logits overflow to NaN.
    out = to_numpy(model(images(2, (8, 8, 3)), training=True))
    assert out.shape == (2, 10) and np.all(np.isfinite(out))


def test_highwaynet50_within_two_percent_of_resnet50():
    count = trainable_count(kg.HighwayNet50())
    assert abs(count - 25_557_032) / 25_557_032 < 0.02
    assert trainable_count(kg.HighwayNet50(variant="full")) == count


@pytest.mark.parametrize("depth", [20, 56])
@pytest.mark.parametrize("gated", [False, True])
def test_basic_preact_resnets_by_formula(depth, gated):
    model = (kg.GResNet if gated else kg.PreActResNet)(depth)
    assert trainable_count(model) == basic_preact_count((16, 32, 64), (depth - 2) // 6, gated=gated)


def test_gated_wide_resnet_by_formula():
    k = 2
    assert trainable_count(kg.GWideResNet(2, k)) == basic_preact_count(
        (16 * k, 32 * k, 64 * k), 2, gated=True
    )


# --- fully-connected nets -------------------------------------------------------------
def _stem_and_head(units=50, inputs=784, classes=10):
    return inputs * units + units + units * classes + classes


def _dot_bn(units=50):
    return units * units + 2 * units  # Dense without bias, BN γ and β


@pytest.mark.parametrize("depth", [2, 10, 50])
def test_fc_nets_by_formula(depth):
    base = _stem_and_head()
    assert trainable_count(kg.PlainNet(depth)) == base + depth * _dot_bn()
    assert trainable_count(kg.GPlainNet(depth)) == base + depth * (_dot_bn() + 1)
    assert trainable_count(kg.ResNetFC(depth)) == base + depth * _dot_bn()
    assert trainable_count(kg.GResNetFC(depth)) == base + depth * _dot_bn() + depth // 2
    assert trainable_count(kg.HighwayFC(depth)) == base + depth * 2 * (50 * 50 + 50)


def test_fc_width_and_classes():
    assert trainable_count(kg.PlainNet(3, units=20, classes=5)) == (
        784 * 20 + 20 + 3 * (20 * 20 + 40) + 20 * 5 + 5
    )
