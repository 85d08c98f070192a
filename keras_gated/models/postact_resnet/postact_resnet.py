"""The original (post-activation) CIFAR ResNets of He et al. 2015, and the shortcut
variants of He, Zhang, Ren & Sun 2016, *Identity Mappings in Deep Residual Networks*,
§3.1, Table 1 (Fig. 2), selected by ``shortcut``.

He et al. 2015 §4.2: depth 6n+2, n units per stage, widths 16/32/64 on 32/16/8 maps:

    stem : Conv3x3(16), no bias -> BN -> ReLU
    stage s = 1, 2, 3 : n ``PostActUnit``s of width 16·2^(s−1); the first unit of stages
                        2 and 3 has stride 2
    top  : (the application head: global avg_pool -> predictions)

Each unit is y = ReLU(F(x) + h(x)) with F = conv-BN-ReLU-conv-BN, or one of Table 1's
other shortcuts h (``postact_unit.py`` gives each equation). Table 1 modifies "the
110-layer ResNet as presented in [1]", whose CIFAR nets use option A shortcuts ("we use
identity shortcuts in all cases (i.e., option A)", He et al. 2015 §4.2), so
``downsample="zeropad"`` is the default; ``"projection"`` (option B) is the choice of
the pre-activation nets here. Convolutions start from Torch's untruncated
normal(0, sqrt(2 / (k·k·C_out))), as in fb.resnet.torch, the CIFAR reference; the
paper initialises "as in [23]" (He et al. 2015, *Delving deep into rectifiers*).

Layer names (``stem_conv``, ``stem_bn``, ``stage2_unit1``) are part of the weight-file
contract.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras

from keras_gated.layers.initializers import independent
from keras_gated.layers.batch_norm import BatchNormalization
from keras_gated.layers.preact_unit import he_normal_untruncated
from keras_gated.models.builder import (
    APPLICATION_ARGUMENTS,
    CIFAR_INPUT,
    arguments_of,
    build_application,
    defaults_of,
    public_constructor,
)
from keras_gated.models.postact_resnet.postact_unit import (
    DOWNSAMPLE_TYPES,
    GATED_VARIANTS,
    SHORTCUT_VARIANTS,
    PostActUnit,
    check_downsample,
    check_shortcut_variant,
)

__all__ = [
    "DOWNSAMPLE_TYPES",
    "NAMED_DEPTHS",
    "SHORTCUT_VARIANTS",
    "PostActResNet",
    "PostActResNet110",
    "PostActUnit",
    "postact_resnet_features",
    "parameter_count",
    "postact_resnet_name",
    "units_per_stage",
]

STEM_FILTERS = 16
WIDTHS = (16, 32, 64)
NAMED_DEPTHS = (20, 32, 44, 56, 110)
TABLE1_DEPTH = 110  # He et al. 2016, Table 1: ResNet-110 on CIFAR-10


def units_per_stage(depth: int) -> int:
    """n of a depth 6n+2; a ValueError for any other depth."""
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 8 or (depth - 2) % 6:
        raise ValueError(
            f"`depth` must be an integer 6n+2 with n >= 1 (8, 20, 32, 44, 56, 110, ...), "
            f"got {depth!r}."
        )
    return (depth - 2) // 6


def postact_resnet_name(depth: int, shortcut: str = "original") -> str:
    """The model name (registry name, weight-id prefix, default ``model.name``):
    ``postactresnet110`` for the original unit, ``postactresnet110_exclusive_gating``
    for a Table 1 variant. The variants' numbers (λ, b_g, p) and ``downsample`` are
    arguments of the model, not part of its name."""
    units_per_stage(depth)
    check_shortcut_variant(shortcut)
    return f"postactresnet{depth}" + ("" if shortcut == "original" else f"_{shortcut}")


def postact_resnet_features(
    depth: int,
    *,
    shortcut: str = "original",
    downsample: str = "zeropad",
    shortcut_scale: float = 0.5,
    residual_scale: float = 0.5,
    gate_bias: float = -6.0,
    shortcut_dropout: float = 0.5,
    kernel_initializer: Any = None,
    bn_momentum: float = 0.9,
    bn_epsilon: float = 1e-5,
) -> Callable[[Any], Any]:
    """A function mapping normalised images to the last unit's (ReLU'd) feature map."""
    units = units_per_stage(depth)
    kernel_initializer = kernel_initializer or he_normal_untruncated("fan_out")

    def features(x):
        x = keras.layers.Conv2D(
            STEM_FILTERS, 3, padding="same", use_bias=False,
            kernel_initializer=independent(kernel_initializer), name="stem_conv",
        )(x)
        x = BatchNormalization(momentum=bn_momentum, epsilon=bn_epsilon, name="stem_bn")(x)
        x = keras.layers.ReLU(name="stem_relu")(x)
        for stage, width in enumerate(WIDTHS, start=1):
            for unit in range(1, units + 1):
                x = PostActUnit(
                    width,
                    strides=2 if stage > 1 and unit == 1 else 1,
                    shortcut=shortcut,
                    downsample=downsample,
                    shortcut_scale=shortcut_scale,
                    residual_scale=residual_scale,
                    gate_bias=gate_bias,
                    shortcut_dropout=shortcut_dropout,
                    bn_momentum=bn_momentum,
                    bn_epsilon=bn_epsilon,
                    kernel_initializer=kernel_initializer,
                    stage=stage,
                    name=f"stage{stage}_unit{unit}",
                )(x)
        return x

    return features


FAMILY_ARGUMENTS = ("downsample", "shortcut_scale", "residual_scale", "gate_bias",
                    "shortcut_dropout")


@public_constructor(*FAMILY_ARGUMENTS, *APPLICATION_ARGUMENTS,
                    defaults={"classes": 10, "downsample": "zeropad", "shortcut_scale": 0.5,
                              "residual_scale": 0.5, "gate_bias": -6.0,
                              "shortcut_dropout": 0.5})
def PostActResNet(depth: int, shortcut: str = "original", **kwargs: Any) -> keras.Model:
    """The original CIFAR ResNet (He et al. 2015) with a shortcut of He et al. 2016,
    Table 1: y = ReLU(F(x) + h(x)), F = conv-BN-ReLU-conv-BN.

    Args:
        depth: 6n+2 (110: Table 1's ResNet-110, 18 units per stage).
        shortcut: Table 1's case (Fig. 2): ``"original"`` (h(x) = x), ``"constant_scaling"``
            (y = ReLU(β·F + λ·x)), ``"exclusive_gating"`` (y = ReLU(g·F + (1 − g)·x)),
            ``"shortcut_only_gating"`` (y = ReLU(F + (1 − g)·x)), ``"conv1x1"``
            (y = ReLU(F + BN(conv1x1(x))) on every unit) or ``"dropout"``
            (y = ReLU(F + dropout_p(x))); g(x) = sigmoid(conv1x1(x) + b_g).
        downsample: the shortcut where the shape changes: ``"zeropad"`` (option A, He et
            al. 2015's CIFAR nets; the default) or ``"projection"`` (option B,
            BN(conv1x1)).
        shortcut_scale: λ of ``constant_scaling`` (0.5 in Table 1; 0 gives the plain net).
        residual_scale: β, the scale of F in ``constant_scaling``: 0.5 = 1 − λ (Table 1's
            "frozen gating" row, the default) or 1.
        gate_bias: the start value of b_g of the gating variants (−6, the best of the
            paper's search over 0, −1, ..., −10).
        shortcut_dropout: the dropout rate p of ``dropout`` (0.5 in Table 1); the
            shortcut is multiplied by a Bernoulli(1 − p) mask in training and by 1 − p in
            inference (the paper: "an expectation of 0.5 on the shortcut").
    """
    check_shortcut_variant(shortcut)
    check_downsample(kwargs.get("downsample", "zeropad"))
    family = {key: kwargs.pop(key) for key in FAMILY_ARGUMENTS if key in kwargs}
    features = postact_resnet_features(depth, shortcut=shortcut, **family)
    return build_application(
        features,
        arch=postact_resnet_name(depth, shortcut),
        spec=CIFAR_INPUT,
        **kwargs,
    )


@public_constructor(*arguments_of(PostActResNet, "depth"), defaults=defaults_of(PostActResNet))
def PostActResNet110(**kwargs: Any) -> keras.Model:
    """ResNet-110 with the original unit (He et al. 2015), the network of He et al. 2016,
    Table 1: 18 units per stage, 1.73 M parameters.

    Family arguments: those of ``PostActResNet`` (``shortcut`` selects the Table 1
    case), depth fixed.
    """
    return PostActResNet(TABLE1_DEPTH, **kwargs)


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
