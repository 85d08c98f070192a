"""The ``tf`` engine's training batches as a function of the run's seed and the epoch.

A ``tf.data`` pipeline that reshuffles on every pass and draws its crops and flips from
stateful random ops gives epoch *e* an order and augmentations that depend on how many
passes this process has made, so a run stopped after epoch *e* and started again in a
new process would see the first epoch's batches again. Here every random choice of
epoch *e* is drawn from ``(seed, e)`` (the shuffle) and ``(seed, e, step)`` (the batch's
crops and flips, with TensorFlow's stateless random ops): a run resumed at an epoch
boundary trains on the batches the uninterrupted run trains on, as the numpy engine's
do (``keras_gated.training.numpy_engine``).

``fit`` takes ``from_epoch(first, last)``: epochs ``first .. last - 1`` one after the
other in one dataset, with ``steps_per_epoch`` steps each.
"""

from __future__ import annotations

import copy
import dataclasses
import random

from keras_gated.training.tf_augment import augment, tf_engine_tensorflow as _tf
from keras_gated.training.transforms import Transforms

# Epoch e of seed s shuffles with the seed s * EPOCH_STRIDE + e: distinct for every
# (seed, epoch) pair of runs up to a million epochs long.
EPOCH_STRIDE = 1_000_003




class SeededEpochs:
    """The training batches of a ``tf.data`` source, epoch by epoch.

    ``ds``: ``(uint8 image, label)`` pairs, cached here once (decoded images); each epoch
    is the whole source in one order drawn from ``(seed, epoch)``, cut into batches of
    ``transforms.batch_size``, cast to float32 and augmented as ``transforms`` says
    (``keras_gated.training.tf_augment.augment``, with the per-batch seed
    ``(seed * EPOCH_STRIDE + epoch, step)``). A ``transforms.seed`` of None draws one from
    Python's ``random`` (seeded by ``keras.utils.set_random_seed``).

    Iterating it (or ``as_numpy_iterator``) gives the epoch last set with ``set_epoch``
    (0 at first), as a one-pass ``tf.data`` pipeline would.
    """

    def __init__(self, ds, transforms: Transforms, *, num_examples: int | None = None,
                 cache: bool = True, options=None):
        tf = _tf()
        self.source = ds.cache() if cache else ds
        if num_examples is None:
            num_examples = int(ds.cardinality())
            if num_examples < 0:  # unknown or infinite: count the (cached) source once
                num_examples = int(self.source.reduce(tf.constant(0, tf.int64),
                                                      lambda count, _: count + 1))
        self.num_examples = num_examples
        seed = random.randrange(2**31) if transforms.seed is None else int(transforms.seed)
        self.transforms = dataclasses.replace(transforms, seed=seed)
        self.options = options
        self._epoch = 0

    @property
    def seed(self) -> int:
        return self.transforms.seed

    @property
    def batch_size(self) -> int:
        return self.transforms.batch_size

    @property
    def steps_per_epoch(self) -> int:
        whole, rest = divmod(self.num_examples, self.batch_size)
        return whole + (1 if rest and not self.transforms.drop_remainder else 0)

    def with_options(self, options) -> SeededEpochs:
        """The same batches with ``tf.data.Options`` applied to every dataset made (as
        ``tf.data.Dataset.with_options``)."""
        with_options = copy.copy(self)
        with_options.options = options
        return with_options

    def set_epoch(self, epoch: int) -> None:
        """The epoch that iterating this object gives."""
        self._epoch = int(epoch)

    def _one_epoch(self, epoch):
        """The batches of ``epoch`` (an int64 tensor inside ``from_epoch``)."""
        tf = _tf()
        # This function's graph gets a seed of its own, so the shuffle below is seeded by
        # (EPOCH_STRIDE, epoch_seed) whatever the process's global seed is (with a global
        # seed of 0, TensorFlow would test the tensor seed as a Python bool).
        tf.random.set_seed(EPOCH_STRIDE)
        epoch_seed = tf.constant(self.seed, tf.int64) * EPOCH_STRIDE + tf.cast(epoch, tf.int64)
        batches = (self.source
                   .shuffle(max(self.num_examples, 1), seed=epoch_seed,
                            reshuffle_each_iteration=False)
                   .batch(self.batch_size, drop_remainder=self.transforms.drop_remainder)
                   .enumerate())
        transforms = self.transforms

        def prepare(step, batch):
            images, labels = batch
            images = tf.cast(images, tf.float32)
            seed = tf.stack([epoch_seed, tf.cast(step, tf.int64)])
            return augment(images, transforms, seed=seed), labels

        return batches.map(prepare, num_parallel_calls=tf.data.AUTOTUNE)

    def from_epoch(self, first: int, last: int | None = None):
        """Epochs ``first`` to ``last - 1`` (one epoch without ``last``) in one
        ``tf.data.Dataset``, for ``fit(..., steps_per_epoch=self.steps_per_epoch)``."""
        tf = _tf()
        last = first + 1 if last is None else last
        ds = tf.data.Dataset.range(first, last).flat_map(self._one_epoch)
        if self.options is not None:
            ds = ds.with_options(self.options)
        return ds.prefetch(tf.data.AUTOTUNE)

    def __iter__(self):
        return iter(self.from_epoch(self._epoch))

    def as_numpy_iterator(self):
        return self.from_epoch(self._epoch).as_numpy_iterator()
