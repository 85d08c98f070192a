"""PyTorch re-implementations of the reference networks, written for the tests from each
reference's published design and parameter names (no reference code is copied):

* ``TorchvisionResNet50``: torchvision's ``resnet50`` ("v1.5"), module names ``conv1``,
  ``bn1``, ``layer1``..``layer4`` of ``Bottleneck`` (``conv1..3``, ``bn1..3``,
  ``downsample``), ``fc``.
* ``wrn_params`` / ``wrn_forward``: the WRN authors' functional PyTorch net, a flat dict
  ``conv0``, ``group{g}.block{b}.{bn0,conv0,bn1,conv1,convdim}``, ``bn``, ``fc``.
* ``fb_preact_resnet``: the Torch7 pre-act CIFAR nets (fb.resnet.torch ``preresnet.lua``
  basic units, He's ``resnet-pre-act.lua`` bottleneck units) as the same ``nn.Sequential``
  tree (ConcatTable / CAddTable), so the state-dict keys are its index paths.

Every builder fills weights *and* BN running statistics at random, so a wrong padding,
a wrong pre-activation or a transposed kernel changes the logits.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def randomize_(module: nn.Module, seed: int = 0) -> nn.Module:
    """Random conv/dense weights (He scale) and random BN affine and running statistics."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                fan_in = m.weight[0].numel()
                m.weight.normal_(0, (2.0 / fan_in) ** 0.5, generator=generator)
                if m.bias is not None:
                    m.bias.uniform_(-0.1, 0.1, generator=generator)
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5, generator=generator)
                m.bias.uniform_(-0.2, 0.2, generator=generator)
                m.running_mean.uniform_(-0.2, 0.2, generator=generator)
                m.running_var.uniform_(0.5, 1.5, generator=generator)
    return module.eval()


# -- torchvision ResNet-50 -----------------------------------------------------------
class Bottleneck(nn.Module):
    def __init__(self, inplanes: int, planes: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.downsample = None
        if stride != 1 or inplanes != planes * 4:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes * 4, 1, stride=stride, bias=False), nn.BatchNorm2d(planes * 4)
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class TorchvisionResNet50(nn.Module):
    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        inplanes = 64
        for index, (planes, blocks, stride) in enumerate(
            [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], start=1
        ):
            layers = []
            for b in range(blocks):
                layers.append(Bottleneck(inplanes, planes, stride if b == 0 else 1))
                inplanes = planes * 4
            setattr(self, f"layer{index}", nn.Sequential(*layers))
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        for index in range(1, 5):
            x = getattr(self, f"layer{index}")(x)
        return self.fc(x.mean((2, 3)))


# -- the WRN authors' functional net -----------------------------------------------
def wrn_params(n: int, k: int, num_classes: int = 10, seed: int = 0) -> dict[str, torch.Tensor]:
    """The flat parameter dict of WRN-(6n+4)-k, random weights and BN statistics."""
    g = torch.Generator().manual_seed(seed)

    def conv(ni, no, size):
        return torch.randn(no, ni, size, size, generator=g) * (2.0 / (ni * size * size)) ** 0.5

    def bn(c, prefix):
        return {
            f"{prefix}.weight": torch.rand(c, generator=g) + 0.5,
            f"{prefix}.bias": (torch.rand(c, generator=g) - 0.5) * 0.4,
            f"{prefix}.running_mean": (torch.rand(c, generator=g) - 0.5) * 0.4,
            f"{prefix}.running_var": torch.rand(c, generator=g) + 0.5,
        }

    widths = [16 * k, 32 * k, 64 * k]
    params = {"conv0": conv(3, 16, 3)}
    ni = 16
    for group, no in enumerate(widths):
        for block in range(n):
            base = f"group{group}.block{block}"
            cin = ni if block == 0 else no
            params.update(bn(cin, f"{base}.bn0"))
            params[f"{base}.conv0"] = conv(cin, no, 3)
            params.update(bn(no, f"{base}.bn1"))
            params[f"{base}.conv1"] = conv(no, no, 3)
            if cin != no:
                params[f"{base}.convdim"] = conv(cin, no, 1)
        ni = no
    params.update(bn(widths[2], "bn"))
    params["fc.weight"] = torch.randn(num_classes, widths[2], generator=g) * 0.1
    params["fc.bias"] = torch.randn(num_classes, generator=g) * 0.1
    return params


def _wrn_bn(x, params, base):
    return F.batch_norm(x, params[f"{base}.running_mean"], params[f"{base}.running_var"],
                        params[f"{base}.weight"], params[f"{base}.bias"], training=False)


def wrn_forward(x, params, n: int):
    def block(x, base, stride):
        o1 = F.relu(_wrn_bn(x, params, f"{base}.bn0"))
        y = F.conv2d(o1, params[f"{base}.conv0"], stride=stride, padding=1)
        o2 = F.relu(_wrn_bn(y, params, f"{base}.bn1"))
        z = F.conv2d(o2, params[f"{base}.conv1"], stride=1, padding=1)
        if f"{base}.convdim" in params:
            return z + F.conv2d(o1, params[f"{base}.convdim"], stride=stride)
        return z + x

    x = F.conv2d(x, params["conv0"], padding=1)
    for group, stride in enumerate((1, 2, 2)):
        for b in range(n):
            x = block(x, f"group{group}.block{b}", stride if b == 0 else 1)
    x = F.relu(_wrn_bn(x, params, "bn"))
    return F.linear(x.mean((2, 3)), params["fc.weight"], params["fc.bias"])


# -- Torch7 pre-act CIFAR ResNets as nn.Sequential trees ------------------------------
class ConcatTable(nn.ModuleList):
    def forward(self, x):
        return [m(x) for m in self]


class CAddTable(nn.Module):
    def forward(self, xs):
        return xs[0] + xs[1]


class ZeroPadShortcut(nn.Module):
    """Type A: SpatialAveragePooling(1, 1, s, s), then Concat(Identity, MulConstant(0))."""

    def __init__(self, stride: int):
        super().__init__()
        self.stride = stride

    def forward(self, x):
        x = x[:, :, :: self.stride, :: self.stride]
        return torch.cat([x, x * 0], dim=1)


def _shortcut(ni: int, no: int, stride: int, shortcut_type: str) -> nn.Module:
    if ni != no and shortcut_type == "B":
        return nn.Sequential(nn.Conv2d(ni, no, 1, stride=stride, bias=False))
    if ni != no:
        return ZeroPadShortcut(stride)
    return nn.Identity()


def _unit(ni: int, no: int, stride: int, shared: bool, bottleneck: bool, shortcut_type: str) -> nn.Sequential:
    if bottleneck:
        m = no // 4
        shapes = [(ni, m, 1, stride, 0), (m, m, 3, 1, 1), (m, no, 1, 1, 0)]
    else:
        shapes = [(ni, no, 3, stride, 1), (no, no, 3, 1, 1)]
    branch = []
    for i, (cin, cout, size, s, pad) in enumerate(shapes):
        if i or not shared:
            branch += [nn.BatchNorm2d(cin), nn.ReLU()]
        branch.append(nn.Conv2d(cin, cout, size, stride=s, padding=pad, bias=False))
    table = ConcatTable([nn.Sequential(*branch), _shortcut(ni, no, stride, shortcut_type)])
    if shared:
        return nn.Sequential(nn.BatchNorm2d(ni), nn.ReLU(), table, CAddTable())
    return nn.Sequential(table, CAddTable())


class Flatten(nn.Module):
    def forward(self, x):
        return x.flatten(1)


def fb_preact_resnet(depth: int, shortcut_type: str = "B", num_classes: int = 10) -> nn.Sequential:
    """fb.resnet.torch ``preresnet.lua`` (basic, depth 6n+2) or He's ``resnet-pre-act.lua``
    (bottleneck, depth 9n+2, depth >= 164), CIFAR branch."""
    bottleneck = depth >= 164
    n = (depth - 2) // (9 if bottleneck else 6)
    widths = (64, 128, 256) if bottleneck else (16, 32, 64)
    stages, ni = [], 16
    for stage, no in enumerate(widths):
        units = []
        for u in range(n):
            # preresnet.lua: the first unit of every stage is "both_preact"; He's code
            # shares the pre-activation in the dimension-increasing unit (also the first).
            units.append(_unit(ni, no, 2 if stage and u == 0 else 1, u == 0, bottleneck, shortcut_type))
            ni = no
        stages.append(nn.Sequential(*units))
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False), *stages,
        nn.BatchNorm2d(ni), nn.ReLU(), nn.AdaptiveAvgPool2d(1), Flatten(), nn.Linear(ni, num_classes),
    )
