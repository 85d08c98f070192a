"""Highway layers (Srivastava, Greff & Schmidhuber 2015; Greff et al. 2017).

The Highway operation (supplementary of *Training Very Deep Networks*, eq. 2) is

    y = H(x) · T(x) + x · C(x)

with the coupled carry gate C = 1 − T of the original paper (eq. 3) as the default.
Greff et al. 2017, Table 1a, compare four variants, all available here:

=================  ==================================
variant            output
=================  ==================================
``coupled``        y = H·T + x·(1 − T)   (default)
``full``           y = H·T + x·C         (separate C)
``carry_only``     y = H + x·C
``transform_only`` y = H·T + x
=================  ==================================

The gates are T = sigmoid(W_T x + b_T) and C = sigmoid(W_C x + b_C). The transform-gate
bias b_T starts negative so that a fresh layer mostly carries its input (−1 on MNIST,
−2 on CIFAR in the authors' code); the carry-gate bias starts at −b_T, so that every
variant starts with the same amount of carry.

``HighwayMerge`` is the parameter-free merge of (x, H, T[, C]) on its own, so that its
forward pass and its backward pass (supplementary eq. 4: dH = T·dy, dT = (H − x)·dy,
dx = (1 − T)·dy) can be tested directly.
"""

from __future__ import annotations

from typing import Any

import keras
from keras import ops

from keras_gated.layers.block import Block
from keras_gated.layers.initializers import independent

PACKAGE = "keras_gated"

HIGHWAY_VARIANTS = ("coupled", "full", "carry_only", "transform_only")

# Which gates each variant computes.
_USES_TRANSFORM = {"coupled": True, "full": True, "carry_only": False, "transform_only": True}
_USES_CARRY = {"coupled": False, "full": True, "carry_only": True, "transform_only": False}


def _check_variant(variant: str) -> str:
    if variant not in HIGHWAY_VARIANTS:
        raise ValueError(
            f"Unknown highway `variant`={variant!r}. Allowed values: "
            f"{', '.join(HIGHWAY_VARIANTS)}."
        )
    return variant


def merge_inputs_for(variant: str) -> tuple[str, ...]:
    """The names, in order, of the tensors ``HighwayMerge(variant)`` takes."""
    _check_variant(variant)
    names = ["x", "h"]
    if _USES_TRANSFORM[variant]:
        names.append("t")
    if _USES_CARRY[variant]:
        names.append("c")
    return tuple(names)


@keras.saving.register_keras_serializable(package=PACKAGE)
class HighwayMerge(keras.layers.Layer):
    """Parameter-free Highway merge y = H·T + x·C (supplementary eq. 2).

    Inputs, as a list, depend on the variant (see ``merge_inputs_for``):
    ``coupled`` and ``transform_only`` take ``[x, H, T]``, ``full`` takes
    ``[x, H, T, C]`` and ``carry_only`` takes ``[x, H, C]``.

    For the coupled variant (eq. 3) y = H·T + x·(1 − T), whose gradients are
    dH = T·dy, dT = (H − x)·dy and dx = (1 − T)·dy (eq. 4).
    """

    def __init__(self, variant: str = "coupled", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.variant = _check_variant(variant)

    def call(self, inputs):
        expected = merge_inputs_for(self.variant)
        if len(inputs) != len(expected):
            raise ValueError(
                f"HighwayMerge(variant={self.variant!r}) takes {len(expected)} inputs "
                f"[{', '.join(expected)}], got {len(inputs)}."
            )
        named = dict(zip(expected, inputs))
        x, h = named["x"], named["h"]
        if self.variant == "coupled":
            t = named["t"]
            # H·T + x·(1 − T), written as x + T·(H − x): one multiply fewer, same value.
            return x + t * (h - x)
        if self.variant == "full":
            return h * named["t"] + x * named["c"]
        if self.variant == "carry_only":
            return h + x * named["c"]
        return h * named["t"] + x  # transform_only

    def compute_output_shape(self, input_shape):
        return input_shape[0]

    def get_config(self) -> dict:
        return {**super().get_config(), "variant": self.variant}


def _bias_initializer(value: float | str | keras.initializers.Initializer):
    if isinstance(value, (int, float)):
        return keras.initializers.Constant(float(value))
    return keras.initializers.get(value)


def _negated(initializer: keras.initializers.Initializer) -> keras.initializers.Initializer:
    """The carry-gate bias start: minus the transform-gate bias start."""
    if isinstance(initializer, keras.initializers.Constant):
        return keras.initializers.Constant(-float(initializer.value))
    raise ValueError(
        "`carry_bias_initializer` must be given when `transform_bias_initializer` is not a "
        "constant: pass e.g. carry_bias_initializer=2.0."
    )


@keras.saving.register_keras_serializable(package=PACKAGE)
class Highway(Block):
    """A Highway layer, dense or convolutional: y = H(x)·T(x) + x·C(x).

    H(x) = activation(W_H x + b_H) and the gates T(x) = sigmoid(W_T x + b_T),
    C(x) = sigmoid(W_C x + b_C) are the same kind of layer as each other (dense, or
    convolutions with the same kernel size), so H and T are equally expressive (Greff
    et al. 2017, §5.1). The output has the shape of the input: a Highway layer keeps the
    number of units/channels.

    Args:
        kind: ``"dense"`` (the last axis is the feature axis) or ``"conv"`` (2-D
            convolutions, channels last, ``padding="same"``).
        kernel_size: kernel size of the convolutions (``kind="conv"`` only).
        variant: ``"coupled"`` (default), ``"full"``, ``"carry_only"`` or
            ``"transform_only"`` (Greff et al. 2017, Table 1a).
        activation: activation of H; ReLU in the papers.
        transform_bias_initializer: start value of b_T (a float, or any Keras
            initializer). −2 as in the authors' CIFAR code; −1 for their MNIST nets.
        carry_bias_initializer: start value of b_C; by default −b_T.
        kernel_initializer: initializer of W_H, W_T and W_C (Xavier/Glorot uniform as in
            the authors' Caffe and Keras code).
        kernel_regularizer, bias_regularizer: passed to the H and gate layers.
    """

    def __init__(
        self,
        kind: str = "dense",
        kernel_size: int = 3,
        variant: str = "coupled",
        activation: str = "relu",
        transform_bias_initializer: float | str | dict = -2.0,
        carry_bias_initializer: float | str | dict | None = None,
        kernel_initializer: str | dict = "glorot_uniform",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if kind not in ("dense", "conv"):
            raise ValueError(f"Unknown Highway `kind`={kind!r}. Allowed values: dense, conv.")
        self.kind = kind
        self.kernel_size = int(kernel_size)
        self.variant = _check_variant(variant)
        self.activation = keras.activations.get(activation)
        self.transform_bias_initializer = _bias_initializer(transform_bias_initializer)
        self.carry_bias_initializer = (
            _negated(self.transform_bias_initializer)
            if carry_bias_initializer is None
            else _bias_initializer(carry_bias_initializer)
        )
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.bias_regularizer = keras.regularizers.get(bias_regularizer)
        self.merge = HighwayMerge(self.variant, name="merge")
        self.plain = None
        self.transform_gate = None
        self.carry_gate = None

    def _make(self, units: int, name: str, activation, bias_initializer):
        common = dict(
            activation=activation,
            kernel_initializer=independent(self.kernel_initializer),  # W_H, W_T, W_C apart
            bias_initializer=bias_initializer,
            kernel_regularizer=self.kernel_regularizer,
            bias_regularizer=self.bias_regularizer,
            name=name,
        )
        if self.kind == "dense":
            return keras.layers.Dense(units, **common)
        return keras.layers.Conv2D(units, self.kernel_size, padding="same", **common)

    def build(self, input_shape):
        expected_rank = 2 if self.kind == "dense" else 4
        if len(input_shape) != expected_rank:
            raise ValueError(
                f"Highway(kind={self.kind!r}) expects inputs of rank {expected_rank}, "
                f"got shape {tuple(input_shape)}."
            )
        units = input_shape[-1]
        if units is None:
            raise ValueError("Highway needs a known last (feature/channel) dimension.")
        self.plain = self._make(units, "plain", self.activation, "zeros")
        self.plain.build(input_shape)
        if _USES_TRANSFORM[self.variant]:
            self.transform_gate = self._make(
                units, "transform_gate", "sigmoid", self.transform_bias_initializer
            )
            self.transform_gate.build(input_shape)
        if _USES_CARRY[self.variant]:
            self.carry_gate = self._make(units, "carry_gate", "sigmoid", self.carry_bias_initializer)
            self.carry_gate.build(input_shape)

    def gates(self, x) -> dict:
        """The gate activations {"t": T(x), "c": C(x)} (only those the variant has)."""
        out = {}
        if self.transform_gate is not None:
            out["t"] = self.transform_gate(x)
        if self.carry_gate is not None:
            out["c"] = self.carry_gate(x)
        return out

    def call(self, x):
        gates = self.gates(x)
        inputs = [x, self.plain(x)] + [gates[k] for k in ("t", "c") if k in gates]
        return self.merge(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    @property
    def transform_gate_bias(self):
        """b_T, or −b_C for the carry-only variant (its equivalent transform bias)."""
        if self.transform_gate is not None:
            return self.transform_gate.bias
        return ops.negative(self.carry_gate.bias)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "kind": self.kind,
            "kernel_size": self.kernel_size,
            "variant": self.variant,
            "activation": keras.activations.serialize(self.activation),
            "transform_bias_initializer": keras.initializers.serialize(
                self.transform_bias_initializer
            ),
            "carry_bias_initializer": keras.initializers.serialize(self.carry_bias_initializer),
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": keras.regularizers.serialize(self.bias_regularizer),
        }
