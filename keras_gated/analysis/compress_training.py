"""The training ``compress`` runs in its phases (pressure, fine-tuning), epoch by epoch,
with a backup after each epoch so that a stopped run resumes where it stopped.

Each epoch is one plain ``fit`` call. On ``(x, y)`` arrays the epoch's order is a
permutation drawn from ``(seed, epoch)`` and, with ``augment``, its images are padded by
4 pixels (reflected), cropped back at a random offset and flipped left-right with
probability 1/2 (``keras_gated.training.transforms``, the CIFAR recipe), drawn from
``(seed, epoch)`` too: epoch e sees the same images whether the run went through or was
resumed before it.

The backup follows ``keras.callbacks.BackupAndRestore``: the model's weights with the
optimizer's state (``save_weights``) and the epochs done, per phase, in one folder;
``settings.json`` there refuses a resume with other arguments. It is crash-safe: each
epoch's weights go to a new file (``<phase>-<epochs>.weights.h5``), then the phase's
record (``<phase>.json``: the epochs done and that file's name) is replaced atomically,
so whenever the process dies the record names complete weights of the epochs it counts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import keras
import numpy as np

from keras_gated.files import check_not_linked, write_text_atomic
from keras_gated.training.transforms import Transforms, augment_batch, batch_rng, epoch_order

CIFAR_AUGMENTATION = Transforms(batch_size=1, shuffle=True, pad=4, pad_mode="reflect", flip=True)
SCHEDULES = ("constant", "cosine")
SETTINGS_FILE = "settings.json"
# The files a backup writes (settings, per-phase records and weights, and their partial
# versions): the only files it ever deletes.
# Settings a backup records since they were added (what the run trains on, and from):
# a backup written before, whose settings.json lacks one, is not compared on it.
RECORDED_WHEN_STORED = ("training_data", "source_weights")
BACKUP_FILE = re.compile(r"(settings|[a-z]+)\.json(\.partial)?|[a-z]+(-\d{4}|\.partial)?\.weights\.h5")


class RunBackup:
    """The per-epoch backup of one ``compress`` run, in ``folder`` (None: no backup)."""

    def __init__(self, folder: str | Path | None, settings: dict[str, Any]) -> None:
        self.folder = None if folder is None else Path(folder)
        if self.folder is None:
            return
        check_backup_folder(self.folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / SETTINGS_FILE
        wanted = json.loads(json.dumps(settings))
        if path.is_file():
            found = json.loads(path.read_text())
            changed = sorted(k for k in set(found) | set(wanted) if found.get(k) != wanted.get(k)
                             and not (k in RECORDED_WHEN_STORED and k not in found))
            if changed:
                raise ValueError(f"The backup in {self.folder} is of a compress run with other "
                                 f"settings ({', '.join(changed)}): give the same arguments to "
                                 "resume it, or a new backup folder to start afresh.")
        else:
            write_text_atomic(path, json.dumps(wanted, indent=1, sort_keys=True))

    def _record(self, phase: str) -> Path:
        return self.folder / f"{phase}.json"

    def restore(self, phase: str, model: keras.Model) -> list[dict]:
        """Load the phase's last backup into the compiled ``model`` (weights and optimizer
        state); the metrics of the epochs it had done ([] when there is none)."""
        if self.folder is None or not self._record(phase).is_file():
            return []
        record = json.loads(self._record(phase).read_text())
        # A record without "weights" was written before the epoch-stamped files.
        weights = self.folder / record.get("weights", f"{phase}.weights.h5")
        if not weights.is_file():
            return []
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        model.load_weights(weights)
        return record["epochs"]

    def save(self, phase: str, model: keras.Model, rows: list[dict]) -> None:
        """Back up ``model`` (weights and optimizer state) after ``len(rows)`` epochs."""
        if self.folder is None:
            return
        name = f"{phase}-{len(rows):04d}.weights.h5"
        partial = self.folder / f"{phase}.partial.weights.h5"
        model.save_weights(partial)
        partial.replace(self.folder / name)
        write_text_atomic(self._record(phase), json.dumps({"epochs": rows, "weights": name}, indent=1))
        for old in (*self.folder.glob(f"{phase}-*.weights.h5"), self.folder / f"{phase}.weights.h5"):
            if old.name != name:
                old.unlink(missing_ok=True)

    def delete(self) -> None:
        """Remove the backup (the run has ended and its outputs are written)."""
        if self.folder is not None:
            remove_backup(self.folder)


def check_backup_folder(folder: Path) -> None:
    """Refuse (``ValueError``) a backup folder that is a symbolic link, or that holds files
    but no compress backup (``settings.json``): the backup writes there and deletes its
    own files afterwards, so it never takes over a folder of other files."""
    check_not_linked(folder, "The backup folder")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"The backup folder {folder} is a file: give a new folder.")
    # A backup of the earlier layout has no settings.json, only the backup's own files.
    foreign = [p.name for p in folder.iterdir() if not BACKUP_FILE.fullmatch(p.name)] \
        if folder.is_dir() and not (folder / SETTINGS_FILE).is_file() else []
    if foreign:
        raise ValueError(f"The backup folder {folder} holds files that are not a compress "
                         f"backup's (e.g. {foreign[0]}): give a new or empty folder.")


def remove_backup(folder: str | Path) -> None:
    """Remove the files a compress backup wrote in ``folder``, then the folder if nothing
    else is left in it; any other file (and a linked folder) is left as it is."""
    folder = Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        return
    for path in folder.iterdir():
        if BACKUP_FILE.fullmatch(path.name) and path.is_file() and not path.is_symlink():
            path.unlink()
    with contextlib.suppress(OSError):  # not empty: files of someone else stay
        folder.rmdir()


def digest(*arrays: Any) -> str:
    """A short sha256 of ``arrays`` (their dtype, shape and bytes): what a backup records
    of the data it trains on and of the weights it starts from."""
    import hashlib

    h = hashlib.sha256()
    for array in arrays:
        array = np.ascontiguousarray(array)
        h.update(f"{array.dtype.str}{array.shape}".encode())
        h.update(memoryview(array).cast("B"))
    return h.hexdigest()[:16]


def weights_digest(model: keras.Model) -> str:
    """``digest`` of every weight of ``model``, in order."""
    return digest(*(np.asarray(keras.ops.convert_to_numpy(w)) for w in model.weights))


def data_digest(data: Any) -> str | None:
    """``digest`` of ``(x, y)`` arrays; None for other data (a dataset, a ``PyDataset``),
    which cannot be read twice cheaply."""
    if isinstance(data, (tuple, list)) and len(data) == 2:
        return digest(np.asarray(data[0]), np.asarray(data[1]))
    return None


def check_finite(model: keras.Model, row: dict, phase: str, epoch: int) -> None:
    """Stop (``ValueError``, one sentence) when an epoch's training metrics or the model's
    weights are NaN or infinite: a diverged net is never backed up nor written."""
    bad = [name for name, value in row.items() if not math.isfinite(value)]
    if not bad and not all(np.isfinite(np.asarray(keras.ops.convert_to_numpy(w))).all()
                           for w in model.weights):
        bad = ["the weights"]
    if bad:
        raise ValueError(f"Training diverged in epoch {epoch + 1} of the {phase} phase "
                         f"({', '.join(bad)} became NaN or infinite): lower the learning rate "
                         "or the pressure strength and run again; nothing was written.")


def from_logits(model: keras.Model) -> bool:
    """Whether the model's ``predictions`` layer leaves its outputs as logits."""
    try:
        activation = model.get_layer("predictions").activation
    except ValueError:
        return False
    return getattr(activation, "__name__", "") != "softmax"


def _steps_per_epoch(data, batch_size: int) -> int | None:
    if isinstance(data, (tuple, list)):
        return math.ceil(len(data[0]) / batch_size)
    try:
        return len(data)
    except TypeError:
        return None


def _epoch_arrays(x: np.ndarray, y: np.ndarray, *, epoch: int, seed: int,
                  augment: bool) -> tuple[np.ndarray, np.ndarray]:
    """Epoch ``epoch``'s examples in its order, augmented when asked (images only)."""
    transforms = dataclasses.replace(CIFAR_AUGMENTATION, seed=seed)
    order = epoch_order(len(x), transforms, epoch)
    xs, ys = x[order], y[order]
    if augment and np.ndim(x) == 4:
        xs = augment_batch(xs.astype("float32"), transforms, batch_rng(transforms, epoch, 0))
    return xs, ys


def train_epochs(model: keras.Model, data, *, epochs: int, batch_size: int,
                 learning_rate: float, schedule: str = "constant", augment: bool = False,
                 seed: int = 0, verbose: int = 0, backup: RunBackup | None = None,
                 phase: str = "train",
                 on_epoch: Callable[[str, int, dict], None] | None = None) -> list[dict]:
    """Train ``model`` for ``epochs`` with SGD (momentum 0.9, Nesterov) at
    ``learning_rate``, held (``"constant"``) or decayed to 0 along a half cosine over the
    run's steps (``"cosine"``: lr_t = lr/2·(1 + cos(π t/T))); resumes from ``backup``'s
    ``phase`` when it has one. ``data``: ``(x, y)`` arrays, or anything ``fit`` takes as
    ``x`` (then ``augment`` does not apply). One dict of metrics per epoch."""
    if schedule not in SCHEDULES:
        raise ValueError(f"Unknown schedule {schedule!r}; choose one of {', '.join(SCHEDULES)}.")
    if epochs == 0:
        return []
    rate: Any = learning_rate
    steps = _steps_per_epoch(data, batch_size)
    if schedule == "cosine" and steps is not None:
        rate = keras.optimizers.schedules.CosineDecay(learning_rate, decay_steps=steps * epochs)
    model.compile(
        optimizer=keras.optimizers.SGD(rate, momentum=0.9, nesterov=True),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits(model)),
        metrics=["accuracy"],
    )
    backup = backup or RunBackup(None, {})
    rows = backup.restore(phase, model)
    for epoch in range(len(rows), epochs):
        if isinstance(data, (tuple, list)):
            xs, ys = _epoch_arrays(np.asarray(data[0]), np.asarray(data[1]), epoch=epoch,
                                   seed=seed, augment=augment)
            history = model.fit(xs, ys, batch_size=batch_size, epochs=epoch + 1,
                                initial_epoch=epoch, shuffle=False, verbose=verbose,
                                callbacks=[keras.callbacks.TerminateOnNaN()]).history
        else:
            history = model.fit(data, epochs=epoch + 1, initial_epoch=epoch, verbose=verbose,
                                callbacks=[keras.callbacks.TerminateOnNaN()]).history
        row = {name: float(values[-1]) for name, values in history.items()}
        check_finite(model, row, phase, epoch)  # before the backup: never a NaN backup
        rows.append(row)
        backup.save(phase, model, rows)
        if on_epoch is not None:
            on_epoch(phase, epoch, rows[-1])
    return rows
