"""Wide ResNets (Zagoruyko & Komodakis 2016) and gated Wide ResNets (Savarese &
Figueiredo 2017).

``WideResNet(n, widen_factor)`` has n basic pre-activation units per stage and widths
16w/32w/64w for a widen factor w: WRN-d-w with d = 6n + 4 (the Residual Gates paper's
"(n, k)" naming, whose k is the widen factor, so ``GWideResNet(4, 10)`` is G-WRN-28-10).
Dropout sits before each unit's second convolution. A gated WRN multiplies each unit's
residual by g(k), k the gate scalar, after its second convolution; the 1×1 projection
shortcuts are not gated.

Convolutions start from Torch's untruncated normal(0, sqrt(2 / (3·3·C_in))) (fan-in), as
in the WRN reference code. ``batch_norm=False`` gives the normalisation-free units of
Residual Gates Table 7 (Conv-ReLU-Conv-ReLU, biases on).
"""

from __future__ import annotations

from typing import Any

import keras

from keras_gated.layers.preact_unit import he_normal_untruncated
from keras_gated.layers.residual_gate import check_gate_function
from keras_gated.models.builder import (
    APPLICATION_ARGUMENTS,
    CIFAR_INPUT,
    build_application,
    public_constructor,
    renamed_arguments,
)
from keras_gated.models.preact_resnet.preact_resnet import preact_resnet_features

# (depth, widen factor) of the registered Wide ResNets: WRN Tables 5-6 and Residual Gates.
REGISTERED_SIZES = ((16, 2), (16, 4), (16, 8), (28, 10), (40, 4), (40, 10), (52, 1))


def wrn_depth(n: int) -> int:
    """The depth d of WRN-d-w, a net with n units per stage: d = 6n + 4."""
    return 6 * n + 4


def _check_positive(value: Any, argument: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"`{argument}` must be a positive integer, got {value!r}.")
    return value


def wrn_name(prefix: str, n: int, widen_factor: int, batch_norm: bool = True) -> str:
    """The model name (registry name, weight-id prefix, default ``model.name``):
    ``gwrn_28_10``, ``gwrn_16_2_nobn`` without batch normalisation."""
    return f"{prefix}_{wrn_depth(n)}_{widen_factor}" + ("" if batch_norm else "_nobn")


def _wide_resnet(
    n: int,
    widen_factor: int,
    gate: str | None,
    prefix: str,
    *,
    dropout: float = 0.0,
    batch_norm: bool = True,
    k_init: float = 1.0,
    **application: Any,
) -> keras.Model:
    _check_positive(n, "n")
    _check_positive(widen_factor, "widen_factor")
    if gate is not None:
        check_gate_function(gate)
    arch = wrn_name(prefix, n, widen_factor, batch_norm)
    features = preact_resnet_features(
        (16 * widen_factor, 32 * widen_factor, 64 * widen_factor),
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
        **application,
    )


@renamed_arguments(k="widen_factor")
@public_constructor("batch_norm", *APPLICATION_ARGUMENTS, defaults={"classes": 10})
def WideResNet(
    n: int = 4, widen_factor: int = 10, dropout: float = 0.0, **kwargs: Any
) -> keras.Model:
    """WRN-(6n+4)-w for CIFAR, w the widen factor; ``WideResNet()`` is WRN-28-10, the
    Wide ResNet paper's headline net (36,479,194 trainable parameters).

    Args:
        n: basic units per stage (WRN-28-10, the default: n = 4).
        widen_factor: w, the widths are 16w, 32w, 64w (WRN-28-10, the default: w = 10).
            Formerly ``k``, which still works with a DeprecationWarning.
        dropout: dropout rate inside each unit (0.3 in the paper's CIFAR runs, and in
            ``wrn_28_10.cifar10``, which ``weights="cifar10"`` loads: pass
            ``dropout=0.3`` to fine-tune it as it was trained).
        batch_norm: False for the normalisation-free net of Residual Gates Table 7.
    """
    return _wide_resnet(n, widen_factor, None, "wrn", dropout=dropout, **kwargs)


@renamed_arguments(k="widen_factor")
@public_constructor("batch_norm", "k_init", *APPLICATION_ARGUMENTS, defaults={"classes": 10})
def GWideResNet(
    n: int = 4,
    widen_factor: int = 10,
    dropout: float = 0.0,
    gate: str = "relu",
    **kwargs: Any,
) -> keras.Model:
    """Gated WRN-(6n+4)-w (Savarese & Figueiredo 2017): u = g(k)·f_r(x) + s(x).

    ``GWideResNet()`` is the paper's headline G-WRN-28-10 (n = 4, w = 10; 36,479,206
    trainable parameters, the 12 gate scalars more than WRN-28-10); with ``dropout=0.3``
    it is the net of the paper's 3.65 % CIFAR-10 error, and ``weights="cifar10"`` loads
    ``gwrn_28_10.cifar10``, trained with that dropout. Same arguments as ``WideResNet``,
    plus

    Args:
        gate: the gating function g (``"relu"``, ``"identity"``, ``"sigmoid"``).
        k_init: the start value of every gate scalar k (1.0, the paper's).
    """
    return _wide_resnet(n, widen_factor, gate, "gwrn", dropout=dropout, **kwargs)
