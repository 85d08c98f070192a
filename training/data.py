"""The one ``tf.data`` input pipeline: decode, cache, shuffle, augment (train only),
batch, prefetch. It feeds ``model.fit`` on every backend."""

from __future__ import annotations

import tensorflow as tf

from keras_gated.recipes import Recipe


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


def adapt_images(ds: tf.data.Dataset, shape: tuple[int, int, int]) -> tf.data.Dataset:
    """Fit images to a model's input shape: grey <-> RGB, then centre pad or crop.

    E.g. Fashion-MNIST (28×28×1) for a CIFAR model (32×32×3): tiled to 3 channels and
    zero-padded by 2 pixels on every side.
    """
    height, width, channels = shape

    def fit(image, label):
        if image.shape[-1] == 1 and channels == 3:
            image = tf.image.grayscale_to_rgb(image)
        elif image.shape[-1] == 3 and channels == 1:
            image = tf.cast(tf.image.rgb_to_grayscale(image), image.dtype)
        elif image.shape[-1] != channels:
            raise ValueError(f"Cannot adapt {image.shape[-1]}-channel images to {channels} channels.")
        return tf.image.resize_with_crop_or_pad(image, height, width), label

    return ds.map(fit, num_parallel_calls=tf.data.AUTOTUNE)
