"""The post-activation bottleneck block of ResNet-50 (He et al. 2015, torchvision "v1.5"),
optionally with a Residual Gate (Savarese & Figueiredo 2017).

    F(x) = BN(Conv1x1(4m)(ReLU(BN(Conv3x3(m, s)(ReLU(BN(Conv1x1(m)(x))))))))
    s(x) = x, or BN(Conv1x1(4m, s)(x)) when the shape changes
    ungated: u = ReLU(F(x) + s(x))
    gated:   u = ReLU(g(k)·F(x) + s(x))

The stride sits on the 3×3 convolution (torchvision v1.5; the original Caffe ResNet-50
strides the first 1×1), which pads one pixel on every side. With g = ReLU and k = 1 a
gated block computes exactly the ungated one; g(k) = 0 turns it into ReLU(s(x)), which is
the identity for same-shape blocks (their input is already a ReLU output).
"""

from __future__ import annotations

from typing import Any

import keras
from keras import ops

from keras_gated.layers.batch_norm import BatchNormalization
from keras_gated.layers.padding import apply_conv, build_conv, reference_conv2d
from keras_gated.layers.preact_unit import (
    BOTTLENECK_EXPANSION,
    he_normal_untruncated,
    strided_output_shape,
)
from keras_gated.layers.block import Block
from keras_gated.layers.residual_gate import ResidualGate, check_gate_function

PACKAGE = "keras_gated"


@keras.saving.register_keras_serializable(package=PACKAGE)
class ResNetBottleneck(Block):
    """A post-activation ResNet bottleneck block, optionally gated.

    Args:
        filters: output channels 4m; the inner width m is filters // 4.
        strides: stride of the 3×3 convolution and of the projection shortcut.
        gate: None (ungated) or the Residual Gate function (``"relu"``, ``"identity"``,
            ``"sigmoid"``).
        k_initializer: start value of the gate scalar k (1.0, the paper's).
        bn_momentum, bn_epsilon: BatchNormalization settings (torchvision: 0.9, 1e-5).
        stage: the stage the block belongs to (``Block``; torchvision's conv2..conv5).
    """

    gateable = True  # keras_gated.gating.gate sets `gate` to add a Residual Gate
    stage_prefix = "conv"
    first_stage = 2

    def __init__(
        self,
        filters: int,
        strides: int = 1,
        gate: str | None = None,
        k_initializer: float = 1.0,
        bn_momentum: float = 0.9,
        bn_epsilon: float = 1e-5,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if int(filters) < BOTTLENECK_EXPANSION or int(filters) % BOTTLENECK_EXPANSION:
            raise ValueError(
                f"`filters` must be a positive multiple of {BOTTLENECK_EXPANSION}, got {filters!r}."
            )
        if int(strides) < 1:
            raise ValueError(f"`strides` must be a positive integer, got {strides!r}.")
        self.filters = int(filters)
        self.strides = int(strides)
        self.gate = None if gate is None else check_gate_function(gate)
        self.k_initializer = float(k_initializer)
        self.bn_momentum = float(bn_momentum)
        self.bn_epsilon = float(bn_epsilon)

    def _conv_bn(self, filters: int, kernel: int, strides: int, name: str, shape):
        conv = reference_conv2d(
            filters, kernel, strides, use_bias=False,
            kernel_initializer=he_normal_untruncated("fan_out"), name=f"{name}_conv",
        )
        shape = build_conv(conv, shape)
        bn = BatchNormalization(
            momentum=self.bn_momentum, epsilon=self.bn_epsilon, name=f"{name}_bn"
        )
        bn.build(shape)
        return conv, bn, shape

    def build(self, input_shape):
        width = self.filters // BOTTLENECK_EXPANSION
        shape = tuple(input_shape)
        self.convs, self.norms = [], []
        for i, (filters, kernel, strides) in enumerate(
            [(width, 1, 1), (width, 3, self.strides), (self.filters, 1, 1)], start=1
        ):
            conv, bn, shape = self._conv_bn(filters, kernel, strides, f"branch{i}", shape)
            self.convs.append(conv)
            self.norms.append(bn)
        self.changes_shape = input_shape[-1] != self.filters or self.strides != 1
        self.projection = self.projection_bn = None
        if self.changes_shape:
            self.projection, self.projection_bn, _ = self._conv_bn(
                self.filters, 1, self.strides, "projection", tuple(input_shape)
            )
        self.residual_gate = None
        if self.gate is not None:
            self.residual_gate = ResidualGate(
                self.gate, form="residual", k_initializer=self.k_initializer, name="gate"
            )
            self.residual_gate.build([shape, shape])

    def call(self, x, training=None):
        r = x
        for i, (conv, bn) in enumerate(zip(self.convs, self.norms)):
            r = bn(apply_conv(conv, r), training=training)
            if i < len(self.convs) - 1:
                r = ops.relu(r)
        shortcut = x
        if self.projection is not None:
            shortcut = self.projection_bn(self.projection(x), training=training)
        if self.residual_gate is not None:
            return ops.relu(self.residual_gate([r, shortcut]))
        return ops.relu(r + shortcut)

    def compute_output_shape(self, input_shape):
        return strided_output_shape(input_shape, self.strides, self.filters)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "filters": self.filters,
            "strides": self.strides,
            "gate": self.gate,
            "k_initializer": self.k_initializer,
            "bn_momentum": self.bn_momentum,
            "bn_epsilon": self.bn_epsilon,
        }
