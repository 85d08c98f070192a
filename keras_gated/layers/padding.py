"""Convolution padding as the reference implementations do it.

Torch, Caffe and the WRN code pad a k×k convolution with (k − 1) / 2 zeros on *every*
side, whatever the stride. Keras ``padding="same"`` does the same at stride 1, but at
stride 2 on an even input it pads 0 rows/columns top-left and 1 bottom-right, which
shifts the sampling grid by one pixel (and against a 1×1 / subsampling shortcut). So a
strided convolution here is ``padding="valid"`` applied to an input padded
symmetrically first, as keras.applications' ResNetV2 does with ``ZeroPadding2D``.
Neither form adds weights: switching between them keeps every weight file valid.
"""

from __future__ import annotations

from typing import Any

import keras
from keras import ops

from keras_gated.layers.initializers import independent


def reference_padding(strides: int) -> str:
    """The Keras ``padding`` of a convolution whose input :func:`pad_for_conv` pads."""
    return "same" if int(strides) == 1 else "valid"


def symmetric_pad_width(kernel_size: int, strides: int) -> int:
    """Zeros added on each side before a strided convolution: (k − 1) / 2."""
    return (int(kernel_size) - 1) // 2 if int(strides) > 1 else 0


def reference_conv2d(filters: int, kernel_size: int, strides: int = 1, **kwargs: Any) -> keras.layers.Conv2D:
    """A Conv2D to be called through :func:`apply_conv` (reference padding); its kernel
    is drawn independently of every other layer's (``layers.initializers.independent``)."""
    if "kernel_initializer" in kwargs:
        kwargs["kernel_initializer"] = independent(kwargs["kernel_initializer"])
    return keras.layers.Conv2D(
        filters, kernel_size, strides=strides, padding=reference_padding(strides), **kwargs
    )


def _pad_of(conv: keras.layers.Conv2D) -> int:
    return symmetric_pad_width(conv.kernel_size[0], conv.strides[0])


def apply_conv(conv: keras.layers.Conv2D, x):
    """``conv(x)`` with (k − 1) / 2 zeros on every side when the convolution is strided."""
    pad = _pad_of(conv)
    if pad:
        x = ops.pad(x, [[0, 0], [pad, pad], [pad, pad], [0, 0]])
    return conv(x)


def padded_shape(conv: keras.layers.Conv2D, input_shape) -> tuple:
    """The shape :func:`apply_conv` hands to ``conv`` for an input of ``input_shape``."""
    pad = _pad_of(conv)
    batch, height, width, channels = input_shape
    grow = lambda size: None if size is None else size + 2 * pad  # noqa: E731
    return (batch, grow(height), grow(width), channels)


def build_conv(conv: keras.layers.Conv2D, input_shape) -> tuple:
    """Build ``conv`` for ``input_shape`` (as :func:`apply_conv` feeds it); its output shape."""
    shape = padded_shape(conv, tuple(input_shape))
    conv.build(shape)
    return conv.compute_output_shape(shape)
