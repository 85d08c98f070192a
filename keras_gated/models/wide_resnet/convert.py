"""The functional parameter dict of the Wide ResNet authors' PyTorch code into
``WideResNet(n, widen_factor)`` / ``GWideResNet``: ``conv0``,
``group0.block0.{bn0,conv0,bn1,conv1,convdim}``, ``bn``, ``fc``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import keras

from keras_gated.state_dicts import (
    Target,
    blocks_by_stage,
    bn_targets,
    conv_kernel_target,
    get_layer,
    head_targets,
)
from keras_gated.registry.families import Converter


def wrn_keys(model: keras.Model) -> Iterator[tuple[str, Target]]:
    """The WRN authors' functional names of ``WideResNet`` / ``GWideResNet``."""
    yield from conv_kernel_target("conv0", get_layer(model, "stem_conv"))
    for stage, unit, layer in blocks_by_stage(model):
        prefix = f"group{stage - 1}.block{unit - 1}"
        for i, (conv, bn) in enumerate(zip(layer.convs, layer.norms)):
            yield from bn_targets(f"{prefix}.bn{i}", bn)
            yield from conv_kernel_target(f"{prefix}.conv{i}", conv)
        if layer.projection is not None:
            yield from conv_kernel_target(f"{prefix}.convdim", layer.projection)
    yield from bn_targets("bn", get_layer(model, "final_bn"))
    yield from head_targets("fc", model)


def wrn_kwargs(arrays: Mapping[str, Any]) -> dict:
    """The classifier's size, from ``fc.bias``."""
    return {"classes": int(arrays["fc.bias"].shape[0])} if "fc.bias" in arrays else {}


WRN = Converter("wrn", ("wrn_", "gwrn_"), wrn_keys, wrn_kwargs,
                description="the WRN authors' functional PyTorch parameters")
