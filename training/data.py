"""The one ``tf.data`` input pipeline: decode, cache, shuffle, augment (train only),
batch, prefetch. It feeds ``model.fit`` on every backend."""

from __future__ import annotations

import tensorflow as tf

from training.recipes import Recipe


def augment(image, recipe: Recipe, seed=None):
    """Pad (recipe size and mode), random crop back to the input size, random flip."""
    shape = tf.shape(image)
    if recipe.pad:
        p = recipe.pad
        mode = "REFLECT" if recipe.pad_mode == "reflect" else "CONSTANT"
        padded = tf.pad(image, [[p, p], [p, p], [0, 0]], mode=mode)
        image = tf.image.random_crop(padded, shape, seed=seed)
    if recipe.flip:
        image = tf.image.random_flip_left_right(image, seed=seed)
    return image


def make_pipeline(
    ds: tf.data.Dataset,
    recipe: Recipe,
    *,
    training: bool,
    batch_size: int,
    num_examples: int | None = None,
    seed: int | None = None,
    cache: bool = True,
    drop_remainder: bool = False,
) -> tf.data.Dataset:
    """Batches of ``(float32 raw 0-255 images, int64 labels)``; augmented when training."""
    if cache:
        ds = ds.cache()
    if training:
        buffer = num_examples or 10_000
        ds = ds.shuffle(buffer, seed=seed, reshuffle_each_iteration=True)
        ds = ds.map(lambda x, y: (augment(x, recipe), y), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(lambda x, y: (tf.cast(x, tf.float32), y), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch_size, drop_remainder=drop_remainder)
    return ds.prefetch(tf.data.AUTOTUNE)
