"""The TensorFlow-free engine of the input pipeline (``keras_gated.training.transforms``): the
decoded split held as numpy arrays, batches made by a ``keras.utils.PyDataset`` with
vectorised numpy (one gather per batch for the crops), on a few threads.

``keras.utils.PyDataset`` feeds ``fit``, ``evaluate`` and ``predict`` on every Keras
backend. Each batch is a function of (seed, epoch, batch index) alone, so an epoch is the
same whichever worker thread makes which batch, and a run resumed at epoch ``k``, batch
``b`` (``set_epoch(k, b)``) sees the batches an uninterrupted run would have seen.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math

import keras
import numpy as np

from keras_gated.training.transforms import Transforms, augment_batch, batch_rng, epoch_order

# Threads that make batches ahead of the training step (numpy releases the GIL in its
# copies and gathers), and how many batches each keeps ready ahead of the one asked for.
DEFAULT_WORKERS = 2
AHEAD_PER_WORKER = 2


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
    next epoch then has its own order and augmentations.

    The batches are made ahead on ``workers`` threads of this object's own, keyed by
    (epoch, batch index in the epoch): a batch asked for is always the batch of that key,
    whatever was made ahead before. Keras's own thread pool for a ``PyDataset``
    (``workers > 1``) is not used: when an iteration is abandoned (Keras builds a model
    on the first batch, then starts the epoch again; a run stopped mid-epoch) it hands
    the batches it had read ahead to the next iteration first, which would shift that
    epoch's order.
    """

    def __init__(self, source: ArraySource, transforms: Transforms, *,
                 workers: int = DEFAULT_WORKERS, epoch: int = 0):
        super().__init__()  # one Keras worker: Keras asks for the batches in order
        self.source = source
        self.transforms = transforms
        self.threads = max(int(workers), 0)
        self._executor = None
        self._ahead: dict[tuple[int, int], concurrent.futures.Future] = {}
        self._orders: dict[int, np.ndarray] = {}
        self.set_epoch(epoch)

    def set_epoch(self, epoch: int, start_batch: int = 0) -> None:
        """Make the batches of ``epoch`` (0-based) next, from its batch ``start_batch`` on
        (a run resumed in the middle of an epoch); later epochs are whole again."""
        self.epoch = epoch
        self.start_batch = start_batch

    def _full_length(self) -> int:
        n, size = len(self.source), self.transforms.batch_size
        return n // size if self.transforms.drop_remainder else math.ceil(n / size)

    def __len__(self) -> int:
        return self._full_length() - self.start_batch

    def examples_in(self, batches: int | None = None) -> int:
        """The examples in an epoch's first ``batches`` batches (None: the whole epoch)."""
        full = self._full_length()
        batches = full if batches is None else min(batches, full)
        return min(batches * self.transforms.batch_size, len(self.source))

    def _order(self, epoch: int) -> np.ndarray:
        if epoch not in self._orders:
            self._orders = {epoch: epoch_order(len(self.source), self.transforms, epoch)}
        return self._orders[epoch]

    def make_batch(self, epoch: int, index: int):
        """Batch ``index`` (its place in the whole epoch) of ``epoch``: a function of the
        source, the transforms, ``epoch`` and ``index`` alone."""
        size = self.transforms.batch_size
        chosen = self._order(epoch)[index * size:(index + 1) * size]
        images = self.source.images[chosen].astype(np.float32)
        if self.transforms.augments:
            images = augment_batch(images, self.transforms, batch_rng(self.transforms, epoch, index))
        return images, self.source.labels[chosen]

    def __getitem__(self, index: int):
        if not 0 <= index < len(self):
            raise IndexError(f"batch {index} of {len(self)}")
        key = (self.epoch, index + self.start_batch)
        if not self.threads:
            return self.make_batch(*key)
        self._order(self.epoch)  # made once, here, not by two threads at a time
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(
                self.threads, thread_name_prefix="keras-gated-batches")
        wanted = [(self.epoch, i) for i in range(key[1], min(key[1] + 1 + self.threads * AHEAD_PER_WORKER,
                                                             self._full_length()))]
        for stale in set(self._ahead) - set(wanted):  # another epoch, or batches passed over
            self._ahead.pop(stale).cancel()
        for k in wanted:
            if k not in self._ahead:
                self._ahead[k] = self._executor.submit(self.make_batch, *k)
        return self._ahead.pop(key).result()

    def on_epoch_end(self) -> None:
        self.set_epoch(self.epoch + 1)

    def __del__(self):
        if getattr(self, "_executor", None) is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
