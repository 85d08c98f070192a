"""The pre-activation residual unit (He et al. 2016, *Identity Mappings in Deep Residual
Networks*), optionally with a Residual Gate (Savarese & Figueiredo 2017).

Basic unit:        u = x + conv3x3(ReLU(BN(conv3x3(ReLU(BN(x))))))
Bottleneck unit:   u = x + conv1x1(ReLU(BN(conv3x3(ReLU(BN(conv1x1(ReLU(BN(x)))))))))
Gated:             u = g(k)·f_r(x) + s(x)

When the unit changes the shape (channels or stride), the first BN-ReLU is shared by
the branch and the shortcut, and the shortcut s is either a 1×1 convolution of that
pre-activation (``shortcut="projection"``, the default; option B of the CIFAR reference)
or its strided subsample padded with zero channels (``shortcut="zeropad"``, option A).
Same-shape units use the identity shortcut s(x) = x, or s(x) = ReLU(BN(x)) with
``share_preactivation=True``: fb.resnet.torch's "both_preact" unit that opens every
stage of its CIFAR nets (He et al. 2016, appendix: the first BN-ReLU comes right after
the stem, before the split). The shortcut is never gated.

Strided convolutions pad (k − 1) / 2 zeros on every side, as all the references do
(see :mod:`keras_gated.layers.padding`).

``batch_norm=False`` gives the block of Residual Gates Table 7, with no normalisation:
u = g(k)·ReLU(conv(ReLU(conv(x)))) + s(x) (the ReLU comes before the addition).

Dropout (Wide ResNets) sits after the last BN-ReLU, before the last convolution.
"""

from __future__ import annotations

import warnings
from typing import Any

import keras
from keras import ops

from keras_gated.layers.batch_norm import BatchNormalization
from keras_gated.layers.padding import apply_conv, build_conv, reference_conv2d
from keras_gated.layers.block import Block
from keras_gated.layers.initializers import independent
from keras_gated.layers.residual_gate import ResidualGate, check_gate_function

PACKAGE = "keras_gated"

BLOCK_TYPES = ("basic", "bottleneck")
SHORTCUT_TYPES = ("projection", "zeropad")
BOTTLENECK_EXPANSION = 4


def he_normal_untruncated(mode: str = "fan_out") -> keras.initializers.Initializer:
    """Torch's ``normal(0, sqrt(2/n))``: Keras ``he_normal`` is truncated, this is not."""
    return keras.initializers.VarianceScaling(2.0, mode, "untruncated_normal")


def check_block_type(block: str) -> str:
    if block not in BLOCK_TYPES:
        raise ValueError(
            f"Unknown `block`={block!r}. Allowed values: {', '.join(BLOCK_TYPES)}."
        )
    return block


def strided_output_shape(input_shape, strides: int, filters: int) -> tuple:
    """Output shape of a "same"-padded stride-``strides`` block: ceil(size / strides)."""
    batch, height, width, _ = input_shape

    def down(size):
        return None if size is None else -(-size // strides)

    return (batch, down(height), down(width), filters)


def zeropad_shortcut(x, filters: int, strides: int):
    """Option-A shortcut: spatial subsample by ``strides``, then zero channels appended."""
    if strides > 1:
        x = x[:, ::strides, ::strides, :]
    extra = filters - x.shape[-1]
    if extra:
        x = ops.pad(x, [[0, 0], [0, 0], [0, 0], [0, extra]])
    return x


@keras.saving.register_keras_serializable(package=PACKAGE)
class PreActUnit(Block):
    """A pre-activation residual unit, basic or bottleneck, optionally gated.

    Args:
        filters: output channels. A bottleneck unit's inner width is filters // 4.
        strides: stride of the unit (on the first convolution, as in the references).
        block: ``"basic"`` (two 3×3 convolutions) or ``"bottleneck"`` (1×1, 3×3, 1×1).
        shortcut: on a shape change, ``"projection"`` (1×1 conv) or ``"zeropad"``.
        dropout: dropout rate before the last convolution (0 disables it).
        gate: None (an ungated unit) or the Residual Gate function ``"relu"``,
            ``"identity"`` or ``"sigmoid"``.
        k_initializer: start value of the gate scalar k (1.0, the paper's), a float or a
            Keras initializer; unused without a gate.
        share_preactivation: True makes a same-shape unit's shortcut carry the shared
            pre-activation ReLU(BN(x)) instead of x (fb.resnet.torch's first unit of a
            stage). Units that change the shape always share it.
        batch_norm: False gives the no-BN unit of Residual Gates Table 7.
        bn_momentum, bn_epsilon: BatchNormalization settings (Torch: 0.9, 1e-5).
        kernel_initializer: convolution initializer (default: untruncated He normal,
            fan-out, as in the pre-act ResNet reference; Wide ResNets use fan-in).
        stage: the stage the unit belongs to (``Block``).
    """

    gateable = True  # keras_gated.gating.gate sets `gate` to add a Residual Gate

    def __init__(
        self,
        filters: int,
        strides: int = 1,
        block: str = "basic",
        shortcut: str = "projection",
        dropout: float = 0.0,
        gate: str | None = None,
        batch_norm: bool = True,
        bn_momentum: float = 0.9,
        bn_epsilon: float = 1e-5,
        kernel_initializer: str | dict | keras.initializers.Initializer | None = None,
        share_preactivation: bool = False,
        k_initializer: float | str | dict | keras.initializers.Initializer = 1.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if int(filters) < 1:
            raise ValueError(f"`filters` must be a positive integer, got {filters!r}.")
        if int(strides) < 1:
            raise ValueError(f"`strides` must be a positive integer, got {strides!r}.")
        self.filters = int(filters)
        self.strides = int(strides)
        self.block = check_block_type(block)
        if shortcut not in SHORTCUT_TYPES:
            raise ValueError(
                f"Unknown `shortcut`={shortcut!r}. Allowed values: {', '.join(SHORTCUT_TYPES)}."
            )
        if self.block == "bottleneck" and self.filters % BOTTLENECK_EXPANSION:
            raise ValueError(
                f"A bottleneck unit needs `filters` divisible by {BOTTLENECK_EXPANSION}, "
                f"got {self.filters}."
            )
        self.shortcut = shortcut
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1), got {dropout!r}.")
        self.dropout = float(dropout)
        self.gate = None if gate is None else check_gate_function(gate)
        # A number stays a number (readable in the config); anything else an initializer.
        if isinstance(k_initializer, (int, float)) and not isinstance(k_initializer, bool):
            self.k_initializer = float(k_initializer)
        else:
            self.k_initializer = keras.initializers.get(k_initializer)
        self.batch_norm = bool(batch_norm)
        self.bn_momentum = float(bn_momentum)
        self.bn_epsilon = float(bn_epsilon)
        self.share_preactivation = bool(share_preactivation)
        self.kernel_initializer = keras.initializers.get(
            kernel_initializer if kernel_initializer is not None else he_normal_untruncated()
        )

    @property
    def identity_shortcut(self) -> bool:
        """A unit that shares its pre-activation with its shortcut carries ReLU(BN(x)),
        not x, even when it keeps the shape."""
        return not getattr(self, "changes_shape", False) and not self.share_preactivation

    # -- structure -------------------------------------------------------------------
    def _conv_specs(self) -> list[tuple[int, int, int]]:
        """(filters, kernel size, strides) of each branch convolution."""
        if self.block == "basic":
            return [(self.filters, 3, self.strides), (self.filters, 3, 1)]
        width = self.filters // BOTTLENECK_EXPANSION
        return [(width, 1, self.strides), (width, 3, 1), (self.filters, 1, 1)]

    def build(self, input_shape):
        in_channels = input_shape[-1]
        self.changes_shape = in_channels != self.filters or self.strides != 1
        if self.changes_shape and self.shortcut == "zeropad" and in_channels > self.filters:
            raise ValueError(
                "A zero-padding shortcut cannot reduce channels "
                f"({in_channels} -> {self.filters}); use shortcut='projection'."
            )
        use_bias = not self.batch_norm
        self.convs = []
        self.norms = []
        shape = tuple(input_shape)
        for i, (filters, kernel, strides) in enumerate(self._conv_specs(), start=1):
            if self.batch_norm:
                bn = BatchNormalization(
                    momentum=self.bn_momentum, epsilon=self.bn_epsilon, name=f"bn{i}"
                )
                bn.build(shape)
                self.norms.append(bn)
            conv = reference_conv2d(
                filters,
                kernel,
                strides,
                use_bias=use_bias,
                kernel_initializer=self.kernel_initializer,
                name=f"conv{i}",
            )
            shape = build_conv(conv, shape)
            self.convs.append(conv)
        self.dropout_layer = keras.layers.Dropout(self.dropout) if self.dropout else None
        self.projection = None
        if self.changes_shape and self.shortcut == "projection":
            self.projection = keras.layers.Conv2D(
                self.filters,
                1,
                strides=self.strides,
                use_bias=use_bias,
                kernel_initializer=independent(self.kernel_initializer),
                name="projection",
            )
            self.projection.build(tuple(input_shape))
        self.residual_gate = None
        if self.gate is not None:
            self.residual_gate = ResidualGate(
                self.gate, form="residual", k_initializer=self.k_initializer, name="gate"
            )
            self.residual_gate.build([shape, shape])

    # -- forward ---------------------------------------------------------------------
    def _shortcut(self, x):
        if not self.changes_shape:
            return x
        if self.projection is not None:
            return self.projection(x)
        return zeropad_shortcut(x, self.filters, self.strides)

    def branch_and_shortcut(self, x, training=None):
        """(f_r(x), s(x)): the residual branch's output and the shortcut's output, before
        they are added (or gated and added)."""
        last = len(self.convs) - 1
        if self.batch_norm:
            pre = ops.relu(self.norms[0](x, training=training))
            shares = self.changes_shape or self.share_preactivation
            shortcut = self._shortcut(pre) if shares else x
            r = pre
            for i, conv in enumerate(self.convs):
                if i > 0:
                    r = ops.relu(self.norms[i](r, training=training))
                if i == last and self.dropout_layer is not None:
                    r = self.dropout_layer(r, training=training)
                r = apply_conv(conv, r)
            return r, shortcut
        # Residual Gates Table 7: Conv-ReLU-Conv-ReLU, no normalisation.
        shortcut = self._shortcut(x)
        r = x
        for i, conv in enumerate(self.convs):
            if i == last and self.dropout_layer is not None:
                r = self.dropout_layer(r, training=training)
            r = ops.relu(apply_conv(conv, r))
        return r, shortcut

    def call(self, x, training=None):
        r, shortcut = self.branch_and_shortcut(x, training=training)
        if self.residual_gate is not None:
            return self.residual_gate([r, shortcut])
        return r + shortcut

    def residual(self, x, training=None):
        """Deprecated: the former name of ``branch_and_shortcut``."""
        warnings.warn(
            "PreActUnit.residual() is deprecated: it returns the branch and the shortcut; "
            "call PreActUnit.branch_and_shortcut().",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.branch_and_shortcut(x, training=training)

    def compute_output_shape(self, input_shape):
        return strided_output_shape(input_shape, self.strides, self.filters)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "filters": self.filters,
            "strides": self.strides,
            "block": self.block,
            "shortcut": self.shortcut,
            "dropout": self.dropout,
            "gate": self.gate,
            "batch_norm": self.batch_norm,
            "bn_momentum": self.bn_momentum,
            "bn_epsilon": self.bn_epsilon,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "share_preactivation": self.share_preactivation,
            "k_initializer": (
                self.k_initializer
                if isinstance(self.k_initializer, float)
                else keras.initializers.serialize(self.k_initializer)
            ),
        }
