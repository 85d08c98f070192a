"""The ``tf`` engine's run of a ``keras_gated.training.transforms.Transforms``: pad, random
crop back to the input size, random horizontal flip, on whole batches (one vectorised crop
and flip per batch). The random draws come from TensorFlow's stateful ops, or from a
stateless seed pair so that a batch's augmentation is a function of it
(``keras_gated.training.tf_epochs``)."""

from __future__ import annotations

from keras_gated.tensorflow_cpu import import_tensorflow
from keras_gated.training.transforms import Transforms


def tf_engine_tensorflow():
    """TensorFlow, or one sentence saying the tf.data engine needs it (the engine's one
    import of it: ``keras_gated.training.pipeline`` and ``keras_gated.training.tf_epochs``
    use this too)."""
    return import_tensorflow("The tf.data engine (--data-engine tf)")


def _uniform(shape, low, high, dtype, seed):
    """``tf.random.uniform``, or its stateless twin drawn from ``seed`` (a pair)."""
    tf = tf_engine_tensorflow()
    if seed is None:
        return tf.random.uniform(shape, low, high, dtype=dtype)
    return tf.random.stateless_uniform(shape, seed, low, high, dtype=dtype)


def _random_crop(images, height, width, pad: int, seed=None):
    """Each image of a padded batch ``(N, H + 2 pad, W + 2 pad, C)`` cropped back to
    ``(N, H, W, C)`` at its own random offset (uniform over the 2 pad + 1 positions per
    axis, as ``tf.image.random_crop``); ``seed``: a stateless seed pair, or None."""
    tf = tf_engine_tensorflow()
    n = tf.shape(images)[0]
    seeds = [None, None] if seed is None else tf.random.experimental.stateless_split(seed, 2)
    top = _uniform([n], 0, 2 * pad + 1, tf.int32, seeds[0])
    left = _uniform([n], 0, 2 * pad + 1, tf.int32, seeds[1])
    rows = top[:, None] + tf.range(height)[None, :]
    cols = left[:, None] + tf.range(width)[None, :]
    images = tf.gather(images, rows, axis=1, batch_dims=1)
    return tf.gather(images, cols, axis=2, batch_dims=1)


def _random_flip(images, seed=None):
    """Each image of a batch mirrored left-right with probability 1/2; ``seed``: a
    stateless seed pair, or None."""
    tf = tf_engine_tensorflow()
    flip = _uniform([tf.shape(images)[0]], 0.0, 1.0, tf.float32, seed) < 0.5
    return tf.where(flip[:, None, None, None], tf.reverse(images, axis=[2]), images)


def _pad(batch, transforms: Transforms):
    """Step 5's padding of ``transforms`` (its size and mode) on a float32 batch."""
    tf = tf_engine_tensorflow()
    p = transforms.pad
    paddings = [[0, 0], [p, p], [p, p], [0, 0]]
    if transforms.pad_mode == "reflect":
        return tf.pad(batch, paddings, mode="REFLECT")
    if transforms.pad_mode == "mean":
        fill = tf.cast(transforms.fill, batch.dtype)
        return tf.pad(batch - fill, paddings) + fill
    return tf.pad(batch, paddings)


def augment(images, transforms: Transforms, seed=None):
    """Steps 5 and 6 of ``transforms``: pad, random crop back to the input size, random flip.

    ``images`` is float32: one image ``(H, W, C)`` or a batch ``(N, H, W, C)`` whose
    images are cropped and flipped independently. ``pad_mode="mean"`` pads with
    ``transforms.fill``, the per-channel mean the model normalises with: the same as zero
    padding *after* normalisation, which is what the Torch references (fb.resnet.torch, the
    Highway Caffe nets) do. ``seed``: a stateless seed pair (the crops and flips are then
    a function of it), or None (TensorFlow's stateful random ops).
    """
    tf = tf_engine_tensorflow()
    seeds = [None, None] if seed is None else tf.random.experimental.stateless_split(seed, 2)
    single = images.shape.rank == 3
    batch = images[None] if single else images
    static_shape = batch.shape
    if transforms.pad:
        height, width = tf.shape(batch)[1], tf.shape(batch)[2]
        batch = _random_crop(_pad(batch, transforms), height, width, transforms.pad, seeds[0])
    if transforms.flip:
        batch = _random_flip(batch, seeds[1])
    batch = tf.ensure_shape(batch, static_shape)
    return batch[0] if single else batch
