"""Every family builds, runs a forward pass, and saves/loads back identically
(.keras, safe_mode=True). Small configurations keep this fast; sizes are covered by
test_parameter_counts.py. The 1000-layer round trips are slow tests."""

import sys

import numpy as np
import pytest

import keras_gated as kg
from tests.helpers import assert_round_trip, images, to_numpy

CIFAR = (32, 32, 3)
FAMILIES = [
    ("plainnet", lambda: kg.PlainNet(4), (28, 28, 1)),
    ("gplainnet", lambda: kg.GPlainNet(4), (28, 28, 1)),
    ("resnetfc", lambda: kg.ResNetFC(4), (28, 28, 1)),
    ("gresnetfc", lambda: kg.GResNetFC(4), (28, 28, 1)),
    ("highwayfc", lambda: kg.HighwayFC(4), (28, 28, 1)),
    ("preactresnet", lambda: kg.PreActResNet20(), CIFAR),
    ("preactresnet_zeropad", lambda: kg.PreActResNet(14, shortcut="zeropad"), CIFAR),
    ("gresnet", lambda: kg.GResNet20(), CIFAR),
    ("gresnet_bottleneck", lambda: kg.GResNet(11, block="bottleneck"), CIFAR),
    ("wrn", lambda: kg.WideResNet(1, 2, dropout=0.3), CIFAR),
    ("gwrn", lambda: kg.GWideResNet(1, 2, dropout=0.3), CIFAR),
    ("gwrn_nobn", lambda: kg.GWideResNet(1, 1, batch_norm=False), CIFAR),
    ("highwaynet", lambda: kg.HighwayNet(), CIFAR),
    ("highwaynet_full_variant", lambda: kg.HighwayNet(variant="full"), CIFAR),
    ("resnet50", lambda: kg.ResNet50(input_shape=(64, 64, 3)), (64, 64, 3)),
    ("highwaynet50", lambda: kg.HighwayNet50(variant="full", input_shape=(64, 64, 3)), (64, 64, 3)),
]


# HighwayNet50's save/load round trip takes ~20 s per backend: `-m slow` (its parameter
# count is still checked in the default run, tests/models/test_parameter_counts.py).
SLOW_FAMILIES = ("highwaynet50",)


@pytest.mark.parametrize("build, shape", [
    pytest.param(*f[1:], marks=pytest.mark.slow) if f[0] in SLOW_FAMILIES else f[1:] for f in FAMILIES
], ids=[f[0] for f in FAMILIES])
def test_forward_and_round_trip(build, shape, tmp_path):
    model = build()
    x = images(2, shape)
    probs = to_numpy(model(x, training=False))
    assert probs.shape == (2, model.get_layer("predictions").units)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-4)
    assert np.all(np.isfinite(probs))
    assert_round_trip(model, x, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("constructor", [kg.PreActResNet1001, kg.GResNet1001])
def test_1000_layer_round_trip(constructor, tmp_path):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        model = constructor(input_shape=(8, 8, 3))
        assert_round_trip(model, images(1, (8, 8, 3)), tmp_path)
    finally:
        sys.setrecursionlimit(limit)
