"""The gated building blocks: Highway layers, Residual Gates and pre-activation units,
all ``Block``s (their shared base class)."""

from keras_gated.layers.batch_norm import BatchNormalization
from keras_gated.layers.block import Block
from keras_gated.layers.highway import (
    HIGHWAY_VARIANTS,
    Highway,
    HighwayMerge,
    merge_inputs_for,
)
from keras_gated.layers.highway_bottleneck import HighwayBottleneck
from keras_gated.layers.preact_unit import BLOCK_TYPES, SHORTCUT_TYPES, PreActUnit
from keras_gated.layers.residual_gate import GATE_FORMS, GATE_FUNCTIONS, ResidualGate
from keras_gated.layers.resnet_bottleneck import ResNetBottleneck

__all__ = [
    "BLOCK_TYPES",
    "GATE_FORMS",
    "GATE_FUNCTIONS",
    "HIGHWAY_VARIANTS",
    "SHORTCUT_TYPES",
    "BatchNormalization",
    "Block",
    "Highway",
    "HighwayBottleneck",
    "HighwayMerge",
    "PreActUnit",
    "ResNetBottleneck",
    "ResidualGate",
    "merge_inputs_for",
]
