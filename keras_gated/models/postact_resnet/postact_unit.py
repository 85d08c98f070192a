"""The original (post-activation) residual unit of He et al. 2015's CIFAR ResNets, with
the shortcut connections of He, Zhang, Ren & Sun 2016, *Identity Mappings in Deep
Residual Networks*, §3.1, Fig. 2 and Table 1.

The residual function is two 3×3 convolutions, each followed by BN (Fig. 2: "BN layers
... are adopted right after the weight layers for all units here"):

    F(x) = BN(conv3x3(ReLU(BN(conv3x3(x)))))

and the unit adds it to its shortcut h(x), then applies f = ReLU (eq. 1-2 with
f = ReLU: "the experiments in this section are all based on f = ReLU as in [1]"):

    original              (Fig. 2a)  y = ReLU(F(x) + h(x))
    constant_scaling      (Fig. 2b)  y = ReLU(β·F(x) + λ·h(x))         (eq. 6: h = λ·x)
    exclusive_gating      (Fig. 2c)  y = ReLU(g(x)·F(x) + (1 − g(x))·h(x))
    shortcut_only_gating  (Fig. 2d)  y = ReLU(F(x) + (1 − g(x))·h(x))
    conv1x1               (Fig. 2e)  y = ReLU(F(x) + BN(conv1x1(x)))
    dropout               (Fig. 2f)  y = ReLU(F(x) + m ⊙ h(x)),  m ~ Bernoulli(1 − p)

with g(x) = σ(W_g x + b_g) a 1×1 convolution with bias (§3.1, "Exclusive gating"),
b_g started at ``gate_bias``. h(x) is x, or on a shape change (channels or stride) the
``downsample`` shortcut: ``"zeropad"`` (option A, the strided subsample padded with zero
channels: He et al. 2015 §4.2, "we use identity shortcuts in all cases (i.e., option A)"
on CIFAR) or ``"projection"`` (option B, BN(conv1x1 with the stride)). The gating
convolution and the 1×1 shortcut take the unit's stride, so g(x) and F(x) have the same
shape. The ``conv1x1`` variant has its 1×1 shortcut on every unit (option C).

The dropout shortcut follows §3.1's reading of it, "dropout statistically imposes a
scale of λ with an expectation of 0.5 on the shortcut": in training the shortcut is
multiplied by a Bernoulli mask without rescaling (expectation 1 − p), in inference by
its expectation 1 − p.
"""

from __future__ import annotations

from typing import Any

import keras
from keras import ops

from keras_gated.layers.batch_norm import BatchNormalization
from keras_gated.layers.block import Block
from keras_gated.layers.initializers import independent
from keras_gated.layers.padding import apply_conv, build_conv, reference_conv2d
from keras_gated.layers.preact_unit import (
    he_normal_untruncated,
    strided_output_shape,
    zeropad_shortcut,
)

PACKAGE = "keras_gated"

#: He et al. 2016, Table 1's cases (Fig. 2 a-f), in the table's order.
SHORTCUT_VARIANTS = (
    "original",
    "constant_scaling",
    "exclusive_gating",
    "shortcut_only_gating",
    "conv1x1",
    "dropout",
)
GATED_VARIANTS = ("exclusive_gating", "shortcut_only_gating")
DOWNSAMPLE_TYPES = ("zeropad", "projection")


def check_shortcut_variant(shortcut: str) -> str:
    """``shortcut`` if it names a Table 1 case; a ValueError in one sentence otherwise."""
    if shortcut in DOWNSAMPLE_TYPES:
        raise ValueError(
            f"`shortcut`={shortcut!r} selects the Table 1 shortcut variant here; the "
            f"shortcut at a shape change is `downsample`={shortcut!r}."
        )
    if shortcut not in SHORTCUT_VARIANTS:
        raise ValueError(
            f"Unknown `shortcut`={shortcut!r}. Allowed values (He et al. 2016, Table 1): "
            f"{', '.join(SHORTCUT_VARIANTS)}."
        )
    return shortcut


def check_downsample(downsample: str) -> str:
    if downsample not in DOWNSAMPLE_TYPES:
        raise ValueError(
            f"Unknown `downsample`={downsample!r}. Allowed values: "
            f"{', '.join(DOWNSAMPLE_TYPES)}."
        )
    return downsample


@keras.saving.register_keras_serializable(package=PACKAGE)
class PostActUnit(Block):
    """The original residual unit (conv-BN-ReLU-conv-BN, addition, ReLU) with one of the
    shortcut connections of He et al. 2016, Table 1 (see the module docstring for the
    equation of each).

    Args:
        filters: output channels.
        strides: stride of the first 3×3 convolution (and of the unit's shortcut).
        shortcut: the Table 1 case, one of ``SHORTCUT_VARIANTS``.
        downsample: the shortcut h(x) on a shape change: ``"zeropad"`` (option A) or
            ``"projection"`` (option B: BN(conv1x1)).
        shortcut_scale: λ of ``constant_scaling`` (the paper: 0.5; 0 is a plain net).
        residual_scale: the constant F is multiplied by in ``constant_scaling`` (the
            paper: 1 − λ = 0.5, "frozen gating", or 1).
        gate_bias: start value of b_g in the gating variants (the paper searched 0 to −10;
            −6 was best).
        shortcut_dropout: the dropout rate p on the shortcut of ``dropout`` (the paper: 0.5).
        bn_momentum, bn_epsilon: BatchNormalization settings (Torch: 0.9, 1e-5).
        kernel_initializer: convolution initializer (default: untruncated He normal,
            fan-out, as the Torch CIFAR ResNets).
        seed: seed of the dropout shortcut's masks (None: drawn from Keras's global seed).
        stage: the stage the unit belongs to (``Block``).
    """

    def __init__(
        self,
        filters: int,
        strides: int = 1,
        shortcut: str = "original",
        downsample: str = "zeropad",
        shortcut_scale: float = 0.5,
        residual_scale: float = 0.5,
        gate_bias: float = -6.0,
        shortcut_dropout: float = 0.5,
        bn_momentum: float = 0.9,
        bn_epsilon: float = 1e-5,
        kernel_initializer: str | dict | keras.initializers.Initializer | None = None,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if int(filters) < 1:
            raise ValueError(f"`filters` must be a positive integer, got {filters!r}.")
        if int(strides) < 1:
            raise ValueError(f"`strides` must be a positive integer, got {strides!r}.")
        self.filters = int(filters)
        self.strides = int(strides)
        self.shortcut = check_shortcut_variant(shortcut)
        self.downsample = check_downsample(downsample)
        self.shortcut_scale = float(shortcut_scale)
        self.residual_scale = float(residual_scale)
        self.gate_bias = float(gate_bias)
        if not 0.0 <= float(shortcut_dropout) < 1.0:
            raise ValueError(
                f"`shortcut_dropout` must be in [0, 1), got {shortcut_dropout!r}."
            )
        self.shortcut_dropout = float(shortcut_dropout)
        self.bn_momentum = float(bn_momentum)
        self.bn_epsilon = float(bn_epsilon)
        self.kernel_initializer = keras.initializers.get(
            kernel_initializer if kernel_initializer is not None else he_normal_untruncated()
        )
        self.seed = seed
        self.seed_generator = (
            keras.random.SeedGenerator(seed) if self.shortcut == "dropout" else None
        )

    # -- structure -------------------------------------------------------------------
    def _bn(self, name: str, shape: tuple) -> BatchNormalization:
        bn = BatchNormalization(momentum=self.bn_momentum, epsilon=self.bn_epsilon, name=name)
        bn.build(shape)
        return bn

    def _conv1x1(self, name: str, input_shape: tuple, use_bias: bool, **kwargs: Any):
        conv = keras.layers.Conv2D(
            self.filters,
            1,
            strides=self.strides,
            use_bias=use_bias,
            kernel_initializer=independent(self.kernel_initializer),
            name=name,
            **kwargs,
        )
        conv.build(input_shape)
        return conv

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        in_channels = input_shape[-1]
        self.changes_shape = in_channels != self.filters or self.strides != 1
        if self.changes_shape and self.downsample == "zeropad" and in_channels > self.filters:
            raise ValueError(
                "A zero-padding shortcut cannot reduce channels "
                f"({in_channels} -> {self.filters}); use downsample='projection'."
            )
        self.conv1 = reference_conv2d(
            self.filters, 3, self.strides, use_bias=False,
            kernel_initializer=self.kernel_initializer, name="conv1",
        )
        shape = build_conv(self.conv1, input_shape)
        self.bn1 = self._bn("bn1", shape)
        self.conv2 = reference_conv2d(
            self.filters, 3, 1, use_bias=False,
            kernel_initializer=self.kernel_initializer, name="conv2",
        )
        shape = build_conv(self.conv2, shape)
        self.bn2 = self._bn("bn2", shape)
        # h(x): a 1×1 convolution + BN on every unit (conv1x1), or on a shape change with
        # downsample="projection"; else x or its zero-padded subsample.
        self.projection = self.projection_bn = None
        if self.shortcut == "conv1x1" or (self.changes_shape and self.downsample == "projection"):
            self.projection = self._conv1x1("projection", input_shape, use_bias=False)
            self.projection_bn = self._bn("projection_bn", shape)
        # g(x) = sigmoid(W_g x + b_g): a 1×1 convolution with bias, b_g = gate_bias.
        self.gate_conv = None
        if self.shortcut in GATED_VARIANTS:
            self.gate_conv = self._conv1x1(
                "gate_conv", input_shape, use_bias=True,
                bias_initializer=keras.initializers.Constant(self.gate_bias),
            )

    # -- forward ---------------------------------------------------------------------
    def residual_function(self, x, training=None):
        """F(x) = BN(conv3x3(ReLU(BN(conv3x3(x))))) (eq. 1, Fig. 2)."""
        r = ops.relu(self.bn1(apply_conv(self.conv1, x), training=training))
        return self.bn2(apply_conv(self.conv2, r), training=training)

    def shortcut_path(self, x, training=None):
        """h(x) before any scaling, gating or dropout: x, its option-A subsample padded
        with zero channels, or BN(conv1x1(x))."""
        if self.projection is not None:
            return self.projection_bn(self.projection(x), training=training)
        if not self.changes_shape:
            return x
        return zeropad_shortcut(x, self.filters, self.strides)

    def shortcut_gate(self, x):
        """g(x) = sigmoid(W_g x + b_g) (§3.1, "Exclusive gating"); gating variants only."""
        return ops.sigmoid(self.gate_conv(x))

    def _drop(self, h, training):
        keep = 1.0 - self.shortcut_dropout
        if not training:
            return h * keep
        # keras.random.dropout keeps with probability 1 − p and divides by it: times
        # 1 − p gives the mask itself (exactly so for p = 0.5).
        return keras.random.dropout(h, self.shortcut_dropout, seed=self.seed_generator) * keep

    def merge_inputs(self, x, training=None):
        """(F(x), h(x), g(x) or None): the two paths and the gate, before they merge."""
        g = self.shortcut_gate(x) if self.gate_conv is not None else None
        return self.residual_function(x, training), self.shortcut_path(x, training), g

    def call(self, x, training=None):
        f, h, g = self.merge_inputs(x, training=training)
        if self.shortcut == "constant_scaling":
            y = self.residual_scale * f + self.shortcut_scale * h
        elif self.shortcut == "exclusive_gating":
            y = g * f + (1.0 - g) * h
        elif self.shortcut == "shortcut_only_gating":
            y = f + (1.0 - g) * h
        elif self.shortcut == "dropout":
            y = f + self._drop(h, training)
        else:  # original, conv1x1
            y = f + h
        return ops.relu(y)

    @property
    def identity_shortcut(self) -> bool:
        """Only the original unit's same-shape shortcut is x itself."""
        return self.shortcut == "original" and not getattr(self, "changes_shape", False)

    def compute_output_shape(self, input_shape):
        return strided_output_shape(input_shape, self.strides, self.filters)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "filters": self.filters,
            "strides": self.strides,
            "shortcut": self.shortcut,
            "downsample": self.downsample,
            "shortcut_scale": self.shortcut_scale,
            "residual_scale": self.residual_scale,
            "gate_bias": self.gate_bias,
            "shortcut_dropout": self.shortcut_dropout,
            "bn_momentum": self.bn_momentum,
            "bn_epsilon": self.bn_epsilon,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "seed": self.seed,
        }
