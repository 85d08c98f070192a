"""The bottleneck Highway block of the 50-layer ImageNet Highway net (Greff, Srivastava &
Schmidhuber 2017, §5.1, Table 1b).

    H = Conv1x1(m) -> BN -> ReLU -> Conv3x3(m, s) -> BN -> ReLU -> Conv1x1(4m) -> BN [-> ReLU]
    T = the same bottleneck with its own weights -> sigmoid   (H and T equally expressive)
    c = x, or Conv1x1(4m, s) -> BN when the shape changes
    y = H·T + c·(1 − T)        (coupled Highway merge, no ReLU after it)

``full_relu=True`` adds the third ReLU to H ("Highway-Full" in the paper). The
transform-gate bias is the β of T's last BN, started at ``transform_bias`` (negative, so
a fresh block mostly carries; the paper reports that no bias tuning was needed).
"""

from __future__ import annotations

from typing import Any

import keras
from keras import ops

from keras_gated.layers.batch_norm import BatchNormalization
from keras_gated.layers.block import Block
from keras_gated.layers.highway import HighwayMerge
from keras_gated.layers.padding import apply_conv, build_conv, reference_conv2d
from keras_gated.layers.preact_unit import (
    BOTTLENECK_EXPANSION,
    he_normal_untruncated,
    strided_output_shape,
)

PACKAGE = "keras_gated"


@keras.saving.register_keras_serializable(package=PACKAGE)
class HighwayBottleneck(Block):
    """Bottleneck Highway block: y = H(x)·T(x) + c(x)·(1 − T(x)).

    Args:
        filters: output channels (4 × the bottleneck width).
        strides: stride of the 3×3 convolutions and of the projection.
        full_relu: end H with a ReLU ("Highway-Full").
        transform_bias: start value of the β of T's last BatchNormalization.
        bn_momentum, bn_epsilon: BatchNormalization settings.
        stage: the stage the block belongs to (``Block``; torchvision's conv2..conv5).
    """

    stage_prefix = "conv"
    first_stage = 2

    def __init__(
        self,
        filters: int,
        strides: int = 1,
        full_relu: bool = False,
        transform_bias: float = -2.0,
        bn_momentum: float = 0.9,
        bn_epsilon: float = 1e-5,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if filters % BOTTLENECK_EXPANSION:
            raise ValueError(f"`filters` must be divisible by 4, got {filters}.")
        self.filters = int(filters)
        self.strides = int(strides)
        self.full_relu = bool(full_relu)
        self.transform_bias = float(transform_bias)
        self.bn_momentum = float(bn_momentum)
        self.bn_epsilon = float(bn_epsilon)

    def _branch(self, prefix: str, input_shape, last_beta: float) -> tuple[list, list]:
        """The convolutions and BNs of one bottleneck branch (H or T)."""
        width = self.filters // BOTTLENECK_EXPANSION
        specs = [(width, 1, 1), (width, 3, self.strides), (self.filters, 1, 1)]
        convs, norms = [], []
        shape = tuple(input_shape)
        for i, (filters, kernel, strides) in enumerate(specs, start=1):
            conv = reference_conv2d(
                filters,
                kernel,
                strides,
                use_bias=False,
                kernel_initializer=he_normal_untruncated("fan_out"),
                name=f"{prefix}_conv{i}",
            )
            shape = build_conv(conv, shape)
            bn = BatchNormalization(
                momentum=self.bn_momentum,
                epsilon=self.bn_epsilon,
                beta_initializer=keras.initializers.Constant(last_beta) if i == 3 else "zeros",
                name=f"{prefix}_bn{i}",
            )
            bn.build(shape)
            convs.append(conv)
            norms.append(bn)
        return convs, norms

    def build(self, input_shape):
        self.changes_shape = input_shape[-1] != self.filters or self.strides != 1
        self.h_convs, self.h_norms = self._branch("h", input_shape, 0.0)
        self.t_convs, self.t_norms = self._branch("t", input_shape, self.transform_bias)
        self.projection = None
        self.projection_bn = None
        if self.changes_shape:
            self.projection = keras.layers.Conv2D(
                self.filters,
                1,
                strides=self.strides,
                use_bias=False,
                kernel_initializer=he_normal_untruncated("fan_out"),
                name="projection",
            )
            self.projection.build(tuple(input_shape))
            self.projection_bn = BatchNormalization(
                momentum=self.bn_momentum, epsilon=self.bn_epsilon, name="projection_bn"
            )
            self.projection_bn.build(self.projection.compute_output_shape(tuple(input_shape)))
        self.merge = HighwayMerge("coupled", name="merge")

    @staticmethod
    def _run(convs, norms, x, training, final_relu: bool):
        for i, (conv, bn) in enumerate(zip(convs, norms)):
            x = bn(apply_conv(conv, x), training=training)
            if i < len(convs) - 1 or final_relu:
                x = ops.relu(x)
        return x

    def call(self, x, training=None):
        h = self._run(self.h_convs, self.h_norms, x, training, self.full_relu)
        t = ops.sigmoid(self._run(self.t_convs, self.t_norms, x, training, False))
        carry = x
        if self.projection is not None:
            carry = self.projection_bn(self.projection(x), training=training)
        return self.merge([carry, h, t])

    @property
    def transform_gate_bias(self):
        """The transform-gate bias: β of T's last BatchNormalization."""
        return self.t_norms[-1].beta

    def compute_output_shape(self, input_shape):
        return strided_output_shape(input_shape, self.strides, self.filters)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "filters": self.filters,
            "strides": self.strides,
            "full_relu": self.full_relu,
            "transform_bias": self.transform_bias,
            "bn_momentum": self.bn_momentum,
            "bn_epsilon": self.bn_epsilon,
        }
