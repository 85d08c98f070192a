"""ResNet-50 (He et al. 2015) and its gated twin, GResNet-50 (Residual Gates on every
bottleneck block, Savarese & Figueiredo 2017), for ImageNet-sized images.

Exactly torchvision's ``resnet50`` ("v1.5": the stride sits on the 3×3 convolution),
so its published weights load with ``keras_gated.convert`` (``source="torchvision"``,
the same key names as timm's ``resnet50``): 25,557,032 parameters for 1000 classes,
GResNet-50 16 more (one k per block).

    stem  : Conv7x7(64, s2) -> BN -> ReLU -> MaxPool3x3 s2
    stages: [3, 4, 6, 3] bottleneck blocks, widths m = 64/128/256/512, outputs 4m
    block : u = ReLU(g(k)·F(x) + s(x))   (see ``ResNetBottleneck``; ungated: g(k) = 1)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import keras

from keras_gated.layers.batch_norm import BatchNormalization
from keras_gated.layers.preact_unit import he_normal_untruncated
from keras_gated.layers.residual_gate import check_gate_function
from keras_gated.layers.resnet_bottleneck import ResNetBottleneck
from keras_gated.models.builder import (
    APPLICATION_ARGUMENTS,
    IMAGENET_INPUT,
    build_application,
    public_constructor,
)

BLOCKS_PER_STAGE = (3, 4, 6, 3)
RESNET50_WIDTHS = (64, 128, 256, 512)
STEM_FILTERS = 64
BN = dict(momentum=0.9, epsilon=1e-5)

# The warning that opens the docstring of every ImageNet constructor.
RANDOM_WEIGHTS_WARNING = """
    **weights=None by default: this builds a RANDOMLY initialised net.** Unlike
    ``keras.applications.ResNet50`` (which defaults to ``weights="imagenet"``), no
    ImageNet weights are released by keras-gated. To use torchvision's or timm's
    ResNet-50 weights, convert them (see ``keras_gated.convert``):
    ``keras_gated.convert.convert("resnet50", path, "torchvision")``.
"""


def imagenet_stem(x):
    """Conv7x7(64, s2, pad 3) -> BN -> ReLU -> MaxPool3x3(s2, pad 1), as torchvision."""
    x = keras.layers.ZeroPadding2D(3, name="stem_pad")(x)
    x = keras.layers.Conv2D(
        STEM_FILTERS, 7, strides=2, use_bias=False,
        kernel_initializer=he_normal_untruncated("fan_out"), name="stem_conv",
    )(x)
    x = BatchNormalization(**BN, name="stem_bn")(x)
    x = keras.layers.ReLU(name="stem_relu")(x)
    # Zero padding equals Torch's -inf padding here: the input is a ReLU output (>= 0).
    x = keras.layers.ZeroPadding2D(1, name="stem_pool_pad")(x)
    return keras.layers.MaxPooling2D(3, strides=2, name="stem_pool")(x)


def imagenet_stages(x, widths: Sequence[int], block: Callable[[Any, int, int, str, int], Any]):
    """The four stages of a 50-layer net (conv2..conv5); ``block(x, width, strides, name,
    stage)`` adds one block."""
    for stage, (width, blocks) in enumerate(zip(widths, BLOCKS_PER_STAGE), start=2):
        for b in range(1, blocks + 1):
            strides = 2 if stage > 2 and b == 1 else 1
            x = block(x, width, strides, f"conv{stage}_block{b}", stage)
    return x


def resnet50_name(gated: bool) -> str:
    """The model name (registry name, weight-id prefix, default ``model.name``)."""
    return "gresnet50" if gated else "resnet50"


def _resnet50(gate: str | None, k_init: float = 1.0, **kwargs: Any) -> keras.Model:
    if gate is not None:
        check_gate_function(gate)

    def block(x, width, strides, name, stage):
        return ResNetBottleneck(
            4 * width, strides=strides, gate=gate, k_initializer=k_init, stage=stage,
            name=name,
        )(x)

    return build_application(
        lambda x: imagenet_stages(imagenet_stem(x), RESNET50_WIDTHS, block),
        arch=resnet50_name(gate is not None), spec=IMAGENET_INPUT, **kwargs,
    )


@public_constructor(*APPLICATION_ARGUMENTS, defaults={"classes": 1000})
def ResNet50(
    **application: Any,
) -> keras.Model:
    """ResNet-50 (He et al. 2015), torchvision's v1.5 layout; Greff et al. 2017 Table 1b.
    {warning}"""
    return _resnet50(
        None,
        **application,
    )


@public_constructor(*APPLICATION_ARGUMENTS, defaults={"classes": 1000})
def GResNet50(
    gate: str = "relu",
    k_init: float = 1.0,
    **application: Any,
) -> keras.Model:
    """ResNet-50 with one Residual Gate per block: u = ReLU(g(k)·F(x) + s(x)), k = 1.
    {warning}
    ``keras_gated.gate(ResNet50(...))`` gives the same net with the ResNet-50 weights
    copied (e.g. converted torchvision weights), computing the same function until k is
    trained.

    Args:
        gate: the gating function g (``"relu"``, ``"identity"``, ``"sigmoid"``).
        k_init: the start value of every gate scalar k (1.0, the paper's).
    """
    return _resnet50(
        gate, k_init,
        **application,
    )


for _constructor in (ResNet50, GResNet50):
    _constructor.__doc__ = _constructor.__doc__.format(warning=RANDOM_WEIGHTS_WARNING)
