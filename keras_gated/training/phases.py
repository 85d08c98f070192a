"""A run made of training phases (compression's pressure, then fine-tuning), each one a
pass of the library's resumable loop (``keras_gated.training.loop.fit_resumable``), with
the phases' backups under one folder.

A phase trains with SGD (momentum 0.9, Nesterov) at a learning rate held constant or
decayed to 0 along a half cosine over the phase's steps,

    lr_t = lr / 2 · (1 + cos(π t / T)),

on ``(x, y)`` arrays fed by the numpy engine (``NumpyBatches``: each epoch's order, and
with ``augment`` its padded crops and flips, drawn from the seed and the epoch alone, so
a resumed phase sees the batches an unstopped one saw), or on anything ``fit`` takes.

The backup folder of a run (``PhaseBackup``) holds ``settings.json`` (a resume with other
settings is refused, naming them) and one folder per phase, written by the loop: its
``backup/`` (``EpochBackup``: each epoch's weights and optimizer state in a new file,
``latest.json`` replaced atomically to name it), ``log.csv`` (one row per epoch, exactly
once), ``run_state.json`` and, for a gated net, ``gates.csv``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keras
import numpy as np

from keras_gated.files import (
    check_not_linked,
    check_outside_zoo,
    check_parent_folders,
    write_text_atomic,
)
from keras_gated.training.callbacks import StopOnNaN, read_log
from keras_gated.training.distill import Distillation, distiller, logits_heads
from keras_gated.training.loop import fit_resumable
from keras_gated.training.run_dir import check_no_linked_run_files
from keras_gated.training.numpy_engine import ArraySource, NumpyBatches
from keras_gated.training.transforms import Transforms

SCHEDULES = ("constant", "cosine")
SETTINGS_FILE = "settings.json"
# Settings a backup records since they were added (what the run trains on, and from):
# a backup written before, whose settings.json lacks one, is not compared on it.
RECORDED_WHEN_STORED = ("training_data", "source_weights")
# The files a backup writes, and their partial versions: the only files it ever deletes.
# In the backup folder (the settings, and the phases the run has trained in):
TOP_FILES = re.compile(r"(settings|phases)\.json(\.partial)?")
PHASES_FILE = "phases.json"
# In a phase's folder (the loop's records):
PHASE_FILES = re.compile(r"(log\.csv|run_state\.json|gates\.csv)(\.partial)?|gates\.partial")
# In a phase's backup/ (EpochBackup's files; partial/ is its folder of a backup being written):
EPOCH_FILES = re.compile(r"latest\.json(\.partial)?|epoch-\d{4}(-step-\d{6})?(_\d+)?\.weights\.(h5|json)")
PHASE_NAME = re.compile(r"[a-z]+")
# The per-phase files of the earlier layout (one folder: <phase>.json, <phase>-NNNN.weights.h5).
EARLIER_LAYOUT = re.compile(r"[a-z]+\.json|[a-z]+(-\d{4}|\.partial)?\.weights\.h5")


class PhaseBackup:
    """The backup of one multi-phase run in ``folder`` (None: no backup), of a run with
    ``settings``: a folder of other files, or a link, is refused; so is a backup of a run
    with other settings."""

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

    @contextlib.contextmanager
    def phase_folder(self, phase: str) -> Iterator[Path]:
        """The folder the loop runs ``phase`` in: kept in the backup, or (without one) a
        temporary folder removed when the phase ends."""
        if not PHASE_NAME.fullmatch(phase):
            raise ValueError(f"A phase is named in lowercase letters, not {phase!r}.")
        if self.folder is None:
            with tempfile.TemporaryDirectory(prefix=f"keras-gated-{phase}-") as scratch:
                yield Path(scratch)
            return
        folder = self.folder / phase
        check_not_linked(folder, "The phase's backup folder")
        phases = _recorded_phases(self.folder)
        if phase not in phases:  # recorded before the phase writes anything
            write_text_atomic(self.folder / PHASES_FILE, json.dumps([*phases, phase]))
        folder.mkdir(exist_ok=True)
        check_no_linked_run_files(folder)
        yield folder

    def delete(self) -> None:
        """Remove the backup (the run has ended and its outputs are written)."""
        if self.folder is not None:
            remove_backup(self.folder)


def _recorded_phases(folder: Path) -> list[str]:
    """The phases the backup in ``folder`` has trained in (``phases.json``)."""
    path = folder / PHASES_FILE
    if path.is_symlink() or not path.is_file():
        return []
    try:
        phases = json.loads(path.read_text())
    except ValueError:
        return []
    return [p for p in phases if isinstance(p, str)] if isinstance(phases, list) else []


def check_backup_folder(folder: Path) -> None:
    """Refuse (``ValueError``) a backup folder in the zoo, one that is a symbolic link or a
    file, one that holds anything but no backup (``settings.json``), and a backup of the
    earlier one-folder layout: the backup writes there and deletes its own files
    afterwards, so it never takes over a folder of other files."""
    check_outside_zoo(folder, "--backup-dir")
    check_parent_folders(folder, "--backup-dir")
    check_not_linked(folder, "The backup folder")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"The backup folder {folder} is a file: give a new folder.")
    if not folder.is_dir():
        return
    entries = list(folder.iterdir())
    if (folder / SETTINGS_FILE).is_file():
        earlier = [p.name for p in entries if EARLIER_LAYOUT.fullmatch(p.name) and p.is_file()
                   and not TOP_FILES.fullmatch(p.name)]
        if earlier:
            raise ValueError(f"The backup in {folder} was written by an earlier keras-gated "
                             f"(its {earlier[0]}): finish that run with the version that "
                             "started it, or give a new backup folder.")
        return
    # No settings: a backup was never begun here (they are written first), so only an
    # empty folder, or one left by a kill while they were written, is taken.
    foreign = [p.name for p in entries
               if p.name != f"{SETTINGS_FILE}.partial" or p.is_symlink() or not p.is_file()]
    if foreign:
        raise ValueError(f"The backup folder {folder} holds files that are not a compress "
                         f"backup's (e.g. {foreign[0]}): give a new or empty folder.")


def _remove_files(folder: Path, pattern: re.Pattern) -> None:
    for path in folder.iterdir():
        if pattern.fullmatch(path.name) and path.is_file() and not path.is_symlink():
            path.unlink()


def _remove_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not empty: files of someone else stay
        folder.rmdir()


def remove_backup(folder: str | Path) -> None:
    """Remove the files a backup wrote in ``folder`` (its settings, and in the folder of
    each phase it recorded the loop's records and epoch backups), then each folder left
    empty; any other file or folder (and a linked one) is left as it is."""
    folder = Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        return
    for name in _recorded_phases(folder):
        phase = folder / name
        if not PHASE_NAME.fullmatch(name) or phase.is_symlink() or not phase.is_dir():
            continue
        backup = phase / "backup"
        if backup.is_dir() and not backup.is_symlink():
            partial = backup / "partial"
            if partial.is_dir() and not partial.is_symlink():
                _remove_files(partial, EPOCH_FILES)
                _remove_empty(partial)
            _remove_files(backup, EPOCH_FILES)
            _remove_empty(backup)
        _remove_files(phase, PHASE_FILES)
        _remove_empty(phase)
    # The settings last (they are written first): a kill in between leaves a backup that
    # is still one, never a folder without settings that a run would refuse.
    _remove_files(folder, re.compile(r"phases\.json(\.partial)?|settings\.json\.partial"))
    _remove_files(folder, TOP_FILES)
    _remove_empty(folder)


def digest(*arrays: Any) -> str:
    """A short sha256 of ``arrays`` (their dtype, shape and bytes): what a backup records
    of the data it trains on and of the weights it starts from."""
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


def from_logits(model: keras.Model) -> bool:
    """Whether the model's ``predictions`` layer leaves its outputs as logits."""
    try:
        activation = model.get_layer("predictions").activation
    except ValueError:
        return False
    return getattr(activation, "__name__", "") != "softmax"


def phase_batches(data, *, batch_size: int, augment: bool, seed: int):
    """What the loop trains on: ``(x, y)`` arrays as numpy-engine batches (a new order
    each epoch; with ``augment``, images padded by 4 mirrored pixels, cropped back at a
    random offset and flipped left-right with probability 1/2: the CIFAR recipe), or
    ``data`` itself (then ``augment`` does not apply)."""
    if not isinstance(data, (tuple, list)):
        return data
    x, y = np.asarray(data[0]), np.asarray(data[1])
    images = augment and x.ndim == 4
    transforms = Transforms(batch_size, shuffle=True, seed=seed, pad=4 if images else 0,
                            pad_mode="reflect", flip=images)
    return NumpyBatches(ArraySource(x, y), transforms)


def _steps_per_epoch(batches) -> int | None:
    try:
        return len(batches)
    except TypeError:
        return None


def _diverged(phase: str):
    """The loop's NaN report for a phase: one sentence, as a ``ValueError``."""
    def report(nan_guard: StopOnNaN, out: Path, prefix: str) -> None:
        epoch, _ = nan_guard.nan_at
        raise ValueError(f"Training diverged in epoch {epoch + 1} of the {phase} phase "
                         f"({nan_guard.what} became NaN or infinite): lower the learning rate "
                         "or the pressure strength and run again; nothing was written.")
    return report


def train_phase(model: keras.Model, data, *, epochs: int, batch_size: int,
                learning_rate: float, schedule: str = "constant", augment: bool = False,
                seed: int = 0, verbose: int = 0, backup: PhaseBackup | None = None,
                phase: str = "train", teacher: keras.Model | None = None,
                distillation: Distillation | None = None) -> list[dict]:
    """Train ``model`` for ``epochs`` with SGD (momentum 0.9, Nesterov) at
    ``learning_rate``, held (``"constant"``) or along a half cosine to 0 (``"cosine"``),
    through ``fit_resumable``, resuming from ``backup``'s ``phase`` when it has one.
    ``data``: ``(x, y)`` arrays or anything ``fit`` takes as ``x``. With ``teacher`` and
    ``distillation``, the loss is ``keras_gated.training.distill``'s: the labels' and the
    (frozen) teacher's, weighted by α (the teacher must be a model of its own: it is
    frozen). Returns one dict of training metrics per epoch (the phase's ``log.csv``); a
    diverged phase raises ``ValueError`` and is never backed up."""
    if schedule not in SCHEDULES:
        raise ValueError(f"Unknown schedule {schedule!r}; choose one of {', '.join(SCHEDULES)}.")
    if (teacher is None) != (distillation is None):
        raise ValueError("Distillation needs both a teacher and its settings: give both or neither.")
    if epochs == 0:
        return []
    batches = phase_batches(data, batch_size=batch_size, augment=augment, seed=seed)
    rate: Any = learning_rate
    steps = _steps_per_epoch(batches)
    if schedule == "cosine" and steps is not None:
        rate = keras.optimizers.schedules.CosineDecay(learning_rate, decay_steps=steps * epochs)
    heads = logits_heads(model, teacher) if teacher is not None else contextlib.nullcontext()
    with heads:
        trained = model if teacher is None else distiller(teacher, model, distillation)
        trained.compile(
            optimizer=keras.optimizers.SGD(rate, momentum=0.9, nesterov=True),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits(model)),
            metrics=["accuracy"],
        )
        backup = backup or PhaseBackup(None, {})
        with backup.phase_folder(phase) as folder:
            fit_resumable(trained, batches, None, epochs=epochs, out=folder, verbose=verbose,
                          prefix=f"[{phase}]", checkpoints=False,
                          backups=backup.folder is not None, on_nan=_diverged(phase))
            rows = read_log(folder / "log.csv")
    # Keras's CSVLogger adds val_ columns, "NA" without validation data.
    return [{k: float(v) for k, v in row.items() if k != "epoch" and v not in ("", "NA", None)}
            for row in rows]
