"""Pretrained weights on another number of input channels (timm's ``in_chans``).

As timm's ``adapt_input_conv``, the stem convolution's kernel is adapted to the new
channel count and every other weight is copied unchanged:

* 1 channel: the kernel summed over its input channels (a grey image then gives the
  response the colour net gives to that grey repeated on every channel);
* more channels: the kernel repeated along its input channels, cut to ``in_chans``
  and rescaled by ``original / in_chans`` so the response keeps its size.

The in-model normalisation of a model with another channel count uses the mean of the
per-channel statistics on every channel (``keras_gated.models.builder``).
"""

from __future__ import annotations

import math

import keras
import numpy as np


def adapt_input_conv(kernel: np.ndarray, in_chans: int) -> np.ndarray:
    """A channels-last conv ``kernel`` (height, width, channels, filters) adapted to
    ``in_chans`` input channels, as timm's ``adapt_input_conv``."""
    original = kernel.shape[-2]
    if in_chans == original:
        return kernel
    if in_chans == 1:
        return kernel.sum(axis=-2, keepdims=True)
    repeat = math.ceil(in_chans / original)
    tiled = np.concatenate([kernel] * repeat, axis=-2)[..., :in_chans, :]
    return tiled * (original / float(in_chans))


def copy_adapting_stem(source: keras.Model, target: keras.Model) -> None:
    """Copy ``source``'s weights into ``target``, the same network built on another
    number of input channels: layers are matched by name, and a convolution kernel that
    differs only in its input channels is adapted (``adapt_input_conv``). Any other
    difference is a ValueError."""
    for layer in target.layers:
        weights = layer.get_weights()
        if not weights:
            continue
        theirs = source.get_layer(layer.name).get_weights()
        adapted = []
        for mine, other in zip(weights, theirs, strict=True):
            if mine.shape != other.shape:
                stem_like = (mine.ndim == 4 and mine.shape[:2] == other.shape[:2]
                             and mine.shape[-1] == other.shape[-1])
                if not stem_like:
                    raise ValueError(
                        f"`in_chans` with pretrained weights adapts a convolutional stem "
                        f"only; layer {layer.name!r} has weights of shape {other.shape}, "
                        f"not {mine.shape}."
                    )
                other = adapt_input_conv(other, mine.shape[-2])
            adapted.append(other)
        layer.set_weights(adapted)
