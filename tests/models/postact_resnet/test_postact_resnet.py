"""The original (post-activation) CIFAR ResNet and He et al. 2016's Table 1 shortcut
variants (``keras_gated.models.postact_resnet``): shapes, parameter counts, names, the
gate bias, the dropout shortcut, saving. ``test_postact_resnet_torch.py`` checks each
variant's equation against a PyTorch net.
"""

from __future__ import annotations

import numpy as np
import pytest

import keras_gated as kg
from keras_gated.model_args import parse_model_args
from keras_gated.models.postact_resnet import SHORTCUT_VARIANTS, PostActUnit
from keras_gated.models.postact_resnet import parameter_count
from keras_gated.registry import get_model_entry
from tests.support.helpers import assert_round_trip, images, to_numpy, trainable_count

DEPTH = 14  # n = 2: a same-shape unit and a shape-changing one in every stage but the first
GATED = ("exclusive_gating", "shortcut_only_gating")


# -- shapes, counts, names ------------------------------------------------------------
@pytest.mark.parametrize("shortcut", SHORTCUT_VARIANTS)
def test_shapes(shortcut):
    model = kg.PostActResNet(DEPTH, shortcut=shortcut)
    assert model.name == ("postactresnet14" if shortcut == "original"
                          else f"postactresnet14_{shortcut}")
    x = images(2)
    assert to_numpy(model(x, training=False)).shape == (2, 10)
    for stage, (size, width) in enumerate(((32, 16), (16, 32), (8, 64)), start=1):
        for unit in (1, 2):
            unit_output = model.get_layer(f"stage{stage}_unit{unit}").output
            assert unit_output.shape == (None, size, size, width)
    backbone = kg.PostActResNet(DEPTH, shortcut=shortcut, include_top=False)
    assert to_numpy(backbone(x, training=False)).shape == (2, 8, 8, 64)


def test_the_papers_parameter_counts():
    """He et al. 2015 Table 6 (option A): ResNet-20/32/44/56/110 have 0.27/0.46/0.66/
    0.85/1.7 M parameters."""
    for depth, millions in ((20, 0.27), (32, 0.46), (44, 0.66), (56, 0.85)):
        assert round(parameter_count(depth) / 1e6, 2) == millions
    assert round(parameter_count(110) / 1e6, 1) == 1.7 and parameter_count(110) == 1_727_962


def test_variant_parameters_by_hand():
    """What each Table 1 shortcut adds to the original ResNet-110 (widths 16/32/64, 18
    units per stage; option A adds nothing)."""
    base = parameter_count(110)
    units = [(16, 16)] * 18 + [(16, 32)] + [(32, 32)] * 17 + [(32, 64)] + [(64, 64)] * 17
    gates = sum(cin * c + c for cin, c in units)  # a 1×1 conv with bias b_g per unit
    assert parameter_count(110, "exclusive_gating") == base + gates
    assert parameter_count(110, "shortcut_only_gating") == base + gates
    assert parameter_count(110, "conv1x1") == base + sum(cin * c + 2 * c for cin, c in units)
    for scaled in ("constant_scaling", "dropout"):
        assert parameter_count(110, scaled) == base
    # Option B adds a 1×1 conv + BN at the two stage transitions.
    assert parameter_count(110, downsample="projection") == base + (16 * 32 + 64) + (32 * 64 + 128)


@pytest.mark.parametrize("shortcut", SHORTCUT_VARIANTS)
@pytest.mark.parametrize("downsample", ["zeropad", "projection"])
def test_built_model_has_the_closed_form_count(shortcut, downsample):
    model = kg.PostActResNet(DEPTH, shortcut=shortcut, downsample=downsample)
    assert trainable_count(model) == parameter_count(DEPTH, shortcut, downsample)


def test_each_table1_row_is_a_registered_name():
    names = kg.list_models("postactresnet110*")
    variants = sorted(SHORTCUT_VARIANTS[1:])
    assert names == ["postactresnet110", *(f"postactresnet110_{v}" for v in variants)]
    for name in names:
        entry = get_model_entry(name)
        assert entry.default_recipe == "preact_cifar" and entry.slow
        assert entry.kwargs == ({"depth": 110} if name == "postactresnet110" else
                                {"depth": 110, "shortcut": name.split("postactresnet110_")[1]})
        assert not entry.supports_dropout  # a recipe's dropout never reaches the shortcut


def test_the_model_args_of_the_table1_rows():
    """``--model-arg`` values as ``python -m training.train`` parses them."""
    args = parse_model_args(["gate_bias=0", "downsample=projection"])
    model = kg.PostActResNet(DEPTH, shortcut="shortcut_only_gating", **args)
    unit = model.get_layer("stage2_unit1")
    assert unit.gate_bias == 0.0 and unit.projection is not None
    np.testing.assert_array_equal(to_numpy(unit.gate_conv.bias), 0.0)
    args = parse_model_args(["shortcut=constant_scaling", "residual_scale=1.0"])
    assert kg.PostActResNet(DEPTH, **args).get_layer("stage1_unit1").residual_scale == 1.0


@pytest.mark.parametrize("shortcut", GATED)
def test_gate_bias_starts_at_b_g(shortcut):
    for bias in (-6.0, -3.0):
        model = kg.PostActResNet(DEPTH, shortcut=shortcut, gate_bias=bias)
        units = [layer for layer in model.layers if isinstance(layer, PostActUnit)]
        assert len(units) == 6
        for unit in units:
            np.testing.assert_array_equal(to_numpy(unit.gate_conv.bias), bias)


def test_dropout_shortcut_keeps_the_shortcut_or_drops_it():
    """Training: y = ReLU(F + m⊙h), m in {0, 1} with P(m = 1) = 1 − p (no rescaling)."""
    unit = PostActUnit(16, shortcut="dropout", shortcut_dropout=0.5, seed=3)
    x = np.abs(np.random.default_rng(1).standard_normal((4, 8, 8, 16))).astype("float32") + 0.1
    y = to_numpy(unit(x, training=True))
    f = to_numpy(unit.residual_function(x, training=True))
    kept, dropped = np.maximum(f + x, 0), np.maximum(f, 0)
    is_kept = np.isclose(y, kept, atol=1e-5)
    assert np.all(is_kept | np.isclose(y, dropped, atol=1e-5))
    assert 0.4 < is_kept[kept != dropped].mean() < 0.6
    np.testing.assert_allclose(to_numpy(unit(x, training=False)),
                               np.maximum(to_numpy(unit.residual_function(x)) + 0.5 * x, 0),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shortcut", SHORTCUT_VARIANTS)
def test_round_trip(shortcut, tmp_path):
    model = kg.PostActResNet(8, shortcut=shortcut, downsample="projection", gate_bias=-2.0,
                             shortcut_scale=0.25, residual_scale=1.0, shortcut_dropout=0.3)
    loaded = assert_round_trip(model, images(2), tmp_path)
    unit = loaded.get_layer("stage2_unit1")
    assert (unit.shortcut, unit.downsample, unit.gate_bias, unit.shortcut_scale,
            unit.residual_scale, unit.shortcut_dropout) == (shortcut, "projection", -2.0, 0.25,
                                                            1.0, 0.3)


def test_errors_name_the_allowed_values():
    with pytest.raises(ValueError, match="downsample"):
        kg.PostActResNet(DEPTH, shortcut="projection")
    with pytest.raises(ValueError, match="exclusive_gating"):
        kg.PostActResNet(DEPTH, shortcut="gating")
    with pytest.raises(ValueError, match="zeropad"):
        kg.PostActResNet(DEPTH, downsample="B")
    with pytest.raises(ValueError, match="6n\\+2"):
        kg.PostActResNet(16)


@pytest.mark.slow
@pytest.mark.parametrize("name", kg.list_models("postactresnet110*"))
def test_resnet110_rows_build_and_run(name):
    model = kg.create_model(name)
    assert trainable_count(model) == parameter_count(**get_model_entry(name).kwargs)
    out = to_numpy(model(images(2), training=True))
    assert out.shape == (2, 10) and np.all(np.isfinite(out))
