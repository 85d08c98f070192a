"""The input pipeline, described once: what happens to a split's images between the
data set and ``model.fit``. One ``Transforms`` (``Transforms.from_recipe``) is run by the
numpy engine (``keras_gated.training.numpy_engine``, with this module's ``augment_batch``),
by the ``tf.data`` engine (``keras_gated.training.tf_epochs`` and ``tf_augment``) and by the
GPU lease's compiled JAX step (``training/lease/device_step.py``); compression's phases
(``keras_gated.training.phases``) train through the numpy engine. None adds a step of its
own. Each draws its random crops and flips in its own framework, from the same
distribution.

In order, for a training split:

1. decode (``keras_gated.datasets``: uint8 images ``(N, H, W, C)``, done once per run);
2. shuffle: a new order every epoch, drawn from the run's seed;
3. batch (``batch_size``; the last batch smaller unless ``drop_remainder``);
4. cast to float32 (raw 0-255 pixels: the normalisation is a layer of the model);
5. pad by ``pad`` pixels (``constant``: zeros, ``reflect``: mirrored without the edge,
   ``mean``: the model's normalisation mean, i.e. zero padding after normalisation) and
   crop back to the input size at an offset uniform over the ``2 pad + 1`` positions of
   each axis, independently per image;
6. flip each image left-right with probability 1/2.

An evaluation split is batched and cast only (steps 3 and 4), in the split's order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

PAD_MODES = ("constant", "reflect", "mean")


@dataclasses.dataclass(frozen=True)
class Transforms:
    """One pipeline's settings (see the module docstring for what each step does)."""

    batch_size: int
    shuffle: bool = False
    pad: int = 0
    pad_mode: str = "constant"
    fill: float | tuple[float, ...] = 0.0  # the padding value of pad_mode="mean"
    flip: bool = False
    seed: int | None = None
    drop_remainder: bool = False

    def __post_init__(self):
        if self.pad_mode not in PAD_MODES:
            raise ValueError(f"Unknown pad mode {self.pad_mode!r}; choose one of {PAD_MODES}.")

    @property
    def augments(self) -> bool:
        return bool(self.pad) or self.flip

    @classmethod
    def from_recipe(cls, recipe, *, training: bool, batch_size: int, seed: int | None = None,
                    pad_fill: float | Sequence[float] = 0.0,
                    drop_remainder: bool = False) -> Transforms:
        """A recipe's pipeline: augmented and shuffled when ``training``, else in order."""
        fill = tuple(float(v) for v in pad_fill) if isinstance(pad_fill, Sequence) else float(pad_fill)
        if not training:
            return cls(batch_size, drop_remainder=drop_remainder)
        return cls(batch_size, shuffle=True, pad=recipe.pad, pad_mode=recipe.pad_mode or "constant",
                   fill=fill, flip=recipe.flip, seed=seed, drop_remainder=drop_remainder)


def epoch_order(num_examples: int, transforms: Transforms, epoch: int) -> np.ndarray:
    """The example order of ``epoch``: a permutation drawn from ``(seed, epoch)`` when
    shuffling, else the split's order. The same seed and epoch give the same order."""
    if not transforms.shuffle:
        return np.arange(num_examples)
    seed = 0 if transforms.seed is None else transforms.seed
    return np.random.default_rng([seed, epoch]).permutation(num_examples)


def batch_rng(transforms: Transforms, epoch: int, index: int) -> np.random.Generator:
    """The random generator of one batch's augmentation: a function of (seed, epoch, batch
    index) only, so a batch is the same whichever thread makes it and whenever."""
    seed = 0 if transforms.seed is None else transforms.seed
    return np.random.default_rng([seed, epoch, index, 1])


def pad_batch(images: np.ndarray, transforms: Transforms) -> np.ndarray:
    """Step 5's padding of a float32 batch ``(N, H, W, C)``."""
    p = transforms.pad
    widths = ((0, 0), (p, p), (p, p), (0, 0))
    if transforms.pad_mode == "reflect":
        return np.pad(images, widths, mode="reflect")
    if transforms.pad_mode == "mean":
        fill = np.asarray(transforms.fill, images.dtype)
        return np.pad(images - fill, widths) + fill
    return np.pad(images, widths)


def crop_offsets(rng: np.random.Generator, n: int, pad: int) -> tuple[np.ndarray, np.ndarray]:
    """Top and left offsets of ``n`` crops, each uniform over ``0 .. 2 pad``."""
    offsets = rng.integers(0, 2 * pad + 1, size=(2, n))
    return offsets[0], offsets[1]


def augment_batch(images: np.ndarray, transforms: Transforms, rng: np.random.Generator) -> np.ndarray:
    """Steps 5 and 6 on a float32 batch ``(N, H, W, C)``, vectorised: one gather crops
    every image at its own offset, one indexed copy flips the chosen ones."""
    n, height, width, _ = images.shape
    if transforms.pad:
        padded = pad_batch(images, transforms)
        top, left = crop_offsets(rng, n, transforms.pad)
        rows = top[:, None] + np.arange(height)[None, :]
        cols = left[:, None] + np.arange(width)[None, :]
        images = padded[np.arange(n)[:, None, None], rows[:, :, None], cols[:, None, :]]
    if transforms.flip:
        flip = rng.random(n) < 0.5
        images = images.copy() if not transforms.pad else images
        images[flip] = images[flip, :, ::-1]
    return images
