"""Fully-connected nets of the Residual Gates MNIST experiments (Savarese & Figueiredo
2017, §3.1, Table 1) and the fully-connected Highway nets (Srivastava et al. 2015).

Every net is: flatten -> one linear ``units``-wide layer (``stem``) -> ``depth`` middle
layers of ``units`` -> softmax. Only the middle layers differ:

* ``PlainNet``:   each layer f(x) = ReLU(BN(W x))             (Dot-BN-ReLU), or with
                  ``batch_norm=False`` f(x) = H(W x + b), the plain layer of the Highway
                  paper's depth experiments (71 units, He init, ReLU or tanh)
* ``GPlainNet``:  each layer u = g(k)·f(x) + (1 − g(k))·x     (one k per layer)
* ``ResNetFC``:   depth/2 blocks u = f_r(x) + x, f_r = two Dot-BN-ReLU layers, or with
                  ``preactivation=True`` two BN-ReLU-Dot layers (He et al. 2016's unit)
                  and one BN-ReLU after the last block
* ``GResNetFC``:  depth/2 blocks u = g(k)·f_r(x) + x           (one k per block)
* ``HighwayFC``:  depth Highway layers y = H·T + x·(1 − T), H = ReLU(W_H x + b_H),
                  T = sigmoid(W_T x + b_T), b_T started at ``transform_bias``

The paper uses the post-activation (Dot-BN-ReLU) layer in ResNets too, so f_r ends in a
ReLU before the addition: "we also tried pre-activation FC ResNets, which did worse on
the validation set" (§3.1), the variant ``preactivation=True`` builds. Dense layers
before a BN have no bias (BN's β replaces it); neither have the pre-activation layers'
(as the convolutions of pre-activation units).
"""

from __future__ import annotations

import re
from typing import Any

import keras

from keras_gated.layers.initializers import independent
from keras_gated.layers.batch_norm import BatchNormalization
from keras_gated.layers.highway import Highway
from keras_gated.layers.residual_gate import ResidualGate, check_gate_function
from keras_gated.models.builder import (
    APPLICATION_ARGUMENTS,
    MNIST_FC_INPUT,
    build_application,
    public_constructor,
)

REGISTERED_DEPTHS = (2, 10, 20, 50, 100)
_PREFIX = {
    ("plain", False): "plainnet",
    ("plain", True): "gplainnet",
    ("resnet", False): "resnetfc",
    ("resnet", True): "gresnetfc",
    ("highway", False): "highwayfc",
}
DEFAULT_UNITS = 50  # the paper's width
# What fc_net_name adds to a registered name (another width, pre-activation blocks).
VARIANT_SUFFIX = r"(_w\d+)?(_preact)?"


def fc_net_name(prefix: str, depth: int, units: int = DEFAULT_UNITS,
                preactivation: bool = False) -> str:
    """The model name (registry name, weight-id prefix, default ``model.name``):
    ``gresnetfc10``; another width than the paper's is added (``gresnetfc10_w100``), and
    so are pre-activation blocks (``resnetfc10_preact``)."""
    return (f"{prefix}{depth}" + ("" if units == DEFAULT_UNITS else f"_w{units}")
            + ("_preact" if preactivation else ""))


def _dense_bn_relu(x, units: int, name: str, bn_momentum: float):
    """One Dot-BN-ReLU layer."""
    x = keras.layers.Dense(units, use_bias=False, name=f"{name}_dense")(x)
    x = BatchNormalization(momentum=bn_momentum, epsilon=1e-3, name=f"{name}_bn")(x)
    return keras.layers.ReLU(name=f"{name}_relu")(x)


def _bn_relu_dense(x, units: int, name: str, bn_momentum: float):
    """One pre-activation layer: BN-ReLU-Dot."""
    x = BatchNormalization(momentum=bn_momentum, epsilon=1e-3, name=f"{name}_bn")(x)
    x = keras.layers.ReLU(name=f"{name}_relu")(x)
    return keras.layers.Dense(units, use_bias=False, name=f"{name}_dense")(x)


def _dense_act(x, units: int, name: str, activation: str, kernel_initializer):
    """One plain layer without batch norm: H(W x + b)."""
    x = keras.layers.Dense(units, kernel_initializer=independent(kernel_initializer),
                           name=f"{name}_dense")(x)
    return keras.layers.Activation(activation, name=f"{name}_{activation}")(x)


def _fc_features(
    kind: str,
    depth: int,
    units: int,
    gate: str | None,
    transform_bias: float,
    k_init: float,
    highway: dict,
    plain: dict,
    preactivation: bool = False,
):
    bn_momentum = 0.99  # Keras defaults: the paper's nets were written in Keras
    layer = _bn_relu_dense if preactivation else _dense_bn_relu

    def features(x):
        x = keras.layers.Flatten(name="flatten")(x)
        x = keras.layers.Dense(units, name="stem")(x)
        if kind == "plain":
            for i in range(1, depth + 1):
                f = (_dense_act(x, units, f"layer{i}", **plain) if plain
                     else _dense_bn_relu(x, units, f"layer{i}", bn_momentum))
                x = f if gate is None else ResidualGate(
                    gate, form="plain", k_initializer=k_init, name=f"block{i}"
                )([f, x])
        elif kind == "resnet":
            for i in range(1, depth // 2 + 1):
                r = layer(x, units, f"block{i}_layer1", bn_momentum)
                r = layer(r, units, f"block{i}_layer2", bn_momentum)
                if gate is None:
                    x = keras.layers.Add(name=f"block{i}")([r, x])
                else:
                    x = ResidualGate(
                        gate, form="residual", k_initializer=k_init, name=f"block{i}"
                    )([r, x])
            if preactivation:  # the sum of the last block, normalised and rectified
                x = BatchNormalization(momentum=bn_momentum, epsilon=1e-3, name="post_bn")(x)
                x = keras.layers.ReLU(name="post_relu")(x)
        else:
            for i in range(1, depth + 1):
                x = Highway(
                    "dense", transform_bias_initializer=transform_bias, name=f"block{i}",
                    **highway,
                )(x)
        return x

    return features


def _fc_net(
    kind: str,
    gate: str | None,
    *,
    depth: int = 10,
    units: int = 50,
    transform_bias: float = -2.0,
    k_init: float = 1.0,
    highway: dict | None = None,
    plain: dict | None = None,
    preactivation: bool = False,
    **application: Any,
) -> keras.Model:
    if not isinstance(preactivation, bool):
        raise ValueError(f"`preactivation` must be True or False, got {preactivation!r}.")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"`depth` must be a positive integer, got {depth!r}.")
    if kind == "resnet" and depth % 2:
        raise ValueError(
            f"`depth`={depth} must be even for residual FC nets: they have depth/2 blocks "
            "of two layers."
        )
    if isinstance(units, bool) or not isinstance(units, int) or units < 1:
        raise ValueError(f"`units` must be a positive integer, got {units!r}.")
    if gate is not None:
        check_gate_function(gate)
    arch = fc_net_name(_PREFIX[(kind, gate is not None)], depth, units, preactivation)
    return build_application(
        _fc_features(kind, depth, units, gate, transform_bias, k_init, highway or {}, plain or {},
                     preactivation),
        arch=arch,
        spec=MNIST_FC_INPUT,
        **application,
    )


_ARGS_DOC = """
    Args:
        depth: number of middle layers (default 10).
        units: width of every layer (50 in the paper).
        include_top, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, include_preprocessing, name: the applications
            arguments (``input_shape=(28, 28, 1)``; ``pooling`` has no effect: the
            features are already a vector; ``include_preprocessing``: x / 255).
"""


@public_constructor(*APPLICATION_ARGUMENTS, defaults={"classes": 10})
def PlainNet(
    depth: int = 10,
    units: int = 50,
    batch_norm: bool = True,
    activation: str = "relu",
    kernel_initializer: str | dict = "he_normal",
    **kwargs: Any,
) -> keras.Model:
    if not isinstance(batch_norm, bool):
        raise ValueError(f"`batch_norm` must be True or False, got {batch_norm!r}.")
    if batch_norm and (activation != "relu" or kernel_initializer != "he_normal"):
        raise ValueError(
            "`activation` and `kernel_initializer` set the plain layers without batch norm; "
            "pass batch_norm=False with them (the Dot-BN-ReLU layers use ReLU and Keras's "
            "default initializer)."
        )
    plain = None if batch_norm else {"activation": activation,
                                     "kernel_initializer": kernel_initializer}
    return _fc_net("plain", None, depth=depth, units=units, plain=plain, **kwargs)


@public_constructor("k_init", *APPLICATION_ARGUMENTS, defaults={"classes": 10})
def GPlainNet(depth: int = 10, units: int = 50, gate: str = "relu", **kwargs: Any) -> keras.Model:
    return _fc_net("plain", gate, depth=depth, units=units, **kwargs)


@public_constructor(*APPLICATION_ARGUMENTS, defaults={"classes": 10})
def ResNetFC(depth: int = 10, units: int = 50, preactivation: bool = False,
             **kwargs: Any) -> keras.Model:
    return _fc_net("resnet", None, depth=depth, units=units, preactivation=preactivation,
                   **kwargs)


@public_constructor("k_init", *APPLICATION_ARGUMENTS, defaults={"classes": 10})
def GResNetFC(depth: int = 10, units: int = 50, gate: str = "relu", preactivation: bool = False,
              **kwargs: Any) -> keras.Model:
    return _fc_net("resnet", gate, depth=depth, units=units, preactivation=preactivation,
                   **kwargs)


@public_constructor(*APPLICATION_ARGUMENTS, defaults={"classes": 10})
def HighwayFC(
    depth: int = 10,
    units: int = 50,
    transform_bias: float = -2.0,
    activation: str = "relu",
    kernel_initializer: str | dict = "he_normal",
    **kwargs: Any,
) -> keras.Model:
    return _fc_net(
        "highway", None, depth=depth, units=units, transform_bias=transform_bias,
        highway={"activation": activation, "kernel_initializer": kernel_initializer},
        **kwargs,
    )


PlainNet.__doc__ = (
    "Plain FC net: ``depth`` Dot-BN-ReLU layers (Residual Gates Table 1), or with\n"
    "    ``batch_norm=False`` layers H(W x + b) (Highway Networks Fig. 1: 71 units, He init)."
    + _ARGS_DOC
    + "        batch_norm: Dot-BN-ReLU layers (True) or plain H(W x + b) layers (False).\n"
    + "        activation: H of the layers without batch norm (``relu`` or ``tanh``).\n"
    + "        kernel_initializer: of the layers without batch norm (He et al. 2015).\n"
)
GPlainNet.__doc__ = (
    "Gated plain FC net: u = g(k)·f(x) + (1 − g(k))·x per layer (Residual Gates Table 1)."
    + _ARGS_DOC
    + "        gate: the gating function g (``relu``, ``identity``, ``sigmoid``).\n"
    + "        k_init: the start value of every gate scalar k (1.0, the paper's).\n"
)
_PREACT_DOC = ("        preactivation: BN-ReLU-Dot layers in f_r and a BN-ReLU after the last block\n"
               "            (He et al. 2016), instead of the paper's Dot-BN-ReLU layers.\n")
ResNetFC.__doc__ = ("Residual FC net: depth/2 blocks u = f_r(x) + x (Residual Gates Table 1)."
                    + _ARGS_DOC + _PREACT_DOC)
GResNetFC.__doc__ = (
    "Gated residual FC net: depth/2 blocks u = g(k)·f_r(x) + x (Residual Gates Table 1)."
    + _ARGS_DOC
    + "        gate: the gating function g (``relu``, ``identity``, ``sigmoid``).\n"
    + "        k_init: the start value of every gate scalar k (1.0, the paper's).\n"
    + _PREACT_DOC
)
HighwayFC.__doc__ = (
    "Highway FC net: ``depth`` layers y = H·T + x·(1 − T) (Srivastava et al. 2015)."
    + _ARGS_DOC
    + "        transform_bias: start value of every b_T (negative: start by carrying).\n"
    + "        activation: the activation of H (``relu`` or ``tanh``: the paper searched both).\n"
    + "        kernel_initializer: of the H and T weights (He et al. 2015, as in the paper).\n"
)


# A residual FC net's block ends in Add([branch, input]) named block<i>: the residual
# form of a Residual Gate with g(k) = 1, which gate() puts in its place.
_MERGE_NAME = re.compile(r"^block\d+$")


def is_residual_merge(layer: keras.layers.Layer) -> bool:
    """Whether ``layer`` is the Add that ends a residual FC block."""
    return isinstance(layer, keras.layers.Add) and bool(_MERGE_NAME.match(layer.name))
