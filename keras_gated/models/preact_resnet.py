"""Pre-activation ResNets (He et al. 2016) and gated ResNets (Savarese & Figueiredo 2017)
for CIFAR-sized images.

Depth 6n+2 uses basic units (n per stage, widths 16/32/64); depth 9n+2 uses bottleneck
units (widths 64/128/256, inner width a quarter of that). ``block=None`` picks the
bottleneck for depth >= 164 (ResNet-164, ResNet-1001) and the basic unit below, or
whichever one the depth fits. A G-ResNet adds one Residual Gate per unit:
u = g(k)·f_r(x) + x, g = ReLU, k started at 1.

Convolutions start from Torch's untruncated normal(0, sqrt(2 / (k·k·C_out))) (fan-out),
as in the reference code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras

from keras_gated.layers.preact_unit import check_block_type, he_normal_untruncated
from keras_gated.layers.residual_gate import check_gate_function
from keras_gated.models.application import (
    APPLICATION_ARGUMENTS,
    CIFAR_INPUT,
    arguments_of,
    build_application,
    defaults_of,
    public_constructor,
)
from keras_gated.models.cifar_resnet import cifar_resnet_features
from keras_gated.registry import register_model

BASIC_WIDTHS = (16, 32, 64)
BOTTLENECK_WIDTHS = (64, 128, 256)
NAMED_DEPTHS = (20, 32, 44, 56, 110, 164, 1001)


def resolve_block(depth: int, block: str | None) -> tuple[str, int]:
    """(block type, units per stage) for a depth; a ValueError if the depth fits none."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 8:
        raise ValueError(
            f"`depth` must be an integer 6n+2 (basic units, e.g. 20, 56, 110) or 9n+2 "
            f"(bottleneck units, e.g. 164, 1001), got {depth!r}."
        )
    fits = {"basic": (depth - 2) % 6 == 0, "bottleneck": (depth - 2) % 9 == 0}
    per_stage = {"basic": (depth - 2) // 6, "bottleneck": (depth - 2) // 9}
    if block is not None:
        check_block_type(block)
        if not fits[block]:
            rule = "6n+2" if block == "basic" else "9n+2"
            raise ValueError(
                f"`depth`={depth} does not fit block={block!r}: {block} nets have depth "
                f"{rule}. Choose another depth or block."
            )
        return block, per_stage[block]
    preferred = ["bottleneck", "basic"] if depth >= 164 else ["basic", "bottleneck"]
    for candidate in preferred:
        if fits[candidate]:
            return candidate, per_stage[candidate]
    raise ValueError(
        f"`depth`={depth} fits no block type: basic nets have depth 6n+2 (20, 32, 44, "
        "56, 110, ...), bottleneck nets 9n+2 (29, 164, 1001, ...)."
    )


def _arch_name(prefix: str, depth: int, block: str) -> str:
    default_block, _ = resolve_block(depth, None)
    return f"{prefix}{depth}" if block == default_block else f"{prefix}{depth}_{block}"


def _resnet(
    depth: int,
    block: str | None,
    gate: str | None,
    prefix: str,
    *,
    shortcut: str = "projection",
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
    block, units = resolve_block(depth, block)
    if gate is not None:
        check_gate_function(gate)
    widths = BASIC_WIDTHS if block == "basic" else BOTTLENECK_WIDTHS
    arch = _arch_name(prefix, depth, block)
    features = cifar_resnet_features(
        widths,
        units,
        block=block,
        gate=gate,
        shortcut=shortcut,
        k_init=k_init,
        kernel_initializer=he_normal_untruncated("fan_out"),
        share_stage_preactivation=True,
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


@public_constructor("shortcut", *APPLICATION_ARGUMENTS, defaults={"classes": 10})
def PreActResNet(depth: int, block: str | None = None, **kwargs: Any) -> keras.Model:
    """A pre-activation ResNet for CIFAR (He et al. 2016, *Identity Mappings*).

    Args:
        depth: 6n+2 (basic units) or 9n+2 (bottleneck units).
        block: ``"basic"``, ``"bottleneck"`` or None (bottleneck for depth >= 164).
        shortcut: ``"projection"`` (default) or ``"zeropad"`` on a shape change.
    """
    return _resnet(depth, block, None, "preactresnet", **kwargs)


@public_constructor("shortcut", "k_init", *APPLICATION_ARGUMENTS, defaults={"classes": 10})
def GResNet(depth: int, block: str | None = None, gate: str = "relu", **kwargs: Any) -> keras.Model:
    """A gated pre-activation ResNet (Savarese & Figueiredo 2017): u = g(k)·f_r(x) + x.

    Same arguments as ``PreActResNet``, plus

    Args:
        gate: the gating function g (``"relu"``, the paper's choice; ``"identity"``;
            ``"sigmoid"``).
        k_init: the start value of every gate scalar k (1.0, the paper's: a gated net
            starts as its ungated twin).
    """
    return _resnet(depth, block, gate, "gresnet", **kwargs)


@public_constructor(*arguments_of(PreActResNet, "depth"), defaults=defaults_of(PreActResNet))
def PreActResNet20(**kwargs: Any) -> keras.Model:
    """Pre-act ResNet-20: 3 basic units per stage, 0.27 M parameters.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return PreActResNet(20, **kwargs)


@public_constructor(*arguments_of(PreActResNet, "depth"), defaults=defaults_of(PreActResNet))
def PreActResNet32(**kwargs: Any) -> keras.Model:
    """Pre-act ResNet-32: 5 basic units per stage.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return PreActResNet(32, **kwargs)


@public_constructor(*arguments_of(PreActResNet, "depth"), defaults=defaults_of(PreActResNet))
def PreActResNet44(**kwargs: Any) -> keras.Model:
    """Pre-act ResNet-44: 7 basic units per stage.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return PreActResNet(44, **kwargs)


@public_constructor(*arguments_of(PreActResNet, "depth"), defaults=defaults_of(PreActResNet))
def PreActResNet56(**kwargs: Any) -> keras.Model:
    """Pre-act ResNet-56: 9 basic units per stage.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return PreActResNet(56, **kwargs)


@public_constructor(*arguments_of(PreActResNet, "depth"), defaults=defaults_of(PreActResNet))
def PreActResNet110(**kwargs: Any) -> keras.Model:
    """Pre-act ResNet-110: 18 basic units per stage, 1.73 M parameters.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return PreActResNet(110, **kwargs)


@public_constructor(*arguments_of(PreActResNet, "depth"), defaults=defaults_of(PreActResNet))
def PreActResNet164(**kwargs: Any) -> keras.Model:
    """Pre-act ResNet-164: 18 bottleneck units per stage, 1.70 M parameters.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return PreActResNet(164, **kwargs)


@public_constructor(*arguments_of(PreActResNet, "depth"), defaults=defaults_of(PreActResNet))
def PreActResNet1001(**kwargs: Any) -> keras.Model:
    """Pre-act ResNet-1001: 111 bottleneck units per stage, 10.3 M parameters.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return PreActResNet(1001, **kwargs)


@public_constructor(*arguments_of(GResNet, "depth"), defaults=defaults_of(GResNet))
def GResNet20(**kwargs: Any) -> keras.Model:
    """Gated ResNet-20: pre-act ResNet-20 with one Residual Gate per unit.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return GResNet(20, **kwargs)


@public_constructor(*arguments_of(GResNet, "depth"), defaults=defaults_of(GResNet))
def GResNet32(**kwargs: Any) -> keras.Model:
    """Gated ResNet-32.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return GResNet(32, **kwargs)


@public_constructor(*arguments_of(GResNet, "depth"), defaults=defaults_of(GResNet))
def GResNet44(**kwargs: Any) -> keras.Model:
    """Gated ResNet-44.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return GResNet(44, **kwargs)


@public_constructor(*arguments_of(GResNet, "depth"), defaults=defaults_of(GResNet))
def GResNet56(**kwargs: Any) -> keras.Model:
    """Gated ResNet-56.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return GResNet(56, **kwargs)


@public_constructor(*arguments_of(GResNet, "depth"), defaults=defaults_of(GResNet))
def GResNet110(**kwargs: Any) -> keras.Model:
    """Gated ResNet-110.

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return GResNet(110, **kwargs)


@public_constructor(*arguments_of(GResNet, "depth"), defaults=defaults_of(GResNet))
def GResNet164(**kwargs: Any) -> keras.Model:
    """Gated ResNet-164 (bottleneck).

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return GResNet(164, **kwargs)


@public_constructor(*arguments_of(GResNet, "depth"), defaults=defaults_of(GResNet))
def GResNet1001(**kwargs: Any) -> keras.Model:
    """Gated ResNet-1001 (bottleneck).

    Family arguments: those of ``PreActResNet`` (``block``, ``shortcut``), depth fixed.
    """
    return GResNet(1001, **kwargs)


for _depth in NAMED_DEPTHS:
    register_model(
        f"preactresnet{_depth}",
        PreActResNet,
        family="preact_resnet",
        description=f"Pre-activation ResNet-{_depth} (He et al. 2016), CIFAR",
        depth=_depth,
    )
    register_model(
        f"gresnet{_depth}",
        GResNet,
        family="gresnet",
        description=f"Gated pre-activation ResNet-{_depth} (Savarese & Figueiredo 2017), CIFAR",
        depth=_depth,
    )
