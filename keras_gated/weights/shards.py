"""Sharded weight files: a release too large for one file, as Keras writes it.

Keras saves a model's weights in shards with ``model.save_weights("model.weights.json",
max_shard_size=...)``: an index, ``model.weights.json``, whose ``weight_map`` names the
shard holding each layer's variables, and the shards ``model_00000.weights.h5``,
``model_00001.weights.h5``, ... beside it; ``model.load_weights`` reads the index. A
released checkpoint over ``MAX_SHARD_BYTES`` is kept this way (the Hub, ``zoo/`` and
git all take files of that size), every shard pinned by its own sha256 in the
release's config.

Nothing here imports Keras at module level.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SHARD_INDEX = "model.weights.json"
# The weight file of a save or zoo folder: one ``model.weights.h5`` (Keras's name), or a
# shard index in its place.
FOLDER_WEIGHT_FILES = ("model.weights.h5", SHARD_INDEX)
SHARD_PATTERN = "model_{:05d}.weights.h5"  # Keras's own names, from the index's stem
MAX_SHARD_BYTES = 45_000_000  # each shard file at most this size (45 MB)


def is_sharded(path: str | os.PathLike) -> bool:
    """True when ``path`` names a shard index (``*.weights.json``)."""
    return os.fspath(path).endswith(".weights.json")


def shard_names(index: str | os.PathLike) -> list[str]:
    """The shard file names an index lists, in order; a ValueError names an index that is
    not one (unreadable JSON, no ``weight_map``, a shard outside the index's folder)."""
    index = Path(index)
    try:
        weight_map = json.loads(index.read_text())["weight_map"]
        # A layer's variables may span shards: its entry is then a list of them.
        names = sorted({name for entry in weight_map.values()
                        for name in ([entry] if isinstance(entry, str) else entry)})
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(
            f"{index} is not a Keras shard index ({type(error).__name__}: {error}); save "
            "the weights again with model.save_weights('model.weights.json', "
            "max_shard_size=...)."
        ) from None
    outside = [n for n in names if not isinstance(n, str) or Path(n).name != n]
    if outside or not names:
        raise ValueError(
            f"{index} lists {'no shards' if not names else f'shards outside its folder: {outside}'}; "
            "a shard index names files beside it."
        )
    return names


def weight_files(path: str | os.PathLike) -> list[Path]:
    """The HDF5 files holding the arrays of a weight file: the file itself, or the shards
    of an index (each must exist beside it: a missing one is a FileNotFoundError naming it)."""
    path = Path(path)
    if not is_sharded(path):
        return [path]
    files = [path.parent / name for name in shard_names(path)]
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(
            f"The shard index {path} lists {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not beside it: copy every shard of "
            "the release into the same folder."
        )
    return files


def save_sharded(
    model: Any, folder: str | os.PathLike, *, max_shard_bytes: int = MAX_SHARD_BYTES
) -> list[Path]:
    """Save ``model``'s weights in ``folder`` as ``model.weights.json`` plus shards of at
    most ``max_shard_bytes`` each (files on disk, HDF5 overhead included); returns the
    index and the shards. Keras caps a shard's arrays, not its file, so the arrays' cap
    is lowered until every file fits; one variable larger than the cap is a ValueError."""
    folder = Path(folder)
    index = folder / SHARD_INDEX
    largest = max((_nbytes(v) for v in model.weights), default=0)
    # The arrays' caps tried: 0.9, 0.81, ... of the file cap, then the largest variable
    # itself (plus a byte against rounding), the smallest cap Keras accepts.
    caps = [c for c in (0.9**i * max_shard_bytes for i in range(1, 30)) if c > largest]
    for arrays_cap in [*caps, largest + 1] if largest < max_shard_bytes else []:
        _remove_sharded(folder)
        model.save_weights(os.fspath(index), max_shard_size=arrays_cap / 1024**3)
        shards = [folder / n for n in shard_names(index)]
        if all(s.stat().st_size <= max_shard_bytes for s in shards):
            return [index, *shards]
    _remove_sharded(folder)
    raise ValueError(
        f"A variable of {largest:,} bytes does not fit a shard of at most "
        f"{max_shard_bytes:,} bytes: raise `max_shard_bytes`."
    )


def _nbytes(variable: Any) -> int:
    import math

    import ml_dtypes  # noqa: F401  (a Keras dependency: numpy learns bfloat16 and float8)
    import numpy as np

    return math.prod(variable.shape) * np.dtype(variable.dtype).itemsize


def _remove_sharded(folder: Path) -> None:
    """Delete an index and the shards Keras wrote beside it in ``folder``."""
    (folder / SHARD_INDEX).unlink(missing_ok=True)
    for shard in folder.glob("model_*.weights.h5"):
        shard.unlink()


def narrow_to_bfloat16(path: str | os.PathLike) -> int:
    """Store every float32 array of a Keras weight file (or of each shard of an index)
    whose values are all exactly bfloat16 numbers as bfloat16, in Keras's own form (a
    2-byte dataset with the attribute ``dtype="bfloat16"``), which Keras loads into
    float32 variables exactly. Lossless: other arrays (BatchNorm moving statistics kept
    in float32) stay as they are. Each file is written anew beside itself and then
    replaces it (HDF5 does not give back the space of a replaced dataset). Returns how
    many arrays were narrowed."""
    import h5py

    narrowed = 0
    for file in weight_files(path):
        partial = file.with_name(f"partial-{file.name}")
        with h5py.File(file, "r") as source, h5py.File(partial, "w") as target:
            narrowed += _copy_narrowed(source, target)
        os.replace(partial, file)
    return narrowed


def _copy_narrowed(source: Any, target: Any) -> int:
    """Copy an HDF5 group's attributes, groups and datasets, narrowing exact-bfloat16
    float32 arrays (see ``narrow_to_bfloat16``); returns how many were narrowed."""
    import h5py
    import ml_dtypes
    import numpy as np

    for key, value in source.attrs.items():
        target.attrs[key] = value
    narrowed = 0
    for name, item in source.items():
        if isinstance(item, h5py.Group):
            narrowed += _copy_narrowed(item, target.create_group(name))
            continue
        value = item[()]
        attrs = dict(item.attrs)
        if item.dtype == np.float32 and "dtype" not in attrs:
            low = value.astype(ml_dtypes.bfloat16)
            if np.array_equal(low.astype(np.float32), value):
                value = low
                attrs["dtype"] = "bfloat16"
                narrowed += 1
        dataset = target.create_dataset(name, data=value)
        for key, item_value in attrs.items():
            dataset.attrs[key] = item_value
    return narrowed
