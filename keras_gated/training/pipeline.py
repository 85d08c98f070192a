"""The input pipeline's engines: load a split for an engine, and run the pipeline that
``keras_gated.training.transforms`` describes on it. Both feed ``model.fit`` on every
backend, and both run the one ``Transforms`` that ``make_pipeline`` makes of a recipe.

* ``numpy`` (the default; no TensorFlow): the split as numpy arrays, batches made by a
  ``keras.utils.PyDataset`` (``keras_gated.training.numpy_engine``);
* ``tf``: a ``tf.data`` pipeline (decode, cache, shuffle, batch, augment, prefetch;
  ``keras_gated.training.tf_epochs``); TensorFlow needed.

Augmentation runs on whole batches in both (one vectorised crop and flip per batch, not
one function call per image): the pipeline then costs a fraction of the CPU time of
per-image maps, which on a CPU-only machine is taken from the training step itself.

TensorFlow is imported only when the ``tf`` engine is used.
"""

from __future__ import annotations

import keras
import numpy as np

from keras_gated import datasets
from keras_gated.training.numpy_engine import ArraySource, NumpyBatches
from keras_gated.training.recipes import Recipe
from keras_gated.training.tf_augment import tf_engine_tensorflow as _tf
from keras_gated.training.tf_epochs import SeededEpochs
from keras_gated.training.transforms import Transforms

ENGINES = ("numpy", "tf")
# The engine a run uses when it does not choose one (docs/data_engines.md: measured the
# faster of the two in `fit` here, and the one that needs no TensorFlow).
DEFAULT_ENGINE = "numpy"


def check_engine(engine: str | None) -> str:
    """``engine`` (None: the default), or a ValueError naming the choices."""
    engine = engine or DEFAULT_ENGINE
    if engine not in ENGINES:
        raise ValueError(f"Unknown data engine {engine!r}; choose one of {', '.join(ENGINES)}.")
    return engine


def engine_for(engine: str | None, strategy: str = "default") -> str:
    """The engine a run uses: ``engine`` when given, else ``tf`` under a tf.distribute
    strategy (which shards ``tf.data`` across replicas) and ``DEFAULT_ENGINE`` otherwise."""
    if engine is None and strategy in ("mirrored", "multiworker", "tpu"):
        return "tf"
    return check_engine(engine)


def load_split(dataset: str, split: str, engine: str | None = None):
    """``(source, info)``: a split loaded for ``engine``: an ``ArraySource`` (numpy) or a
    ``tf.data.Dataset`` of ``(uint8 image, int64 label)`` (tf), in the split's order."""
    if check_engine(engine) == "tf":
        _tf()  # one clear sentence where TensorFlow is missing
        return datasets.load(dataset, split)
    images, labels, info = datasets.load_numpy(dataset, split)
    return ArraySource(images, labels), info




def random_subset(ds, num_examples: int, n: int, seed: int):
    """``n`` of a split's ``num_examples`` examples, drawn at random with ``seed``: the same
    ones on every pass. (Image folders list their files class by class, so the first n
    would miss whole classes.) ``ds``: an ``ArraySource`` or a ``tf.data.Dataset``."""
    if not 0 < n <= num_examples:
        raise ValueError(f"Cannot draw {n} of {num_examples} examples.")
    return shuffled_once(ds, num_examples, seed).take(n)


def shuffled_once(ds, num_examples: int, seed: int):
    """The ``num_examples`` examples of ``ds`` in one order drawn with ``seed``, the same on
    every pass. ``ds``: an ``ArraySource`` or a ``tf.data.Dataset``."""
    if isinstance(ds, ArraySource):
        return ds.subset(np.random.default_rng(seed).permutation(num_examples))
    return ds.shuffle(num_examples, seed=seed, reshuffle_each_iteration=False)


def adapt_source(ds, shape: tuple[int, int, int]):
    """``keras_gated.datasets.adapt_images`` for either engine's source."""
    if isinstance(ds, ArraySource):
        return ArraySource(datasets.adapt_images(ds.images, shape), ds.labels)
    return datasets.adapt_images(ds, shape)


def normalisation_mean(model) -> list[float] | float:
    """The per-channel mean of a model's in-model ``preprocessing`` Normalization (0-255
    pixels), or 0 when it has none (the fill of ``pad_mode="mean"``)."""
    try:
        layer = model.get_layer("preprocessing")
    except ValueError:
        return 0.0
    if not isinstance(layer, keras.layers.Normalization):
        return 0.0
    return np.asarray(keras.ops.convert_to_numpy(layer.mean)).reshape(-1).tolist()


def make_pipeline(
    ds,
    recipe: Recipe,
    *,
    training: bool,
    batch_size: int,
    num_examples: int | None = None,
    seed: int | None = None,
    pad_fill=0.0,
    cache: bool = True,
    drop_remainder: bool = False,
):
    """Batches of ``(float32 raw 0-255 images, int64 labels)``; augmented when training.

    ``ds`` chooses the engine: an ``ArraySource`` gives a ``NumpyBatches`` (a
    ``keras.utils.PyDataset``), a ``tf.data.Dataset`` a ``tf.data`` pipeline (for
    training, ``keras_gated.training.tf_epochs.SeededEpochs``: one per epoch, a function of
    ``seed`` and the epoch); both run the one ``Transforms.from_recipe(recipe, ...)``.
    ``pad_fill``: the padding value of ``pad_mode="mean"`` (see ``normalisation_mean``).

    In the ``tf.data`` pipeline the cache holds the decoded images (uint8), shuffling
    draws from the whole split (``num_examples``), and the cast and augmentation run per
    batch, in parallel with the training step (``prefetch``).
    """
    transforms = Transforms.from_recipe(recipe, training=training, batch_size=batch_size,
                                        seed=seed, pad_fill=pad_fill,
                                        drop_remainder=drop_remainder)
    if isinstance(ds, ArraySource):
        return NumpyBatches(ds, transforms)
    if training:
        return SeededEpochs(ds, transforms, num_examples=num_examples, cache=cache)
    tf = _tf()
    if cache:
        ds = ds.cache()
    ds = ds.batch(transforms.batch_size, drop_remainder=transforms.drop_remainder)
    ds = ds.map(lambda images, labels: (tf.cast(images, tf.float32), labels),
                num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)
