"""The 50-layer ImageNet pair of Greff, Srivastava & Schmidhuber 2017 (Table 1b): a
ResNet-50 and a Highway net of the same design and (within 2 %) the same size.

ResNet50 (He et al. 2015, post-activation, stride on the 3×3 as in torchvision's
"v1.5"): 25,557,032 parameters for 1000 classes.

    stem  : Conv7x7(64, s2) -> BN -> ReLU -> MaxPool3x3 s2
    stages: [3, 4, 6, 3] bottleneck blocks, widths m = 64/128/256/512, outputs 4m;
            block: Conv1x1(m)-BN-ReLU-Conv3x3(m, s)-BN-ReLU-Conv1x1(4m)-BN, + shortcut, ReLU

HighwayNet50 replaces every block by a ``HighwayBottleneck``: H is the residual branch,
T an equally expressive bottleneck with its own weights, y = H·T + c·(1 − T). Two sets
of branch weights double the size at equal widths (46,278,952 parameters), so the
bottleneck widths are reduced to **m = 47/94/188/376** (×0.734, outputs 188/376/752/1504;
the stem keeps 64): 25,386,870 parameters, 0.67 % below ResNet-50. ``variant="highway"``
is H without a final ReLU (the paper's *Highway*), ``"full"`` with it (*Highway-Full*).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras

from keras_gated.layers.highway_bottleneck import HighwayBottleneck
from keras_gated.layers.padding import reference_padding, symmetric_pad_width
from keras_gated.layers.preact_unit import he_normal_untruncated
from keras_gated.models.application import IMAGENET_INPUT, build_application
from keras_gated.registry import register_model

BLOCKS_PER_STAGE = (3, 4, 6, 3)
RESNET50_WIDTHS = (64, 128, 256, 512)
HIGHWAYNET50_WIDTHS = (47, 94, 188, 376)
HIGHWAYNET50_VARIANTS = ("highway", "full")
STEM_FILTERS = 64
BN = dict(momentum=0.9, epsilon=1e-5)


def _stem(x):
    x = keras.layers.ZeroPadding2D(3, name="stem_pad")(x)
    x = keras.layers.Conv2D(
        STEM_FILTERS, 7, strides=2, use_bias=False,
        kernel_initializer=he_normal_untruncated("fan_out"), name="stem_conv",
    )(x)
    x = keras.layers.BatchNormalization(**BN, name="stem_bn")(x)
    x = keras.layers.ReLU(name="stem_relu")(x)
    x = keras.layers.ZeroPadding2D(1, name="stem_pool_pad")(x)
    return keras.layers.MaxPooling2D(3, strides=2, name="stem_pool")(x)


def _conv_bn(x, filters: int, kernel: int, strides: int, name: str):
    pad = symmetric_pad_width(kernel, strides)
    if pad:  # torchvision pads a strided 3x3 by 1 on every side
        x = keras.layers.ZeroPadding2D(pad, name=f"{name}_pad")(x)
    x = keras.layers.Conv2D(
        filters, kernel, strides=strides, padding=reference_padding(strides), use_bias=False,
        kernel_initializer=he_normal_untruncated("fan_out"), name=f"{name}_conv",
    )(x)
    return keras.layers.BatchNormalization(**BN, name=f"{name}_bn")(x)


def _residual_bottleneck(x, width: int, strides: int, name: str):
    """A post-activation bottleneck block: ReLU(F(x) + shortcut(x))."""
    filters = 4 * width
    shortcut = x
    if x.shape[-1] != filters or strides != 1:
        shortcut = _conv_bn(x, filters, 1, strides, f"{name}_0")
    r = keras.layers.ReLU(name=f"{name}_1_relu")(_conv_bn(x, width, 1, 1, f"{name}_1"))
    r = keras.layers.ReLU(name=f"{name}_2_relu")(_conv_bn(r, width, 3, strides, f"{name}_2"))
    r = _conv_bn(r, filters, 1, 1, f"{name}_3")
    x = keras.layers.Add(name=f"{name}_add")([shortcut, r])
    return keras.layers.ReLU(name=f"{name}_out")(x)


def _stages(x, widths, block_fn):
    for stage, (width, blocks) in enumerate(zip(widths, BLOCKS_PER_STAGE), start=2):
        for b in range(1, blocks + 1):
            strides = 2 if stage > 2 and b == 1 else 1
            x = block_fn(x, width, strides, f"conv{stage}_block{b}")
    return x


def _imagenet_net(features, arch: str, **kwargs: Any) -> keras.Model:
    return build_application(features, arch=arch, spec=IMAGENET_INPUT, **kwargs)


def ResNet50(
    *,
    include_top: bool = True,
    weights: str | None = None,
    input_tensor: Any = None,
    input_shape: Sequence[int | None] | None = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str | None = None,
) -> keras.Model:
    """ResNet-50 (He et al. 2015), the baseline of Greff et al. 2017 Table 1b."""
    return _imagenet_net(
        lambda x: _stages(_stem(x), RESNET50_WIDTHS, _residual_bottleneck),
        "resnet50",
        include_top=include_top, weights=weights, input_tensor=input_tensor,
        input_shape=input_shape, pooling=pooling, classes=classes,
        classifier_activation=classifier_activation,
        include_preprocessing=include_preprocessing, name=name,
    )


def HighwayNet50(
    variant: str = "highway",
    transform_bias: float = -2.0,
    *,
    include_top: bool = True,
    weights: str | None = None,
    input_tensor: Any = None,
    input_shape: Sequence[int | None] | None = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str | None = None,
) -> keras.Model:
    """The 50-layer convolutional Highway net of Greff et al. 2017, Table 1b.

    Args:
        variant: ``"highway"`` (H = Conv-BN-ReLU-Conv-BN-ReLU-Conv-BN) or ``"full"``
            (H ends with a third ReLU).
        transform_bias: start value of the β of T's last BN (the gate bias).
    """
    if variant not in HIGHWAYNET50_VARIANTS:
        raise ValueError(
            f"Unknown HighwayNet50 `variant`={variant!r}. Allowed values: "
            f"{', '.join(HIGHWAYNET50_VARIANTS)}."
        )

    def block(x, width, strides, name):
        return HighwayBottleneck(
            4 * width, strides=strides, full_relu=variant == "full",
            transform_bias=transform_bias, name=name,
        )(x)

    return _imagenet_net(
        lambda x: _stages(_stem(x), HIGHWAYNET50_WIDTHS, block),
        "highwaynet50" if variant == "highway" else "highwaynet50_full",
        include_top=include_top, weights=weights, input_tensor=input_tensor,
        input_shape=input_shape, pooling=pooling, classes=classes,
        classifier_activation=classifier_activation,
        include_preprocessing=include_preprocessing, name=name,
    )


register_model(
    "resnet50", ResNet50, family="imagenet",
    description="ResNet-50 (He et al. 2015), baseline of Greff et al. 2017 Table 1b",
)
register_model(
    "highwaynet50", HighwayNet50, family="imagenet",
    description="50-layer conv Highway net (Greff et al. 2017 Table 1b), ResNet-50 size",
    variant="highway",
)
register_model(
    "highwaynet50_full", HighwayNet50, family="imagenet",
    description="50-layer conv Highway-Full net (H ends in ReLU), Greff et al. 2017",
    variant="full",
)
