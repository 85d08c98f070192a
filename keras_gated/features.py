"""Multi-scale feature maps of the convolutional families: the backbone that detection and
segmentation heads need, in timm's (``features_only``, ``out_indices``, ``feature_info``)
and keras-hub's (``pyramid_outputs``) vocabulary.

The feature of a stage is the output of its last block (``keras_gated.layers.Block``
with that ``stage``; ``block_stages`` numbers the stages of blocks saved without one). A family may declare, in its
spec (``keras_gated.registry.families``), a layer that replaces the last stage's block
as its feature (the pre-activation nets: the final BN-ReLU, ``final_relu``, their only
normalised output, as timm does for its pre-act ResNets) and a stem feature (ResNet-50
and HighwayNet50: ``stem_relu``, reduction 2, as timm's ``resnet50`` exposes it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import keras

from keras_gated.layers.block import block_stages
from keras_gated.registry.families import feature_layer_names


@dataclass(frozen=True)
class FeatureInfo:
    """One feature map: its layer, channels and total stride (input size / map size)."""

    module: str
    num_chs: int
    reduction: int

    def to_dict(self) -> dict:
        return {"module": self.module, "num_chs": self.num_chs, "reduction": self.reduction}


def _stage_ends(model: keras.Model) -> list[str]:
    """The last block of every stage of a convolutional net, shallow to deep."""
    last: dict[int, str] = {}
    convolutional = [layer for layer in model.layers if len(layer.output.shape) == 4]
    for name, stage in block_stages(convolutional).items():  # FC blocks have no maps
        last.pop(stage, None)
        last[stage] = name
    return list(last.values())


def feature_layers(model: keras.Model) -> list[str]:
    """Names of the layers whose outputs are the model's feature maps, shallow to deep."""
    names = _stage_ends(model)
    if not names:
        raise ValueError(
            f"{model.name} has no convolutional stages (fully-connected nets have no feature "
            "maps); features_only works for the CIFAR and ImageNet convolutional families."
        )
    layer_names = [layer.name for layer in model.layers]
    stems, finals = feature_layer_names()
    stem = [name for name in layer_names if name in stems]
    final = [name for name in layer_names if name in finals]
    if final:
        names[-1] = final[-1]
    return stem[:1] + names


def feature_info(model: keras.Model) -> list[FeatureInfo]:
    """Channels and reduction of every feature map of ``model`` (built at a known size)."""
    height = model.inputs[0].shape[1]
    infos = []
    for name in feature_layers(model):
        shape = model.get_layer(name).output.shape
        reduction = int(round(height / shape[1])) if height and shape[1] else None
        infos.append(FeatureInfo(name, int(shape[-1]), reduction))
    return infos


def _check_indices(out_indices: Sequence[int], count: int) -> list[int]:
    indices = [i + count if i < 0 else i for i in out_indices]
    bad = [i for i, j in zip(out_indices, indices) if not 0 <= j < count]
    if bad:
        raise ValueError(
            f"out_indices {tuple(out_indices)} are out of range: this model has {count} feature "
            f"maps (indices 0..{count - 1})."
        )
    return indices


def features_model(model: keras.Model, out_indices: Sequence[int] | None = None, *,
                   as_dict: bool = False, name: str | None = None) -> keras.Model:
    """A model with one output per selected stage; ``model.feature_info`` describes them.

    Args:
        model: a built convolutional keras-gated model (with or without its top).
        out_indices: which feature maps (default: all; negative indices count from the end).
        as_dict: outputs as ``{"P<log2 reduction>": tensor}`` (keras-hub's pyramid levels)
            instead of a list.
    """
    infos = feature_info(model)
    indices = _check_indices(out_indices if out_indices is not None else range(len(infos)), len(infos))
    chosen = [infos[i] for i in indices]
    tensors = [model.get_layer(info.module).output for info in chosen]
    if as_dict:
        outputs = {pyramid_level(info): tensor for info, tensor in zip(chosen, tensors)}
    else:
        outputs = tensors
    inputs = model.inputs[0] if len(model.inputs) == 1 else model.inputs  # called with one array
    features = keras.Model(inputs, outputs, name=name or f"{model.name}_features")
    features.feature_info = [info.to_dict() for info in chosen]
    return features


def pyramid_level(info: FeatureInfo) -> str:
    """keras-hub's name of a feature map: ``P<log2 reduction>`` (P0 for full resolution)."""
    return f"P{int(math.log2(info.reduction))}"


def pyramid_outputs(model: keras.Model) -> dict:
    """``{"P1": tensor, ...}`` of every feature map (keras-hub's ``Backbone.pyramid_outputs``)."""
    return {pyramid_level(info): model.get_layer(info.module).output for info in feature_info(model)}
