"""torchvision's (and timm's) ``resnet50`` state dict into ``ResNet50`` / ``GResNet50``:
``conv1``, ``bn1``, ``layer1.0.conv1`` … ``layer4.2.bn3``, ``layerN.0.downsample.{0,1}``,
``fc``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import keras

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


def torchvision_keys(model: keras.Model) -> Iterator[tuple[str, Target]]:
    """torchvision / timm ``resnet50`` names of ``ResNet50`` / ``GResNet50``."""
    yield from conv_kernel_target("conv1.weight", get_layer(model, "stem_conv"))
    yield from bn_targets("bn1", get_layer(model, "stem_bn"))
    for stage, block, layer in blocks_by_stage(model):  # stages conv2..conv5 = layer1..4
        prefix = f"layer{stage - 1}.{block - 1}"
        for i, (conv, bn) in enumerate(zip(layer.convs, layer.norms), start=1):
            yield f"{prefix}.conv{i}.weight", Target(conv.kernel, conv_layout)
            yield from bn_targets(f"{prefix}.bn{i}", bn)
        if layer.projection is not None:
            yield f"{prefix}.downsample.0.weight", Target(layer.projection.kernel, conv_layout)
            yield from bn_targets(f"{prefix}.downsample.1", layer.projection_bn)
    yield from head_targets("fc", model)


def torchvision_kwargs(arrays: Mapping[str, Any]) -> dict:
    """The classifier's size, from ``fc.bias``."""
    return {"classes": int(arrays["fc.bias"].shape[0])} if "fc.bias" in arrays else {}


TORCHVISION = Converter(
    "torchvision", ("resnet50", "gresnet50"), torchvision_keys, torchvision_kwargs,
    description="torchvision / timm resnet50",
)
