"""Callbacks that make a run resumable with exactly-once logs."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import keras


def read_log(path: Path) -> list[dict]:
    if not path.exists() or path.stat().st_size == 0:
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def truncate_log(path: Path, epochs: int) -> None:
    """Keep only the rows of epochs 0 .. epochs-1 (with the header)."""
    rows = read_log(path)
    kept = [r for r in rows if int(r["epoch"]) < epochs]
    if len(kept) == len(rows):
        return
    if not kept:
        path.unlink()
        return
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(kept)


def best_logged(path: Path, monitor: str) -> float | None:
    """The best value of ``monitor`` logged so far (for ModelCheckpoint on resume)."""
    values = [float(r[monitor]) for r in read_log(path) if r.get(monitor) not in (None, "")]
    values = [v for v in values if not math.isnan(v)]
    return max(values) if values else None


class StopOnNaN(keras.callbacks.Callback):
    """Stop at the first NaN/inf loss and remember where, for a clear message."""

    def __init__(self):
        super().__init__()
        self.nan_at: tuple[int, int] | None = None
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            self.nan_at = (self._epoch, batch)
            self.model.stop_training = True


class EpochBackup(keras.callbacks.Callback):
    """Back up weights and optimizer state at every epoch end, crash-safely.

    Keras's ``BackupAndRestore`` writes its file in place, so a kill during the write
    leaves a corrupt backup that the next launch cannot load. Here each epoch is written
    to a new file, then ``latest.json`` is replaced atomically to point at it: whenever
    the process dies, ``latest.json`` names a complete backup. Epochs whose loss went
    NaN are never backed up. ``restore_backup`` reads it back before ``fit``. Put it
    after the ``CSVLogger`` in the callback list (see ``training.loop.fit_resumable``).
    """

    def __init__(self, backup_dir: str | Path, nan_guard: StopOnNaN | None = None):
        super().__init__()
        self.backup_dir = Path(backup_dir)
        self.nan_guard = nan_guard

    def on_epoch_end(self, epoch, logs=None):
        if self.nan_guard is not None and self.nan_guard.nan_at is not None:
            return
        self.backup_dir.mkdir(parents=True, exist_ok=True)
        name = f"epoch-{epoch + 1:04d}.weights.h5"
        partial = self.backup_dir / f"partial-{name}"
        self.model.save_weights(partial, overwrite=True)
        os.replace(partial, self.backup_dir / name)
        pointer = self.backup_dir / "latest.json.partial"
        pointer.write_text(json.dumps({"epoch": epoch + 1, "weights": name}))
        os.replace(pointer, self.backup_dir / "latest.json")
        for old in self.backup_dir.glob("*.weights.h5"):
            if old.name != name:
                old.unlink()


def backup_epoch(backup_dir: str | Path) -> int:
    """How many epochs the backup in ``backup_dir`` has finished (0 without one)."""
    pointer = Path(backup_dir) / "latest.json"
    return int(json.loads(pointer.read_text())["epoch"]) if pointer.exists() else 0


def restore_backup(model: keras.Model, backup_dir: str | Path) -> int:
    """Load the latest backup (weights and optimizer state) into a compiled model.

    Returns the number of finished epochs, to pass to ``fit(initial_epoch=...)``.
    """
    epoch = backup_epoch(backup_dir)
    if epoch:
        meta = json.loads((Path(backup_dir) / "latest.json").read_text())
        if not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        model.load_weights(Path(backup_dir) / meta["weights"])
    return epoch
