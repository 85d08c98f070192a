"""The resumable fit-and-evaluate loop of the library, shared by ``training.train``,
``training.finetune`` and compression's phases (``keras_gated.training.phases``): Keras
``fit`` with crash-safe backups, exactly-once logs, best and last checkpoints (each written
whole or not at all), TensorBoard (where TensorFlow is installed), NaN stop, then
``metrics.json``."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import keras

from keras_gated.gating import gate_variables
from keras_gated.tensorflow_cpu import tensorflow_available
from keras_gated.training.callbacks import (
    AtomicModelCheckpoint,
    DataEpoch,
    EpochBackup,
    GateLogger,
    ResumedEpochLogs,
    StopOnNaN,
    TimeLimit,
    backup_epoch,
    backup_logs,
    backup_step,
    best_logged,
    combine_logs,
    restore_backup,
    truncate_log,
)
from keras_gated.training.numpy_engine import NumpyBatches
from keras_gated.training.run_dir import METRICS_FILE, disk_error, read_json, write_text_atomic
from keras_gated.training.tf_epochs import SeededEpochs

GATES_FILE = "gates.csv"  # k and g(k) of every Residual Gate per epoch (gated nets only)


class WallClock:
    """Wall time accumulated over every launch of a run, kept in ``run_state.json``."""

    def __init__(self, path: Path):
        self.path = path
        self.previous = float(read_json(path).get("wall_time_s", 0.0)) if path.exists() else 0.0
        self.start = time.time()

    def total(self) -> float:
        return self.previous + time.time() - self.start

    def save(self) -> None:
        write_text_atomic(self.path, json.dumps({"wall_time_s": round(self.total(), 1)}))


def cpu_cores() -> str:
    """The CPU cores this process may run on, e.g. "2 CPU cores" or, pinned by taskset or a
    container's cpuset, "1 of 2 CPU cores"."""
    total = os.cpu_count() or 1
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity API (macOS, Windows)
        usable = total
    return f"{total} CPU cores" if usable >= total else f"{usable} of {total} CPU cores"


def hardware() -> str:
    try:
        devices = keras.distribution.list_devices()
    except (AttributeError, NotImplementedError, ValueError):  # no keras.distribution on torch
        devices = []
    accelerators = [d for d in devices if "cpu" not in d.lower()]
    cpu = f"{cpu_cores()} ({platform.machine()})"
    return f"{cpu}; accelerators: {', '.join(accelerators) if accelerators else 'none'}"


def tensorboard_available() -> bool:
    """Whether Keras's TensorBoard callback can write here: it needs TensorFlow (and
    tensorboard); without them a run writes log.csv and gates.csv only."""
    try:
        return tensorflow_available() and importlib.util.find_spec("tensorboard") is not None
    except (ImportError, ValueError):
        return False


def fit_data(train, begin: int, end: int) -> dict:
    """``fit``'s ``x`` (and ``steps_per_epoch``) for epochs ``begin .. end - 1``: the tf
    engine's batches of exactly those epochs (``SeededEpochs``: each a function of the
    seed and the epoch, so a resumed run sees the batches the uninterrupted one saw), or
    ``train`` itself (a ``PyDataset`` told its epoch by ``DataEpoch``, or any data)."""
    if isinstance(train, SeededEpochs):
        return {"x": train.from_epoch(begin, end), "steps_per_epoch": train.steps_per_epoch}
    return {"x": train}


class TimeLimitReached(Exception):
    """``fit_resumable`` stopped at its time limit after writing a backup; the message
    says where and how to go on."""


def fit_resumable(model: keras.Model, train, test, *, epochs: int, out: Path, verbose: int,
                  prefix: str = "[train]", scope=None, time_limit_s: float | None = None,
                  shard_mb: int | None = None, checkpoints: bool = True, backups: bool = True,
                  on_nan: Callable[[StopOnNaN, Path, str], None] | None = None) -> bool:
    """Fit ``model`` (compiled) for ``epochs``, resuming from ``out/backup``.

    ``scope``: the distribution strategy's scope, in which the optimizer state of a
    resumed run is created. Returns False when the loss went NaN (after ``on_nan``,
    by default ``report_nan``: one sentence on what to do), True otherwise.
    ``checkpoints``: write ``last.keras``, ``best.keras`` and TensorBoard's logs too
    (False: the backup and the CSV logs alone, for a phase of a longer run).
    ``backups``: back up after every epoch (False: a run that is never resumed; then no
    time limit either).

    ``time_limit_s``: stop after the step that would otherwise run past this many seconds
    from now (a backup's time kept free), write a backup of that step (weights, optimizer
    state, epoch and step; the numpy engine's batches are a function of seed, epoch and
    step) and raise ``TimeLimitReached``. Started again, the run goes on from that step
    as if it had not stopped. Needs the numpy engine (``train.set_epoch``).
    ``shard_mb``: write backups as Keras sharded weights of at most this many MB a file.
    """
    if not backups and time_limit_s is not None:
        raise ValueError("A time limit stops a run to resume it from its backup: it needs backups.")
    deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None
    if (deadline is not None or backup_step(out / "backup")) and not isinstance(train, NumpyBatches):
        raise ValueError("--time-limit stops and resumes within an epoch, which needs the "
                         "numpy data engine (--data-engine numpy).")
    clock = WallClock(out / "run_state.json")
    with scope or contextlib.nullcontext():
        initial_epoch = restore_backup(model, out / "backup")
    start_step = backup_step(out / "backup")
    logs_before = backup_logs(out / "backup") if start_step else {}
    if initial_epoch or start_step:
        where = f", step {start_step} of epoch {initial_epoch + 1}" if start_step else ""
        print(f"{prefix} resuming from {out / 'backup'} after epoch {initial_epoch}{where}")
    log_path = out / "log.csv"
    # Rows of epochs after the backup (written before a kill) go: each epoch is logged
    # exactly once. The CSV row of an epoch is written before its backup (callback
    # order below), so a kill between the two repeats that epoch and rewrites its row.
    truncate_log(log_path, initial_epoch)
    nan_guard = StopOnNaN()
    time_limit = TimeLimit(deadline) if deadline is not None else None
    backup = (EpochBackup(out / "backup", nan_guard, shard_mb=shard_mb, time_limit=time_limit)
              if backups else None)
    callbacks = run_callbacks(model, out, nan_guard, backup, clock, time_limit, checkpoints)
    if isinstance(train, NumpyBatches):  # the batches of the epoch resumed at
        train.set_epoch(initial_epoch, start_step)
        callbacks.insert(0, DataEpoch(train, initial_epoch, start_step))
    if logs_before:  # the resumed epoch's row: its steps before the stop and after
        callbacks.insert(callbacks.index(nan_guard), ResumedEpochLogs(
            initial_epoch, logs_before, train.examples_in(start_step), train.examples_in()))
    # A resumed epoch that had begun runs on its own first (its remaining steps), then
    # the whole epochs after it.
    segments = [(initial_epoch + 1, initial_epoch)] if start_step else []
    segments.append((epochs, initial_epoch + (1 if start_step else 0)))
    fit_segments(model, train, test, segments, callbacks, verbose=verbose, out=out,
                 initial_epoch=initial_epoch, nan_guard=nan_guard, time_limit=time_limit)
    if time_limit is not None and time_limit.stopped_at is not None and nan_guard.nan_at is None:
        stop_at_time_limit(time_limit, backup, clock, train, initial_epoch, start_step,
                           logs_before, f"{prefix} time limit")
    clock.save()
    if checkpoints and nan_guard.nan_at is None and not (out / "last.keras").exists():
        # Every epoch was already done (the run resumed from the backup of its last epoch,
        # e.g. on a machine that has the committed resume state but not the ignored
        # ``*.keras`` files): the final model is the restored one.
        save_model_atomic(model, out / "last.keras")
    if nan_guard.nan_at is not None:
        (on_nan or report_nan)(nan_guard, out, prefix)
        return False
    return True


def fit_segments(model: keras.Model, train, test, segments: list[tuple[int, int]],
                 callbacks: list, *, verbose: int, out: Path, initial_epoch: int,
                 nan_guard: StopOnNaN, time_limit: TimeLimit | None) -> None:
    """``fit`` over each ``(end, begin)`` span of epochs in turn, until the loss goes NaN or
    the time limit stops it; a full disk, in whatever words the library says it, becomes
    an ``OSError``."""
    try:
        for end, begin in segments:
            if begin >= end or nan_guard.nan_at is not None:
                continue
            if isinstance(train, NumpyBatches) and begin != initial_epoch:
                train.set_epoch(begin)
            model.fit(**fit_data(train, begin, end), epochs=end, initial_epoch=begin,
                      validation_data=test, callbacks=callbacks, verbose=verbose,
                      shuffle=False)  # the pipeline shuffles
            if time_limit is not None and time_limit.stopped_at is not None:
                break
    except Exception as error:
        full = disk_error(error, out)  # a library's own words for a full disk -> OSError
        if full is not None:
            raise full from error
        raise


def stop_at_time_limit(time_limit: TimeLimit, backup: EpochBackup, clock: WallClock, train,
                       initial_epoch: int, start_step: int, logs_before: dict,
                       prefix: str) -> None:
    """Back up the step the time limit stopped at (with the logs of the whole epoch so
    far, earlier launches included) and raise ``TimeLimitReached``."""
    epoch, steps = time_limit.stopped_at
    resumed = epoch == initial_epoch and start_step
    done = steps + (start_step if resumed else 0)
    logs = time_limit.logs
    if resumed and logs_before:  # the steps of the earlier launches of this epoch too
        logs = combine_logs(logs_before, train.examples_in(start_step), logs,
                            train.examples_in(done) - train.examples_in(start_step))
    backup.write(epoch, done, logs=logs)
    clock.save()
    raise TimeLimitReached(
        f"{prefix}: stopped after step {done} of epoch {epoch + 1} and backed up to "
        f"{backup.backup_dir}; run the same command again to go on from there.")


def run_callbacks(model: keras.Model, out: Path, nan_guard: StopOnNaN,
                  backup: EpochBackup | None, clock: WallClock, time_limit: TimeLimit | None,
                  checkpoints: bool = True) -> list:
    """The callbacks of a run, in the order they must run at an epoch's end: NaN watch
    (then the time limit), the CSV row, the backup (None: none), the wall clock, last and
    best checkpoints, the gates' log, TensorBoard (where TensorFlow is installed); without
    ``checkpoints``, neither the checkpoints nor TensorBoard."""
    log_path = out / "log.csv"
    callbacks = [
        nan_guard,
        keras.callbacks.CSVLogger(str(log_path), append=True),
        *([backup] if backup is not None else []),
        keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: clock.save()),
    ]
    if checkpoints:
        callbacks += [
            AtomicModelCheckpoint(out / "last.keras"),
            AtomicModelCheckpoint(
                out / "best.keras", monitor="val_accuracy", mode="max", save_best_only=True,
                initial_value_threshold=best_logged(log_path, "val_accuracy"),
            ),
        ]
    tensorboard = checkpoints and tensorboard_available()
    if tensorboard:
        callbacks.append(keras.callbacks.TensorBoard(out / "tensorboard"))
    if gate_variables(model):
        # After the CSV logger (log.csv keeps its columns), before TensorBoard (which then
        # plots every k): one row per gate and epoch in gates.csv.
        callbacks.insert(len(callbacks) - 1 if tensorboard else len(callbacks),
                         GateLogger(out / GATES_FILE))
    if time_limit is not None:
        callbacks.insert(1, time_limit)
    return callbacks


def report_nan(nan_guard: StopOnNaN, out: Path, prefix: str) -> None:
    """One sentence on stderr: where the loss went NaN, what is kept, what to do."""
    epoch, batch = nan_guard.nan_at
    where = f"epoch {epoch + 1}, batch {batch + 1}" if batch is not None else (
        f"the end of epoch {epoch + 1} (the training loss was finite)")
    kept = backup_epoch(out / "backup")
    what = (f"the backup of epoch {kept}, the last good one, is kept in {out / 'backup'}"
            if kept else f"no epoch finished, so there is no backup; {out / 'log.csv'} and "
            f"{out / 'tensorboard'} show the losses")
    print(
        f"{prefix} stopped: {nan_guard.what} became NaN/inf at {where}; "
        f"{what}. Lower the learning rate or batch size (or check the data), then start "
        "again with a new --out.",
        file=sys.stderr,
    )


def save_model_atomic(model: keras.Model, path: Path) -> None:
    """``model.save(path)`` through ``partial-<name>``: never a half-written ``path``."""
    partial = path.with_name(f"partial-{path.name}")
    partial.unlink(missing_ok=True)
    model.save(partial)
    os.replace(partial, path)


def evaluate_metrics(model: keras.Model, test, test_info, out: Path, extra: dict) -> dict:
    """The record of a finished run, for ``write_metrics``: the test accuracy of ``model``
    with the split and data it was measured on, ``extra`` (command, model, recipe...),
    then the backend, hardware, accumulated wall time and Keras version. The release tool
    and the model card read these keys."""
    _, accuracy = model.evaluate(test, verbose=0)
    metrics = {
        "test_accuracy": round(float(accuracy), 4),
        "split": "test",
        "num_examples": test_info.num_examples,
        "dataset": test_info.note,
        **extra,
        "backend": keras.backend.backend(),
        "hardware": hardware(),
        "wall_time_s": WallClock(out / "run_state.json").previous,
        "keras_version": keras.__version__,
    }
    return metrics


def write_metrics(out: Path, metrics: dict) -> None:
    """``out/metrics.json``, written last: its presence marks the run finished, so it is
    written whole (atomically) and only once everything else of the run is written."""
    write_text_atomic(out / METRICS_FILE, json.dumps(metrics, indent=2) + "\n")
