"""Plain PyTorch peers of the benchmarked architectures (what a user would write by hand),
so the same run measures keras-gated against them. Not part of the library."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class Gate(nn.Module):
    """u = relu(k)·branch + shortcut, k a scalar started at 1."""

    def __init__(self):
        super().__init__()
        self.k = nn.Parameter(torch.ones(()))

    def forward(self, branch, shortcut):
        return F.relu(self.k) * branch + shortcut


class PreActBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, share: bool, gated: bool):
        super().__init__()
        self.share = share or cin != cout or stride != 1
        self.bn1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.proj = nn.Conv2d(cin, cout, 1, stride, bias=False) if (cin != cout or stride != 1) else None
        self.gate = Gate() if gated else None

    def forward(self, x):
        a = F.relu(self.bn1(x))
        r = self.conv2(F.relu(self.bn2(self.conv1(a))))
        s = a if self.share else x
        if self.proj is not None:
            s = self.proj(s)
        return self.gate(r, s) if self.gate is not None else r + s


class CifarPreActNet(nn.Module):
    """Pre-act ResNet (widths 16/32/64) or Wide ResNet (16k/32k/64k), optionally gated."""

    def __init__(self, units: int, widths=(16, 32, 64), gated: bool = False, classes: int = 10,
                 share_stage_preactivation: bool = True):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        blocks, cin = [], 16
        for stage, width in enumerate(widths):
            for u in range(units):
                blocks.append(PreActBlock(cin, width, 2 if stage and u == 0 else 1,
                                          share_stage_preactivation and u == 0, gated))
                cin = width
        self.blocks = nn.Sequential(*blocks)
        self.bn = nn.BatchNorm2d(cin)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(F.relu(self.bn(x)).mean((2, 3)))


class FCNet(nn.Module):
    """Residual Gates' FC net: a 50-unit stem, then Dense-BN-ReLU layers (gated residual pairs)."""

    def __init__(self, depth: int, gated: bool = True, units: int = 50, classes: int = 10):
        super().__init__()
        self.stem = nn.Linear(784, units)
        self.layers = nn.ModuleList(
            nn.Sequential(nn.Linear(units, units, bias=False), nn.BatchNorm1d(units, eps=1e-3), nn.ReLU())
            for _ in range(depth)
        )
        self.gates = nn.ModuleList(Gate() for _ in range(depth // 2)) if gated else None
        self.fc = nn.Linear(units, classes)

    def forward(self, x):
        x = self.stem(x.flatten(1))
        for i in range(0, len(self.layers), 2):
            r = self.layers[i + 1](self.layers[i](x))
            x = self.gates[i // 2](r, x) if self.gates is not None else r + x
        return self.fc(x)


def build_peer(name: str, classes: int = 10) -> tuple[nn.Module, tuple[int, ...]]:
    """(network, input shape CHW) of the peer of registry model ``name``."""
    if name.startswith(("gresnet", "preactresnet")) and not name.startswith("gresnetfc"):
        depth = int(name.removeprefix("gresnet").removeprefix("preactresnet"))
        return CifarPreActNet((depth - 2) // 6, gated=name.startswith("g"), classes=classes), (3, 32, 32)
    if name.startswith(("gwrn_", "wrn_")):
        depth, k = (int(v) for v in name.split("_")[1:3])
        widths = (16 * k, 32 * k, 64 * k)
        return CifarPreActNet((depth - 4) // 6, widths, gated=name.startswith("g"), classes=classes,
                              share_stage_preactivation=False), (3, 32, 32)
    if name.startswith(("gresnetfc", "resnetfc")):
        depth = int(name.removeprefix("gresnetfc").removeprefix("resnetfc"))
        return FCNet(depth, gated=name.startswith("g"), classes=classes), (1, 28, 28)
    raise ValueError(f"No PyTorch peer for {name!r}.")
