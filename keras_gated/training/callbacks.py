"""Callbacks that make a run resumable with exactly-once logs."""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import os
import re
import shutil
from pathlib import Path

import keras
import numpy as np

from keras_gated.files import check_not_linked
from keras_gated.gating import gated_blocks, residual_gate_of
from keras_gated.training.run_dir import read_json, write_text_atomic


def read_log(path: Path) -> list[dict]:
    if not path.exists() or path.stat().st_size == 0:
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def truncate_log(path: Path, epochs: int) -> None:
    """Keep only the rows of epochs 0 .. epochs-1 (with the header), rewriting the log
    whole (through a temporary file and a rename)."""
    rows = read_log(path)
    kept = [r for r in rows if int(r["epoch"]) < epochs]
    if len(kept) == len(rows):
        return
    if not kept:
        path.unlink()
        return
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(kept)
    write_text_atomic(path, text.getvalue())  # a kill leaves the old log or the new


def best_logged(path: Path, monitor: str) -> float | None:
    """The best value of ``monitor`` logged so far (for ModelCheckpoint on resume)."""
    values = [float(r[monitor]) for r in read_log(path) if r.get(monitor) not in (None, "")]
    values = [v for v in values if not math.isnan(v)]
    return max(values) if values else None


class StopOnNaN(keras.callbacks.Callback):
    """Stop at the first NaN/inf training loss, or NaN/inf validation loss or accuracy or
    weight at an epoch's end, and remember where, for a clear message (``nan_at``: (epoch, batch),
    batch None for the validation)."""

    WATCHED_AT_EPOCH_END = ("val_loss", "val_accuracy")

    def __init__(self):
        super().__init__()
        self.nan_at: tuple[int, int | None] | None = None
        self.what = "the loss"
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            self.nan_at = (self._epoch, batch)
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        if self.nan_at is not None:
            return
        bad = [k for k in self.WATCHED_AT_EPOCH_END
               if (logs or {}).get(k) is not None and not math.isfinite(float(logs[k]))]
        if bad:
            self.what = f"the validation's {' and '.join(bad)}"
        elif not all(np.isfinite(keras.ops.convert_to_numpy(w)).all()
                     for w in getattr(self.model, "weights", ())):
            bad, self.what = ["weights"], "a weight of the model"
        if bad:
            self.nan_at = (epoch, None)
            self.model.stop_training = True


# The names of the weight files ``EpochBackup.write`` writes (one file, or a sharded
# backup's index and shards): the only files it ever removes.
BACKUP_WEIGHTS = re.compile(r"epoch-\d{4,}(-step-\d{6,})?(_\d+)?\.weights\.(h5|json)")


class EpochBackup(keras.callbacks.Callback):
    """Back up weights and optimizer state at every epoch end, crash-safely.

    Keras's ``BackupAndRestore`` writes its file in place, so a kill during the write
    leaves a corrupt backup that the next launch cannot load. Here each epoch is written
    to a new file, then ``latest.json`` is replaced atomically to point at it: whenever
    the process dies, ``latest.json`` names a complete backup. Epochs whose loss went
    NaN are never backed up. ``restore_backup`` reads it back before ``fit``. Put it
    after the ``CSVLogger`` in the callback list (see ``keras_gated.training.loop.fit_resumable``).
    """

    def __init__(self, backup_dir: str | Path, nan_guard: StopOnNaN | None = None,
                 shard_mb: int | None = None, time_limit: TimeLimit | None = None):
        super().__init__()
        self.backup_dir = Path(backup_dir)
        self.nan_guard = nan_guard
        self.shard_mb = shard_mb
        self.time_limit = time_limit

    def on_epoch_end(self, epoch, logs=None):
        if self.nan_guard is not None and self.nan_guard.nan_at is not None:
            return
        if self.time_limit is not None and self.time_limit.stopped_at is not None:
            return  # an epoch cut short: its backup is written with its step count
        self.write(epoch + 1)

    def write(self, epoch: int, step: int = 0, logs: dict | None = None) -> None:
        """Back up the model and optimizer after ``epoch`` finished epochs and ``step``
        steps of the next one (``logs``: the training metrics of those steps, kept with
        them so that the epoch's log row covers the whole epoch once resumed). With ``shard_mb``, as Keras sharded weights
        (``<name>.weights.json`` and ``<name>_NNNNN.weights.h5`` files of at most
        ``shard_mb`` MB each). A backup folder that is a symbolic link is refused
        (``ValueError``), and only the older files of this callback's series
        (``BACKUP_WEIGHTS``) are removed."""
        check_not_linked(self.backup_dir, "The run's backup folder")
        self.backup_dir.mkdir(parents=True, exist_ok=True)
        stem = f"epoch-{epoch:04d}" + (f"-step-{step:06d}" if step else "")
        name = f"{stem}.weights.json" if self.shard_mb else f"{stem}.weights.h5"
        self._check_space()
        partial = self.backup_dir / "partial"
        if partial.is_symlink():  # never followed: the link goes, not what it names
            partial.unlink()
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        try:
            if self.shard_mb:
                self.model.save_weights(partial / name, max_shard_size=self.shard_mb / 1000)
            else:
                self.model.save_weights(partial / name, overwrite=True)
        except BaseException:  # e.g. a full disk: leave no half-written file behind
            shutil.rmtree(partial, ignore_errors=True)
            raise
        written = sorted(f.name for f in partial.iterdir())
        for f in written:
            os.replace(partial / f, self.backup_dir / f)
        partial.rmdir()
        record = {"epoch": epoch, "weights": name}
        if step:
            record["step"] = step
            if logs:
                record["logs"] = logs
        write_text_atomic(self.backup_dir / "latest.json", json.dumps(record))
        for old in self.backup_dir.iterdir():
            if BACKUP_WEIGHTS.fullmatch(old.name) and old.name not in written:
                old.unlink()

    def _check_space(self) -> None:
        """Refuse to start a backup that the disk cannot hold.

        h5py fails badly on a full disk: the half-written file cannot be closed and the
        process crashes when it exits. So the space a backup needs (weights and optimizer
        state, plus a margin) is checked first, and a full disk ends the run with a plain
        ``OSError`` instead.
        """
        variables = list(self.model.weights) + list(getattr(self.model.optimizer, "variables", []))
        size = 0
        for variable in variables:
            try:
                itemsize = np.dtype(variable.dtype).itemsize
            except TypeError:  # a dtype numpy does not name (e.g. bfloat16)
                itemsize = 4
            size += int(math.prod(variable.shape)) * itemsize
        needed = int(1.25 * size) + 2**16
        free = shutil.disk_usage(self.backup_dir).free
        if free < needed:
            raise OSError(errno.ENOSPC, f"{free} bytes free, a backup needs about {needed}",
                          str(self.backup_dir))


def backup_epoch(backup_dir: str | Path) -> int:
    """How many epochs the backup in ``backup_dir`` has finished (0 without one)."""
    pointer = Path(backup_dir) / "latest.json"
    return int(read_json(pointer)["epoch"]) if pointer.exists() else 0


def backup_step(backup_dir: str | Path) -> int:
    """The steps of the unfinished epoch the backup in ``backup_dir`` holds (0: none, it
    was written at an epoch's end)."""
    pointer = Path(backup_dir) / "latest.json"
    return int(read_json(pointer).get("step", 0)) if pointer.exists() else 0


def backup_logs(backup_dir: str | Path) -> dict[str, float]:
    """The training metrics of the steps a mid-epoch backup holds ({} for none)."""
    pointer = Path(backup_dir) / "latest.json"
    return dict(read_json(pointer).get("logs", {})) if pointer.exists() else {}


def restore_backup(model: keras.Model, backup_dir: str | Path) -> int:
    """Load the latest backup (weights and optimizer state) into a compiled model.

    Returns the number of finished epochs, to pass to ``fit(initial_epoch=...)``
    (``backup_step`` says how far into the next one it is).
    """
    epoch = backup_epoch(backup_dir)
    if epoch or backup_step(backup_dir):
        meta = read_json(Path(backup_dir) / "latest.json")
        if not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        model.load_weights(Path(backup_dir) / meta["weights"])
    return epoch


class AtomicModelCheckpoint(keras.callbacks.ModelCheckpoint):
    """``ModelCheckpoint`` that writes ``partial-<name>`` and renames it over ``<name>``:
    a kill or a full disk during the save leaves the previous checkpoint intact."""

    def __init__(self, filepath: str | Path, **kwargs):
        self.final_path = Path(filepath)
        self.partial_path = self.final_path.with_name(f"partial-{self.final_path.name}")
        super().__init__(self.partial_path, **kwargs)

    def on_epoch_end(self, epoch, logs=None):
        self.partial_path.unlink(missing_ok=True)
        try:
            super().on_epoch_end(epoch, logs)
        except BaseException:
            self.partial_path.unlink(missing_ok=True)
            raise
        if self.partial_path.exists():  # saved this epoch (always, unless save_best_only)
            os.replace(self.partial_path, self.final_path)


class TimeLimit(keras.callbacks.Callback):
    """Stop training at a step's end when the next step and a backup would not finish
    before ``deadline`` (``time.monotonic()`` seconds); ``stopped_at`` is then
    ``(epoch, steps done in it)``.

    The next step is assumed to take as long as the longest seen so far, and the backup
    ``backup_s`` seconds; ``margin_s`` more are kept for the process to exit."""

    def __init__(self, deadline: float, *, backup_s: float = 5.0, margin_s: float = 5.0,
                 clock=None):
        super().__init__()
        import time

        self.deadline = deadline
        self.backup_s = backup_s
        self.margin_s = margin_s
        self.clock = clock or time.monotonic
        self.stopped_at: tuple[int, int] | None = None
        self.logs: dict[str, float] = {}  # the training metrics when it stopped
        self._epoch = 0
        self._start = None
        self._longest = 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_begin(self, batch, logs=None):
        self._start = self.clock()

    def on_train_batch_end(self, batch, logs=None):
        now = self.clock()
        if self._start is not None:
            self._longest = max(self._longest, now - self._start)
        if now + self._longest + self.backup_s + self.margin_s > self.deadline:
            self.stopped_at = (self._epoch, batch + 1)
            self.logs = {k: float(v) for k, v in (logs or {}).items()}
            self.model.stop_training = True


def combine_logs(first: dict, first_samples: int, second: dict, second_samples: int) -> dict:
    """The means of ``first`` (over ``first_samples`` examples) and ``second`` (over
    ``second_samples``) as one mean over both, key by key (Keras's training metrics are
    means over the examples seen); keys of ``second`` alone are kept as they are."""
    total = first_samples + second_samples
    if total <= 0:
        return dict(second)
    return {key: (float(first[key]) * first_samples + float(value) * second_samples) / total
            if key in first else value for key, value in second.items()}


class ResumedEpochLogs(keras.callbacks.Callback):
    """Make the log row of an epoch resumed in its middle cover the whole epoch: Keras
    reports the training metrics of the steps this launch ran, and the ones before the
    stop (``before``, over ``before_samples`` examples of the epoch's ``epoch_samples``)
    are folded in. Put it before the ``CSVLogger``: the callbacks share the logs."""

    def __init__(self, epoch: int, before: dict, before_samples: int, epoch_samples: int):
        super().__init__()
        self.epoch = epoch
        self.before = before
        self.before_samples = before_samples
        self.epoch_samples = epoch_samples

    def on_epoch_end(self, epoch, logs=None):
        if epoch != self.epoch or not logs or not self.before:
            return
        after = self.epoch_samples - self.before_samples
        training = {k: v for k, v in logs.items() if not k.startswith("val_") and k in self.before}
        logs.update(combine_logs(self.before, self.before_samples, training, after))


class DataEpoch(keras.callbacks.Callback):
    """Tell a numpy-engine pipeline (``set_epoch``) which epoch ``fit`` is starting, so
    its order and augmentations follow the run's epoch count, whatever else Keras does
    with the data (it may iterate it once before training to build the model). The
    epoch ``resume_epoch`` starts at batch ``resume_step`` (a run resumed mid-epoch)."""

    def __init__(self, data, resume_epoch: int = 0, resume_step: int = 0):
        super().__init__()
        self.data = data
        self.resume_epoch = resume_epoch
        self.resume_step = resume_step

    def on_epoch_begin(self, epoch, logs=None):
        self.data.set_epoch(epoch, self.resume_step if epoch == self.resume_epoch else 0)


# --- The Residual Gates' k and g(k), recorded at the end of each epoch ---


def gate_readings(model: keras.Model) -> list[tuple[str, float, float]]:
    """(block name, k, g(k)) of every Residual Gate of ``model``, in block order."""
    readings = []
    for name, layer in gated_blocks(model).items():
        gate = residual_gate_of(layer)
        if gate is not None:
            k = float(keras.ops.convert_to_numpy(gate.k))
            g = float(keras.ops.convert_to_numpy(gate.gate_value()))
            readings.append((name, k, g))
    return readings


class GateLogger(keras.callbacks.Callback):
    """Write each gate's k and g(k) per epoch to ``path`` (CSV: epoch, block, k, g_k)
    and add them to the epoch's logs as ``k/<block>``, so a ``TensorBoard`` callback placed
    after this one plots them.

    Epochs already in the file are rewritten, never duplicated, when a resumed run
    repeats them.
    """

    FIELDS = ("epoch", "block", "k", "g_k")

    def __init__(self, path: str | Path):
        super().__init__()
        self.path = Path(path)

    def _kept_rows(self, epoch: int) -> list[dict]:
        if not self.path.exists():
            return []
        with self.path.open(newline="") as f:
            return [row for row in csv.DictReader(f) if int(row["epoch"]) < epoch]

    def on_epoch_end(self, epoch, logs=None):
        readings = gate_readings(self.model)
        if not readings:
            return
        rows = self._kept_rows(epoch)
        rows += [{"epoch": epoch, "block": n, "k": k, "g_k": g} for n, k, g in readings]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        with partial.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.FIELDS)
            writer.writeheader()
            writer.writerows(rows)
        partial.replace(self.path)
        if logs is not None:
            logs.update({f"k/{name}": k for name, k, _ in readings})
