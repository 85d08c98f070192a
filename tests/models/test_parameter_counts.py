"""Trainable parameter counts of every registered model against the papers' numbers and
against closed-form counts written here, never numbers read off a built model.

``EXPECTED`` must hold every registered name (or ``EXEMPT`` must say why not): a family
that registers a model without a count fails ``test_every_registered_model_has_a_count``.
A family may declare its counts in its spec (``Family.parameter_counts``); they join
``EXPECTED``.
"""

import numpy as np
import pytest

import keras_gated as kg
from keras_gated.registry.families import parameter_counts
from keras_gated.registry import get_model_entry
from tests.support.helpers import images, to_numpy, trainable_count


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


def wrn_count(n, widen_factor, gated=False):
    return basic_preact_count((16 * widen_factor, 32 * widen_factor, 64 * widen_factor), n,
                              gated=gated)


# --- fully-connected nets -------------------------------------------------------------
def _stem_and_head(units=50, inputs=784, classes=10):
    return inputs * units + units + units * classes + classes


def _dot_bn(units=50):
    return units * units + 2 * units  # Dense without bias, BN γ and β


FC_COUNTS = {
    "plainnet": lambda depth: _stem_and_head() + depth * _dot_bn(),
    "gplainnet": lambda depth: _stem_and_head() + depth * (_dot_bn() + 1),
    "resnetfc": lambda depth: _stem_and_head() + depth * _dot_bn(),
    "gresnetfc": lambda depth: _stem_and_head() + depth * _dot_bn() + depth // 2,
    "highwayfc": lambda depth: _stem_and_head() + depth * 2 * (50 * 50 + 50),
}

# Registered name -> trainable parameters for 10 (CIFAR, MNIST) or 1000 (ImageNet) classes.
EXPECTED = {
    # Pre-act ResNets: basic units by formula; ResNet-110 type B (projection) 1,730,522,
    # ResNet-164 1,703,258 and ResNet-1001 10,327,706 as published (He et al. 2016 code);
    # a G-ResNet adds one k per unit (3 stages × units).
    **{f"preactresnet{d}": basic_preact_count((16, 32, 64), (d - 2) // 6) for d in (20, 32, 44, 56)},
    **{f"gresnet{d}": basic_preact_count((16, 32, 64), (d - 2) // 6, gated=True)
       for d in (20, 32, 44, 56)},
    "preactresnet110": 1_730_522,
    "gresnet110": 1_730_522 + 3 * 18,
    "preactresnet164": 1_703_258,
    "gresnet164": 1_703_258 + 3 * 18,
    "preactresnet1001": 10_327_706,
    "gresnet1001": 10_327_706 + 3 * 111,
    # Wide ResNets: WRN-28-10 36,479,194, WRN-16-4 2,748,890, WRN-52-1 758,362 (Zagoruyko
    # & Komodakis 2016), which the formula reproduces (test_wide_resnet_formula_*).
    **{f"{prefix}_{6 * n + 4}_{w}": wrn_count(n, w, gated=prefix == "gwrn")
       for prefix in ("wrn", "gwrn") for n, w in ((2, 2), (2, 4), (2, 8), (4, 10), (6, 4),
                                                  (6, 10), (8, 1))},
    **{f"{prefix}{depth}": count(depth)
       for prefix, count in FC_COUNTS.items() for depth in (2, 10, 20, 50, 100)},
    "highwaynet": 2_256_838,  # 19-layer CIFAR Highway net (Srivastava et al. 2015)
    "resnet50": 25_557_032,  # torchvision ResNet-50
    "gresnet50": 25_557_032 + 16,  # one k per bottleneck block
    # Greff et al. 2017 Table 1b: the widths reduced to stay within 1 % of ResNet-50.
    "highwaynet50": 25_386_870,
    "highwaynet50_full": 25_386_870,
    **parameter_counts(),  # the families' own declarations
}
# Registered names whose count is not checked, with the reason.
EXEMPT: dict[str, str] = {}


def test_every_registered_model_has_a_count():
    missing = [n for n in kg.list_models() if n not in EXPECTED and n not in EXEMPT]
    assert not missing, f"add the trainable parameter count of {missing} to EXPECTED"
    assert not set(EXPECTED) - set(kg.list_models()), "EXPECTED names an unregistered model"


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if get_model_entry(n).slow else n
    for n in kg.list_models() if n in EXPECTED
])
def test_registered_parameter_count(name):
    assert trainable_count(kg.create_model(name)) == EXPECTED[name]


REFERENCE = [
    # (constructor, kwargs, trainable parameters, source) for sizes checked in the
    # default run (the registered WRN-28-10 and ResNet-164 are slow entries).
    (kg.WideResNet, dict(n=4, widen_factor=10), 36_479_194, "WRN-28-10 (Zagoruyko & Komodakis)"),
    (kg.GWideResNet, dict(n=4, widen_factor=10), 36_479_206, "G-WRN-28-10 = WRN + 3n"),
    (kg.PreActResNet164, {}, 1_703_258, "pre-act ResNet-164 (He et al. 2016)"),
    (kg.PreActResNet110, {}, 1_730_522, "ResNet-110 type B (projection)"),
    (kg.PreActResNet110, dict(shortcut="zeropad"), 1_727_962, "ResNet-110 type A (zeropad)"),
    (kg.ResNet50, {}, 25_557_032, "torchvision ResNet-50"),
]


@pytest.mark.parametrize("constructor, kwargs, expected, source", REFERENCE,
                         ids=[f"{c.__name__}{k}" for c, k, _, _ in REFERENCE])
def test_reference_parameter_counts(constructor, kwargs, expected, source):
    assert trainable_count(constructor(**kwargs)) == expected, source


def test_wide_resnet_formula_reproduces_the_published_counts():
    assert wrn_count(4, 10) == 36_479_194 and wrn_count(2, 4) == 2_748_890
    assert wrn_count(8, 1) == 758_362


def test_wide_resnet_100_classes():
    assert trainable_count(kg.WideResNet(4, 10, classes=100)) == 36_536_884


@pytest.mark.parametrize("constructor, expected", [
    (kg.PreActResNet1001, 10_327_706),  # He et al. 2016, 111 bottleneck units per stage
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


def test_highwaynet50_within_one_percent_of_resnet50():
    model = kg.HighwayNet50()
    count = trainable_count(model)
    assert count == EXPECTED["highwaynet50"]
    assert len(kg.gate_values(model)) == 16  # one transform gate per bottleneck block
    assert abs(count - 25_557_032) / 25_557_032 < 0.01
    # The former name of variant="final_relu" still builds it, with a warning.
    with pytest.warns(DeprecationWarning, match="variant='final_relu'"):
        full = kg.HighwayNet50(variant="full")
    assert full.name == "highwaynet50_full" and trainable_count(full) == count
    assert full.get_layer("conv2_block1").full_relu


def test_gated_wide_resnet_by_formula():
    k = 2
    assert trainable_count(kg.GWideResNet(2, k)) == basic_preact_count(
        (16 * k, 32 * k, 64 * k), 2, gated=True
    )


def test_50_layer_fc_nets_by_formula():
    """The registered 50- and 100-layer FC nets are slow entries: one depth runs here."""
    for constructor, prefix in ((kg.PlainNet, "plainnet"), (kg.GPlainNet, "gplainnet"),
                                (kg.ResNetFC, "resnetfc"), (kg.GResNetFC, "gresnetfc"),
                                (kg.HighwayFC, "highwayfc")):
        assert trainable_count(constructor(50)) == FC_COUNTS[prefix](50)


def test_fc_width_and_classes():
    assert trainable_count(kg.PlainNet(3, units=20, classes=5)) == (
        784 * 20 + 20 + 3 * (20 * 20 + 40) + 20 * 5 + 5
    )


def test_plain_net_without_batch_norm_is_the_highway_papers_plain_net():
    """Highway Networks Fig. 1: 71-unit plain layers H(W x + b) with He init, no BN, each
    with as many parameters as a 50-unit Highway layer."""
    plain = kg.PlainNet(10, units=71, batch_norm=False, activation="tanh")
    assert trainable_count(plain) == 784 * 71 + 71 + 10 * (71 * 71 + 71) + 71 * 10 + 10
    assert not any("bn" in layer.name for layer in plain.layers)
    assert plain.get_layer("layer1_tanh").get_config()["activation"] == "tanh"
    kernel = to_numpy(plain.get_layer("layer5_dense").kernel)
    assert abs(np.std(kernel) - np.sqrt(2 / 71)) < 0.2 * np.sqrt(2 / 71)  # He normal
    # One 71-unit plain layer has as many parameters as one 50-unit highway layer (H and T).
    per_plain_layer = trainable_count(kg.PlainNet(11, units=71, batch_norm=False)) - trainable_count(plain)
    per_highway_layer = trainable_count(kg.HighwayFC(11)) - trainable_count(kg.HighwayFC(10))
    assert abs(per_plain_layer - per_highway_layer) / per_highway_layer < 0.01
    with pytest.raises(ValueError, match="batch_norm=False"):
        kg.PlainNet(10, activation="tanh")
