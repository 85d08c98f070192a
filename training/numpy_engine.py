"""The TensorFlow-free engine of the input pipeline (``training.transforms``): the
decoded split held as numpy arrays, batches made by a ``keras.utils.PyDataset`` with
vectorised numpy (one gather per batch for the crops), on a few threads.

``keras.utils.PyDataset`` feeds ``fit``, ``evaluate`` and ``predict`` on every Keras
backend. Each batch is a function of (seed, epoch, batch index) alone, so an epoch is the
same whichever worker thread makes which batch, and a run resumed at epoch ``k``, batch
``b`` (``set_epoch(k, b)``) sees the batches an uninterrupted run would have seen.
"""

from __future__ import annotations

import dataclasses
import math

import keras
import numpy as np

from training.transforms import Transforms, augment_batch, batch_rng, epoch_order

# Threads that make batches ahead of the training step (numpy releases the GIL in its
# copies and gathers); the queue holds this many batches per thread.
DEFAULT_WORKERS = 2
QUEUE_PER_WORKER = 4


@dataclasses.dataclass(frozen=True)
class ArraySource:
    """A decoded split: uint8 images ``(N, H, W, C)`` and int64 labels ``(N,)``, in the
    split's fixed order. ``take``/``skip`` as ``tf.data.Dataset``'s, so code that splits
    a source works on both engines."""

    images: np.ndarray
    labels: np.ndarray

    def __post_init__(self):
        if len(self.images) != len(self.labels):
            raise ValueError(f"{len(self.images)} images but {len(self.labels)} labels.")

    def __len__(self) -> int:
        return len(self.labels)

    def take(self, count: int) -> ArraySource:
        return ArraySource(self.images[:count], self.labels[:count])

    def skip(self, count: int) -> ArraySource:
        return ArraySource(self.images[count:], self.labels[count:])

    def subset(self, indices: np.ndarray) -> ArraySource:
        return ArraySource(self.images[indices], self.labels[indices])


class NumpyBatches(keras.utils.PyDataset):
    """Batches of ``(float32 raw 0-255 images, int64 labels)`` of ``source`` as
    ``transforms`` describes them. Keras calls ``on_epoch_end`` after every epoch: the
    next epoch then has its own order and augmentations."""

    def __init__(self, source: ArraySource, transforms: Transforms, *,
                 workers: int = DEFAULT_WORKERS, epoch: int = 0):
        super().__init__(workers=workers, use_multiprocessing=False,
                         max_queue_size=QUEUE_PER_WORKER * max(workers, 1))
        self.source = source
        self.transforms = transforms
        self.set_epoch(epoch)

    def set_epoch(self, epoch: int, start_batch: int = 0) -> None:
        """Make the batches of ``epoch`` (0-based) next, from its batch ``start_batch`` on
        (a run resumed in the middle of an epoch); later epochs are whole again."""
        self.epoch = epoch
        self.start_batch = start_batch
        self._order = epoch_order(len(self.source), self.transforms, epoch)

    def _full_length(self) -> int:
        n, size = len(self.source), self.transforms.batch_size
        return n // size if self.transforms.drop_remainder else math.ceil(n / size)

    def __len__(self) -> int:
        return self._full_length() - self.start_batch

    def __getitem__(self, index: int):
        if not 0 <= index < len(self):
            raise IndexError(f"batch {index} of {len(self)}")
        index += self.start_batch  # the batch's place in the whole epoch
        size = self.transforms.batch_size
        chosen = self._order[index * size:(index + 1) * size]
        images = self.source.images[chosen].astype(np.float32)
        if self.transforms.augments:
            images = augment_batch(images, self.transforms, batch_rng(self.transforms, self.epoch, index))
        return images, self.source.labels[chosen]

    def on_epoch_end(self) -> None:
        self.set_epoch(self.epoch + 1)
