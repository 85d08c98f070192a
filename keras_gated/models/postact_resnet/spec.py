"""The original CIFAR ResNets' declaration (``keras_gated.models.family_spec``)."""

from __future__ import annotations

from keras_gated.models.family_spec import FamilySpec, register_spec
from keras_gated.models.postact_resnet.postact_unit import GATED_VARIANTS, SHORTCUT_VARIANTS

WIDTHS = (16, 32, 64)


def parameter_count(depth: int, shortcut: str = "original", downsample: str = "zeropad",
                    classes: int = 10) -> int:
    """Trainable parameters of ``PostActResNet(depth, shortcut)``, in closed form.

    Stem conv 3·3·3·16 (no bias) and its BN (2·16); per unit c_in -> c: two 3×3
    convolutions without bias, 9·c_in·c + 9·c·c, and their BNs, 2·2·c; a 1×1 shortcut
    convolution and its BN, c_in·c + 2·c (every unit for ``conv1x1``, the shape-changing
    units for ``downsample="projection"``); a gate convolution with bias, c_in·c + c
    (gating variants); the head 64·classes + classes. The option-A shortcut, constant
    scaling and dropout add nothing.
    """
    n = (depth - 2) // 6
    total = 27 * 16 + 2 * 16
    c_in = 16
    for c in WIDTHS:
        for _ in range(n):
            total += 9 * c_in * c + 9 * c * c + 4 * c
            if shortcut == "conv1x1" or (c_in != c and downsample == "projection"):
                total += c_in * c + 2 * c
            if shortcut in GATED_VARIANTS:
                total += c_in * c + c
            c_in = c
    return total + c_in * classes + classes


SPEC = register_spec(FamilySpec(
    name="postact_resnet",
    registry_families=("postact_resnet",),
    citations=(
        ("postactresnet*_*", ("he2016identity", "he2016deep")),
        ("postactresnet*", ("he2016deep",)),
    ),
    parameter_counts={
        **{f"postactresnet{d}": parameter_count(d) for d in (20, 32, 44, 56, 110)},
        **{f"postactresnet110_{v}": parameter_count(110, v) for v in SHORTCUT_VARIANTS[1:]},
    },
))
