"""The 19-layer convolutional Highway net for CIFAR (Srivastava, Greff & Schmidhuber 2015,
*Highway Networks*, Table 1, "Highway 2"; authors' Caffe net ``cifar10-19layers``).

    Dropout(0.2) on the input
    Conv3x3(32)+ReLU  -> 4 × Highway conv(32)  -> MaxPool 2/2 -> Dropout(0.2)
    Conv3x3(80)+ReLU  -> 5 × Highway conv(80)  -> MaxPool 2/2 -> Dropout(0.2)
    Conv3x3(128)+ReLU -> 5 × Highway conv(128) -> Conv1x1(100)+ReLU
    avg_pool -> Dropout(0.2) -> predictions (10)

Each Highway conv layer is y = ReLU(W_H∗x + b_H)·T + x·(1 − T), T = sigmoid(W_T∗x + b_T),
with H and T both 3×3 convolutions, Xavier weights and b_T started at −2. No batch
normalisation. 2,256,838 parameters for 10 classes.

Differences from the Caffe original, on purpose: the input is normalised per channel
(CIFAR mean/std) instead of global contrast normalisation; the head's Gaussian filler
(std 0.05) is kept, the first conv uses Xavier (its Caffe filler is ill-specified).
"""

from __future__ import annotations

import warnings
from typing import Any

import keras

from keras_gated.layers.highway import Highway
from keras_gated.layers.highway_bottleneck import HighwayBottleneck
from keras_gated.models.builder import (
    APPLICATION_ARGUMENTS,
    CIFAR_INPUT,
    IMAGENET_INPUT,
    build_application,
    public_constructor,
)
from keras_gated.models.resnet.resnet import (
    imagenet_stages,
    imagenet_stem,
)

# (width, highway layers) per stage; a max-pool follows every stage but the last.
STAGES = ((32, 4), (80, 5), (128, 5))
FINAL_FILTERS = 100
DROPOUT = 0.2


def highwaynet_name(variant: str = "coupled") -> str:
    """The model name (registry name, weight-id prefix, default ``model.name``):
    ``highwaynet`` for the paper's coupled gates, ``highwaynet_<variant>`` otherwise."""
    return "highwaynet" if variant == "coupled" else f"highwaynet_{variant}"


def _highway_net_features(variant: str, transform_bias: float):
    def features(x):
        x = keras.layers.Dropout(DROPOUT, name="input_dropout")(x)
        for stage, (width, layers) in enumerate(STAGES, start=1):
            x = keras.layers.Conv2D(
                width, 3, padding="same", activation="relu", name=f"stage{stage}_conv"
            )(x)
            for i in range(1, layers + 1):
                x = Highway(
                    "conv",
                    kernel_size=3,
                    variant=variant,
                    transform_bias_initializer=transform_bias,
                    stage=stage,
                    name=f"stage{stage}_highway{i}",
                )(x)
            if stage < len(STAGES):
                x = keras.layers.MaxPooling2D(2, padding="same", name=f"stage{stage}_pool")(x)
                x = keras.layers.Dropout(DROPOUT, name=f"stage{stage}_dropout")(x)
        return keras.layers.Conv2D(
            FINAL_FILTERS, 1, activation="relu", name="final_conv"
        )(x)

    return features


@public_constructor(*APPLICATION_ARGUMENTS, defaults={"classes": 10})
def HighwayNet(
    variant: str = "coupled",
    transform_bias: float = -2.0,
    **application: Any,
) -> keras.Model:
    """The 19-layer CIFAR Highway net ("Highway 2", 92.24 % accuracy / 7.76 % error on CIFAR-10).

    Args:
        variant: Highway variant of every layer (Greff et al. 2017, Table 1a):
            ``"coupled"`` (the paper's), ``"full"``, ``"carry_only"``, ``"transform_only"``.
        transform_bias: start value of every b_T (−2 in the authors' CIFAR nets).
    """
    return build_application(
        _highway_net_features(variant, transform_bias),
        arch=highwaynet_name(variant),
        spec=CIFAR_INPUT,
        **application,
        head_dropout=DROPOUT,
        head_initializer=keras.initializers.RandomNormal(stddev=0.05),
    )


# -- The 50-layer ImageNet Highway net (Greff, Srivastava & Schmidhuber 2017, Table 1b) --
# A ResNet-50 (keras_gated.models.resnet) whose every block is a ``HighwayBottleneck``: H is
# the residual branch, T an equally expressive bottleneck with its own weights,
# y = H·T + c·(1 − T). Two sets of branch weights double the size at equal widths
# (46,278,952 parameters), so the bottleneck widths are reduced to m = 47/94/188/376
# (×0.734, outputs 188/376/752/1504; the stem keeps 64): 25,386,870 parameters, 0.67 %
# below ResNet-50. ``variant="highway"`` is H without a final ReLU (the paper's
# *Highway*), ``"final_relu"`` with it (the paper's *Highway-Full*; not the ``"full"``
# variant of the ``Highway`` layer, which has a separate carry gate).
HIGHWAYNET50_WIDTHS = (47, 94, 188, 376)
HIGHWAYNET50_VARIANTS = ("highway", "final_relu")
_RENAMED_VARIANTS = {"full": "final_relu"}


def highwaynet50_name(variant: str = "highway") -> str:
    """The model name (registry name, weight-id prefix, default ``model.name``):
    ``highwaynet50``, or ``highwaynet50_full`` for the paper's Highway-Full."""
    return "highwaynet50" if variant == "highway" else "highwaynet50_full"


@public_constructor(*APPLICATION_ARGUMENTS, defaults={"classes": 1000})
def HighwayNet50(
    variant: str = "highway",
    transform_bias: float = -2.0,
    **application: Any,
) -> keras.Model:
    """The 50-layer convolutional Highway net of Greff et al. 2017, Table 1b.

    **weights=None by default: this builds a RANDOMLY initialised net.** Unlike
    ``keras.applications`` ImageNet models, no ImageNet weights are released by
    keras-gated, and no pretrained Highway net exists elsewhere to convert; torchvision's
    or timm's ResNet-50 weights load into ``ResNet50`` / ``GResNet50`` with
    ``keras_gated.convert.convert("resnet50", path, "torchvision")``.

    Args:
        variant: ``"highway"`` (H = Conv-BN-ReLU-Conv-BN-ReLU-Conv-BN) or
            ``"final_relu"`` (H ends with a third ReLU: the paper's Highway-Full, named
            ``"full"`` before; that value still works, with a DeprecationWarning).
        transform_bias: start value of the β of T's last BN (the gate bias).
    """
    if variant in _RENAMED_VARIANTS:
        warnings.warn(
            f"HighwayNet50(variant={variant!r}) is deprecated: use "
            f"variant={_RENAMED_VARIANTS[variant]!r} (H ends in a ReLU; the Highway layer's "
            "variant='full' is a separate carry gate).",
            DeprecationWarning,
            stacklevel=3,  # the caller of the public constructor's wrapper
        )
        variant = _RENAMED_VARIANTS[variant]
    if variant not in HIGHWAYNET50_VARIANTS:
        raise ValueError(
            f"Unknown HighwayNet50 `variant`={variant!r}. Allowed values: "
            f"{', '.join(HIGHWAYNET50_VARIANTS)}."
        )

    def block(x, width, strides, name, stage):
        return HighwayBottleneck(
            4 * width, strides=strides, full_relu=variant == "final_relu",
            transform_bias=transform_bias, stage=stage, name=name,
        )(x)

    return build_application(
        lambda x: imagenet_stages(imagenet_stem(x), HIGHWAYNET50_WIDTHS, block),
        arch=highwaynet50_name(variant),
        spec=IMAGENET_INPUT,
        **application,
    )
