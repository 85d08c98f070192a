"""A Torch7 pre-activation CIFAR ResNet into ``PreActResNet(depth)`` / ``GResNet(depth)``.

fb.resnet.torch's ``preresnet.lua`` for basic units, He's ``resnet-pre-act.lua`` for
bottleneck units, with the ``nn.Sequential`` tree flattened into index paths as a
PyTorch state dict of that tree names it: ``0.weight`` (stem), ``1.0.0.weight`` (stage 1,
unit 1, its shared BN), ``1.0.2.0.0.weight`` (that unit's first convolution),
``1.1.0.0.0.weight`` (unit 2's BN), ``4.*`` (final BN), ``8.{weight,bias}`` (the
classifier).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import keras
import numpy as np

from keras_gated.state_dicts import (
    Target,
    blocks_by_stage,
    bn_targets,
    conv_kernel_target,
    conv_layout,
    get_layer,
    head_targets,
)
from keras_gated.registry.families import Converter


def fbresnet_keys(model: keras.Model) -> Iterator[tuple[str, Target]]:
    """Torch7 ``nn.Sequential`` index paths of ``PreActResNet`` / ``GResNet``.

    A unit that shares its pre-activation is ``Sequential(BN, ReLU, ConcatTable(branch,
    shortcut), CAddTable)`` with branch ``(conv, BN, ReLU, conv[, BN, ReLU, conv])`` and a
    projection shortcut ``Sequential(conv)``; any other unit is ``Sequential(ConcatTable(
    branch, Identity), CAddTable)`` with branch ``(BN, ReLU, conv, BN, ReLU, conv, ...)``.
    """
    yield from conv_kernel_target("0.weight", get_layer(model, "stem_conv"))
    units = blocks_by_stage(model)
    for stage, unit, layer in units:
        prefix = f"{stage}.{unit - 1}"
        shared = layer.changes_shape or layer.share_preactivation
        if shared:
            yield from bn_targets(f"{prefix}.0", layer.norms[0])
            branch = f"{prefix}.2.0"
            steps = []  # conv, BN, ReLU, conv, ...
            for i, conv in enumerate(layer.convs):
                if i:
                    steps += [("bn", layer.norms[i]), ("relu", None)]
                steps.append(("conv", conv))
        else:
            branch = f"{prefix}.0.0"
            steps = []
            for i, conv in enumerate(layer.convs):
                steps += [("bn", layer.norms[i]), ("relu", None), ("conv", conv)]
        for index, (kind, part) in enumerate(steps):
            if kind == "conv":
                yield f"{branch}.{index}.weight", Target(part.kernel, conv_layout)
            elif kind == "bn":
                yield from bn_targets(f"{branch}.{index}", part)
        if layer.projection is not None:
            yield f"{prefix}.2.1.0.weight", Target(layer.projection.kernel, conv_layout)
    last_stage = units[-1][0] if units else 3
    yield from bn_targets(f"{last_stage + 1}", get_layer(model, "final_bn"))
    yield from head_targets(f"{last_stage + 5}", model)


def infer_shortcut(arrays: Mapping[str, Any]) -> str:
    """``"projection"`` if stage 2's first unit has a 1×1 shortcut conv, else
    ``"zeropad"``."""
    return "projection" if "2.0.2.1.0.weight" in arrays else "zeropad"


def fbresnet_kwargs(arrays: Mapping[str, Any]) -> dict:
    """The shortcut type, and the classifier's size from the last top-level bias."""
    kwargs = {"shortcut": infer_shortcut(arrays)}
    # Top-level index paths only (``8.bias``); a named key such as ``fc.bias`` is not this
    # layout's and is reported as unknown when the keys are matched.
    biases = [k for k in arrays if k.count(".") == 1 and k.endswith(".bias")
              and k.split(".")[0].isdigit() and np.ndim(arrays[k]) == 1]
    head = max(biases, key=lambda k: int(k.split(".")[0]), default=None)
    if head is not None:
        kwargs["classes"] = int(arrays[head].shape[0])
    return kwargs


FBRESNET = Converter("fbresnet", ("preactresnet", "gresnet"), fbresnet_keys, fbresnet_kwargs,
                     description="a Torch7 pre-act CIFAR ResNet (fb.resnet.torch)")
