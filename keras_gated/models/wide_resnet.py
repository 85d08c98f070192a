"""Wide ResNets (Zagoruyko & Komodakis 2016) and gated Wide ResNets (Savarese &
Figueiredo 2017).

``WideResNet(n, k)`` has n basic pre-activation units per stage and widths
16k/32k/64k: WRN-d-k with d = 6n + 4 (the Residual Gates paper's "(n, k)" naming, so
``GWideResNet(4, 10)`` is G-WRN-28-10). Dropout sits before each unit's second
convolution. A gated WRN multiplies each unit's residual by g(k) after its second
convolution; the 1×1 projection shortcuts are not gated.

Convolutions start from Torch's untruncated normal(0, sqrt(2 / (k·k·C_in))) (fan-in), as
in the WRN reference code. ``batch_norm=False`` gives the normalisation-free units of
Residual Gates Table 7 (Conv-ReLU-Conv-ReLU, biases on).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras

from keras_gated.layers.preact_unit import he_normal_untruncated
from keras_gated.layers.residual_gate import check_gate_function
from keras_gated.models.application import (
    APPLICATION_ARGUMENTS,
    CIFAR_INPUT,
    build_application,
    public_constructor,
)
from keras_gated.models.cifar_resnet import cifar_resnet_features
from keras_gated.registry import register_model

# (depth, widen factor) of the registered Wide ResNets: WRN Tables 5-6 and Residual Gates.
REGISTERED_SIZES = ((16, 2), (16, 4), (16, 8), (28, 10), (40, 4), (40, 10), (52, 1))


def wrn_depth(n: int) -> int:
    """WRN-d-k depth d of a net with n units per stage: d = 6n + 4."""
    return 6 * n + 4


def _check_positive(value: Any, argument: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"`{argument}` must be a positive integer, got {value!r}.")
    return value


def _wide_resnet(
    n: int,
    k: int,
    gate: str | None,
    prefix: str,
    *,
    dropout: float = 0.0,
    batch_norm: bool = True,
    k_init: float = 1.0,
    include_top: bool = True,
    weights: str | None = None,
    input_tensor: Any = None,
    input_shape: Sequence[int | None] | None = None,
    pooling: str | None = None,
    classes: int = 10,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str | None = None,
) -> keras.Model:
    _check_positive(n, "n")
    _check_positive(k, "k")
    if gate is not None:
        check_gate_function(gate)
    arch = f"{prefix}_{wrn_depth(n)}_{k}" + ("" if batch_norm else "_nobn")
    features = cifar_resnet_features(
        (16 * k, 32 * k, 64 * k),
        n,
        block="basic",
        gate=gate,
        k_init=k_init,
        dropout=dropout,
        batch_norm=batch_norm,
        kernel_initializer=he_normal_untruncated("fan_in"),
    )
    return build_application(
        features,
        arch=arch,
        spec=CIFAR_INPUT,
        include_top=include_top,
        weights=weights,
        input_tensor=input_tensor,
        input_shape=input_shape,
        pooling=pooling,
        classes=classes,
        classifier_activation=classifier_activation,
        include_preprocessing=include_preprocessing,
        name=name,
    )


@public_constructor("batch_norm", *APPLICATION_ARGUMENTS, defaults={"classes": 10})
def WideResNet(n: int, k: int, dropout: float = 0.0, **kwargs: Any) -> keras.Model:
    """WRN-(6n+4)-k for CIFAR.

    Args:
        n: basic units per stage (WRN-28-10: n = 4).
        k: widen factor (widths 16k, 32k, 64k).
        dropout: dropout rate inside each unit (0.3 in the paper's CIFAR runs).
        batch_norm: False for the normalisation-free net of Residual Gates Table 7.
    """
    return _wide_resnet(n, k, None, "wrn", dropout=dropout, **kwargs)


@public_constructor("batch_norm", "k_init", *APPLICATION_ARGUMENTS, defaults={"classes": 10})
def GWideResNet(
    n: int, k: int, dropout: float = 0.0, gate: str = "relu", **kwargs: Any
) -> keras.Model:
    """Gated WRN-(6n+4)-k (Savarese & Figueiredo 2017): u = g(k)·f_r(x) + s(x).

    ``GWideResNet(4, 10, dropout=0.3)`` is the paper's G-WRN-28-10 (3.65 % CIFAR-10
    error). Same arguments as ``WideResNet``, plus

    Args:
        gate: the gating function g (``"relu"``, ``"identity"``, ``"sigmoid"``).
        k_init: the start value of every gate scalar k (1.0, the paper's).
    """
    return _wide_resnet(n, k, gate, "gwrn", dropout=dropout, **kwargs)


for _depth, _k in REGISTERED_SIZES:
    _n = (_depth - 4) // 6
    register_model(
        f"wrn_{_depth}_{_k}",
        WideResNet,
        family="wide_resnet",
        description=f"WRN-{_depth}-{_k} (Zagoruyko & Komodakis 2016), CIFAR",
        n=_n,
        k=_k,
    )
    register_model(
        f"gwrn_{_depth}_{_k}",
        GWideResNet,
        family="gwide_resnet",
        description=f"Gated WRN-{_depth}-{_k} (Savarese & Figueiredo 2017), CIFAR",
        n=_n,
        k=_k,
    )
