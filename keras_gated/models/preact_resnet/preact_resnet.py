"""Pre-activation ResNets (He et al. 2016) and gated ResNets (Savarese & Figueiredo 2017)
for CIFAR-sized images.

Depth 6n+2 uses basic units (n per stage, widths 16/32/64); depth 9n+2 uses bottleneck
units (widths 64/128/256, inner width a quarter of that). ``block=None`` picks the
bottleneck for depth >= 164 (ResNet-164, ResNet-1001) and the basic unit below, or
whichever one the depth fits. A G-ResNet adds one Residual Gate per unit:
u = g(k)·f_r(x) + x, g = ReLU, k started at 1.

Convolutions start from Torch's untruncated normal(0, sqrt(2 / (k·k·C_out))) (fan-out),
as in the reference code.

The pre-activation skeleton (``preact_resnet_features``) is shared with the Wide ResNets
(``wide_resnet.py``):

    stem : Conv3x3(16), no bias
    stage s = 1, 2, 3 : ``units`` PreActUnits of width ``widths[s]``; the first unit of
                        stages 2 and 3 has stride 2
    top  : BN -> ReLU  (then the application head: avg_pool -> predictions)

``share_stage_preactivation=True`` makes the first unit of every stage share its
pre-activation with its shortcut even when it keeps the shape (fb.resnet.torch's
"both_preact" units, used by the pre-act ResNets); the WRN code shares it only where
the shape changes (``False``). Layer names (``stem_conv``, ``stage2_unit1``,
``final_bn``) are part of the weight-file contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras

from keras_gated.layers.batch_norm import BatchNormalization
from keras_gated.layers.initializers import independent
from keras_gated.layers.preact_unit import (
    PreActUnit,
    check_block_type,
    he_normal_untruncated,
)
from keras_gated.layers.residual_gate import check_gate_function
from keras_gated.models.builder import (
    APPLICATION_ARGUMENTS,
    CIFAR_INPUT,
    arguments_of,
    build_application,
    defaults_of,
    public_constructor,
)

STEM_FILTERS = 16


def preact_resnet_features(
    widths: Sequence[int],
    units_per_stage: int,
    *,
    block: str = "basic",
    gate: str | None = None,
    k_init: float = 1.0,
    shortcut: str = "projection",
    dropout: float = 0.0,
    batch_norm: bool = True,
    kernel_initializer: Any,
    bn_momentum: float = 0.9,
    bn_epsilon: float = 1e-5,
    share_stage_preactivation: bool = False,
):
    """A function mapping normalised images to the final (BN-ReLU'd) feature map.

    ``k_init`` is the start value of every Residual Gate's k (gated nets only).
    """

    def features(x):
        x = keras.layers.Conv2D(
            STEM_FILTERS,
            3,
            padding="same",
            use_bias=not batch_norm,
            kernel_initializer=independent(kernel_initializer),
            name="stem_conv",
        )(x)
        for stage, width in enumerate(widths, start=1):
            for unit in range(1, units_per_stage + 1):
                x = PreActUnit(
                    width,
                    strides=2 if stage > 1 and unit == 1 else 1,
                    block=block,
                    shortcut=shortcut,
                    dropout=dropout,
                    gate=gate,
                    k_initializer=k_init,
                    batch_norm=batch_norm,
                    bn_momentum=bn_momentum,
                    bn_epsilon=bn_epsilon,
                    kernel_initializer=kernel_initializer,
                    share_preactivation=share_stage_preactivation and unit == 1,
                    stage=stage,
                    name=f"stage{stage}_unit{unit}",
                )(x)
        if batch_norm:
            x = BatchNormalization(
                momentum=bn_momentum, epsilon=bn_epsilon, name="final_bn"
            )(x)
        return keras.layers.ReLU(name="final_relu")(x)

    return features


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


def preact_resnet_name(prefix: str, depth: int, block: str | None = None) -> str:
    """The model name (registry name, weight-id prefix, default ``model.name``):
    ``gresnet20``; a block other than the depth's default is added
    (``gresnet164_basic``: 27 basic units per stage instead of 18 bottlenecks)."""
    default_block, _ = resolve_block(depth, None)
    block = block or default_block
    return f"{prefix}{depth}" if block == default_block else f"{prefix}{depth}_{block}"


def _resnet(
    depth: int,
    block: str | None,
    gate: str | None,
    prefix: str,
    *,
    shortcut: str = "projection",
    k_init: float = 1.0,
    **application: Any,
) -> keras.Model:
    block, units = resolve_block(depth, block)
    if gate is not None:
        check_gate_function(gate)
    widths = BASIC_WIDTHS if block == "basic" else BOTTLENECK_WIDTHS
    arch = preact_resnet_name(prefix, depth, block)
    features = preact_resnet_features(
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
        **application,
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
