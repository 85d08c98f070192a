"""He et al. 2016's Table 1 shortcut variants (``keras_gated.models.postact_resnet``)
against a PyTorch net written here from the paper's equations (§3.1, Fig. 2) and He et
al. 2015's CIFAR architecture (§4.2), with the usual torch parameter names (``conv1``,
``bn1``, ``layer1.0.conv1``, ``shortcut``, ``gate``, ``fc``): random weights and BN
statistics copied into the Keras model give the same logits, on every backend.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.needs("torch")
torch = pytest.importorskip("torch", reason="the reference net is written in PyTorch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import keras_gated as kg  # noqa: E402
from tests.support.helpers import to_numpy  # noqa: E402
from tests.support.torch_references import randomize_  # noqa: E402

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
