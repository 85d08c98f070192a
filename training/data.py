"""The one ``tf.data`` input pipeline: decode, cache, shuffle, augment (train only),
batch, prefetch. It feeds ``model.fit`` on every backend."""

from __future__ import annotations

import tensorflow as tf

from keras_gated.recipes import Recipe


def random_subset(ds: tf.data.Dataset, num_examples: int, n: int, seed: int) -> tf.data.Dataset:
    """``n`` of a split's ``num_examples`` examples, drawn at random with ``seed``: the same
    ones on every pass. (Image folders list their files class by class, so the first n
    would miss whole classes.)"""
    if not 0 < n <= num_examples:
        raise ValueError(f"Cannot draw {n} of {num_examples} examples.")
    return ds.shuffle(num_examples, seed=seed, reshuffle_each_iteration=False).take(n)


def augment(image, recipe: Recipe, fill=0.0):
    """Pad (recipe size and mode), random crop back to the input size, random flip.

    ``image`` is float32. ``pad_mode="mean"`` pads with ``fill``, the per-channel mean
    the model normalises with: the same as zero padding *after* normalisation, which is
    what the Torch references (fb.resnet.torch, the Highway Caffe nets) do.
    """
    shape = tf.shape(image)
    if recipe.pad:
        p = recipe.pad
        paddings = [[p, p], [p, p], [0, 0]]
        if recipe.pad_mode == "reflect":
            padded = tf.pad(image, paddings, mode="REFLECT")
        elif recipe.pad_mode == "mean":
            fill = tf.cast(fill, image.dtype)
            padded = tf.pad(image - fill, paddings) + fill
        else:
            padded = tf.pad(image, paddings)
        image = tf.image.random_crop(padded, shape)
    if recipe.flip:
        image = tf.image.random_flip_left_right(image)
    return image


def normalisation_mean(model) -> list[float] | float:
    """The per-channel mean of a model's in-model ``preprocessing`` Normalization (0-255
    pixels), or 0 when it has none (the fill of ``pad_mode="mean"``)."""
    import keras
    import numpy as np

    try:
        layer = model.get_layer("preprocessing")
    except ValueError:
        return 0.0
    if not isinstance(layer, keras.layers.Normalization):
        return 0.0
    return np.asarray(keras.ops.convert_to_numpy(layer.mean)).reshape(-1).tolist()


def make_pipeline(
    ds: tf.data.Dataset,
    recipe: Recipe,
    *,
    training: bool,
    batch_size: int,
    num_examples: int | None = None,
    seed: int | None = None,
    pad_fill=0.0,
    cache: bool = True,
    drop_remainder: bool = False,
) -> tf.data.Dataset:
    """Batches of ``(float32 raw 0-255 images, int64 labels)``; augmented when training.

    ``pad_fill``: the padding value of ``pad_mode="mean"`` (see ``normalisation_mean``).
    """
    if cache:
        ds = ds.cache()
    if training:
        buffer = num_examples or 10_000
        ds = ds.shuffle(buffer, seed=seed, reshuffle_each_iteration=True)
    ds = ds.map(lambda x, y: (tf.cast(x, tf.float32), y), num_parallel_calls=tf.data.AUTOTUNE)
    if training:
        ds = ds.map(lambda x, y: (augment(x, recipe, pad_fill), y),
                    num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch_size, drop_remainder=drop_remainder)
    return ds.prefetch(tf.data.AUTOTUNE)
