"""The original (post-activation) CIFAR ResNet and He et al. 2016's Table 1 shortcut
variants (``keras_gated.models.postact_resnet``).

Each variant is checked against a PyTorch net written here from the paper's equations
(§3.1, Fig. 2) and He et al. 2015's CIFAR architecture, with the usual torch parameter
names (``conv1``, ``bn1``, ``layer1.0.conv1``, ``shortcut``, ``gate``, ``fc``): random
weights and BN statistics copied into the Keras model give the same logits.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import keras_gated as kg
from keras_gated.model_args import parse_model_args
from keras_gated.models.postact_resnet import SHORTCUT_VARIANTS, PostActUnit
from keras_gated.models.postact_resnet.spec import parameter_count
from keras_gated.registry import get_model_entry
from tests.helpers import assert_round_trip, images, to_numpy, trainable_count
from tests.torch_references import randomize_

DEPTH = 14  # n = 2: a same-shape unit and a shape-changing one in every stage but the first
WIDTHS = (16, 32, 64)
GATED = ("exclusive_gating", "shortcut_only_gating")

# (shortcut, extra arguments): every row of Table 1 (the b_g search is one argument).
ROWS = [
    ("original", {}),
    ("constant_scaling", {"shortcut_scale": 0.0, "residual_scale": 1.0}),  # a plain net
    ("constant_scaling", {"shortcut_scale": 0.5, "residual_scale": 1.0}),
    ("constant_scaling", {"shortcut_scale": 0.5, "residual_scale": 0.5}),  # frozen gating
    ("exclusive_gating", {"gate_bias": -6.0}),
    ("shortcut_only_gating", {"gate_bias": 0.0}),
    ("shortcut_only_gating", {"gate_bias": -6.0}),
    ("conv1x1", {}),
    ("dropout", {"shortcut_dropout": 0.5}),
]


# -- the PyTorch reference, from the equations ---------------------------------------
class TorchUnit(nn.Module):
    """y = f(β·F(x) ⊕ h(x)) of He et al. 2016 §3.1 with f = ReLU and
    F(x) = BN(conv3x3(ReLU(BN(conv3x3(x))))); h per Fig. 2 (a)-(f)."""

    def __init__(self, cin: int, cout: int, stride: int, shortcut: str, downsample: str,
                 shortcut_scale: float = 0.5, residual_scale: float = 0.5,
                 gate_bias: float = -6.0, shortcut_dropout: float = 0.5):
        super().__init__()
        self.variant, self.stride, self.cout = shortcut, stride, cout
        self.lam, self.beta, self.p = shortcut_scale, residual_scale, shortcut_dropout
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        changes = stride != 1 or cin != cout
        self.shortcut = None
        if shortcut == "conv1x1" or (changes and downsample == "projection"):
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(cout))
        self.gate = None
        if shortcut in GATED:
            self.gate = nn.Conv2d(cin, cout, 1, stride=stride, bias=True)
            nn.init.constant_(self.gate.bias, gate_bias)
        self.changes = changes

    def h(self, x):
        if self.shortcut is not None:
            return self.shortcut(x)
        if not self.changes:
            return x
        x = x[:, :, ::self.stride, ::self.stride]  # option A: subsample, zero channels after
        return F.pad(x, (0, 0, 0, 0, 0, self.cout - x.shape[1]))

    def forward(self, x):
        f = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        h = self.h(x)
        if self.variant == "constant_scaling":
            y = self.beta * f + self.lam * h
        elif self.variant == "exclusive_gating":
            g = torch.sigmoid(self.gate(x))
            y = g * f + (1 - g) * h
        elif self.variant == "shortcut_only_gating":
            y = f + (1 - torch.sigmoid(self.gate(x))) * h
        elif self.variant == "dropout":
            # Inference: the Bernoulli(1 − p) mask is replaced by its expectation.
            y = f + (1 - self.p) * h
        else:
            y = f + h
        return F.relu(y)


class TorchCifarResNet(nn.Module):
    """He et al. 2015 §4.2: conv3x3(16)-BN-ReLU, 3 stages of n units (16/32/64), global
    average pooling, fully-connected layer."""

    def __init__(self, depth: int, shortcut: str, downsample: str = "zeropad", **variant):
        super().__init__()
        n = (depth - 2) // 6
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        cin = 16
        for s, width in enumerate(WIDTHS, start=1):
            units = []
            for u in range(n):
                units.append(TorchUnit(cin, width, 2 if s > 1 and u == 0 else 1, shortcut,
                                       downsample, **variant))
                cin = width
            setattr(self, f"layer{s}", nn.Sequential(*units))
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(x.mean(dim=(2, 3)))


# -- copying the weights --------------------------------------------------------------
def _conv(keras_conv, torch_conv):
    keras_conv.kernel.assign(torch_conv.weight.detach().numpy().transpose(2, 3, 1, 0))
    if torch_conv.bias is not None:
        keras_conv.bias.assign(torch_conv.bias.detach().numpy())


def _bn(keras_bn, torch_bn):
    for variable, tensor in ((keras_bn.gamma, torch_bn.weight), (keras_bn.beta, torch_bn.bias),
                             (keras_bn.moving_mean, torch_bn.running_mean),
                             (keras_bn.moving_variance, torch_bn.running_var)):
        variable.assign(tensor.detach().numpy())


def copy_weights(reference: TorchCifarResNet, model) -> None:
    _conv(model.get_layer("stem_conv"), reference.conv1)
    _bn(model.get_layer("stem_bn"), reference.bn1)
    for s in (1, 2, 3):
        for u, torch_unit in enumerate(getattr(reference, f"layer{s}"), start=1):
            unit = model.get_layer(f"stage{s}_unit{u}")
            _conv(unit.conv1, torch_unit.conv1)
            _bn(unit.bn1, torch_unit.bn1)
            _conv(unit.conv2, torch_unit.conv2)
            _bn(unit.bn2, torch_unit.bn2)
            assert (unit.projection is None) == (torch_unit.shortcut is None)
            if torch_unit.shortcut is not None:
                _conv(unit.projection, torch_unit.shortcut[0])
                _bn(unit.projection_bn, torch_unit.shortcut[1])
            assert (unit.gate_conv is None) == (torch_unit.gate is None)
            if torch_unit.gate is not None:
                _conv(unit.gate_conv, torch_unit.gate)
    head = model.get_layer("predictions")
    head.kernel.assign(reference.fc.weight.detach().numpy().T)
    head.bias.assign(reference.fc.bias.detach().numpy())


def _keras(shortcut, downsample="zeropad", depth=DEPTH, **kwargs):
    return kg.PostActResNet(depth, shortcut=shortcut, downsample=downsample,
                            include_preprocessing=False, classifier_activation=None, **kwargs)


@pytest.mark.parametrize("downsample", ["zeropad", "projection"])
@pytest.mark.parametrize("shortcut, extra", ROWS, ids=[f"{s}{e}" for s, e in ROWS])
def test_each_variant_computes_its_equation(shortcut, extra, downsample):
    torch.manual_seed(0)
    reference = randomize_(TorchCifarResNet(DEPTH, shortcut, downsample, **extra))
    model = _keras(shortcut, downsample, **extra)
    copy_weights(reference, model)
    x = np.random.default_rng(0).standard_normal((3, 32, 32, 3)).astype("float32")
    with torch.no_grad():
        expected = reference(torch.from_numpy(x.transpose(0, 3, 1, 2))).numpy()
    got = to_numpy(model(x, training=False))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


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
            assert model.get_layer(f"stage{stage}_unit{unit}").output.shape == (None, size, size, width)
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
    assert names == ["postactresnet110", *(f"postactresnet110_{v}" for v in sorted(SHORTCUT_VARIANTS[1:]))]
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
