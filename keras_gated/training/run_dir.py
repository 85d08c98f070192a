"""The run folder (``--out``) of ``training.train`` and ``training.finetune``.

* ``open_run_folder``: checks that ``--out`` can be a folder (never one in ``zoo/``, whose
  folders only the release tool writes, nor one that holds no run but files
  under the names a run writes),
  moves an old run aside on ``--restart``,
  creates it, takes its lock and, when the launch fails before an epoch was backed up,
  removes what it created.
* ``check_fingerprint``: a backup is resumed only by the run that wrote it (the settings
  are kept in ``fingerprint.json``).
* ``finished_run``: a finished run (``metrics.json``) is reported, never rewritten by a
  launch with other settings.
* ``check_zoo_subfolder`` and ``check_zoo_folder_replaceable``: a fine-tuning run's zoo
  folder is never a link, and replaces only a folder this run wrote (``ZOO_RECORD``).
* ``read_json`` and ``write_text_atomic``: run files that are either whole or absent, and
  a clear error naming the file when one is corrupt anyway.

Nothing here imports Keras.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import time
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from keras_gated.files import is_linked, release_folder_reason, tree_digest, write_text_atomic

LOCK_FILE = "run.lock"
FINGERPRINT_FILE = "fingerprint.json"
METRICS_FILE = "metrics.json"
STATE_FILE = "run_state.json"
BACKUP_POINTER = Path("backup") / "latest.json"
# A fine-tuning run's record of the zoo folder it wrote (``record_zoo_folder``).
ZOO_RECORD = "zoo_folder.json"
# Settings a run records since they were added to fingerprints: a run recorded before
# (whose fingerprint lacks one) is not compared on it, as its value then is unknown.
RECORDED_WHEN_STORED = ("data_engine", "backend")
START_AGAIN = ("use a new --out, or rerun with --restart (the old run is moved aside to "
               "<out>.old-<timestamp> and kept whole)")


class RunFolderError(ValueError):
    """``--out`` cannot be used for this launch (a user error: exit 2)."""


class RunFolderBusy(RunFolderError):
    """Another process holds the run folder's lock."""


class CorruptRunFileError(RunFolderError):
    """A run file is empty or is not valid JSON."""


# --- files that are whole or absent ------------------------------------------------------
def _fix_for(path: Path) -> str:
    """What to do about a corrupt run file: never delete it (it is the run's record)."""
    if path.name == FINGERPRINT_FILE:
        return (f"it records the settings of the run in the folder and is not guessed: "
                f"{START_AGAIN}")
    return START_AGAIN


def read_json(path: Path) -> dict:
    """A run file's JSON object; a ``CorruptRunFileError`` naming the file and what to do
    when it is empty or not a JSON object (an ``OSError`` when it cannot be read)."""
    text = path.read_text(errors="replace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        what = "empty" if not text.strip() else f"truncated or not JSON: {error}"
        raise CorruptRunFileError(f"{path} is corrupt ({what}): {_fix_for(path)}.") from None
    if not isinstance(data, dict):
        raise CorruptRunFileError(f"{path} is corrupt (not a JSON object): {_fix_for(path)}.")
    return data


LOG_FILE = "log.csv"


def check_run_files(out: Path) -> None:
    """Read every JSON file of the run folder, the backup they point at and the epoch log
    once, so that a corrupt or missing one is reported before any data is loaded or
    anything is written; a backup folder that is a symbolic link is refused (a run never
    writes or deletes through a link)."""
    if (out / BACKUP_POINTER.parent).is_symlink():
        raise RunFolderError(f"{out / BACKUP_POINTER.parent} is a symbolic link, which a run never "
                             "follows: replace it by a folder of its own and run again.")
    for name in (METRICS_FILE, STATE_FILE, FINGERPRINT_FILE, BACKUP_POINTER):
        if (out / name).is_file():
            read_json(out / name)
    if (out / BACKUP_POINTER).is_file():
        check_backup_pointer(out / BACKUP_POINTER)
    if (out / LOG_FILE).is_file() and not (out / METRICS_FILE).is_file():
        check_log(out / LOG_FILE)


def check_backup_pointer(pointer: Path) -> None:
    """``backup/latest.json`` must give a whole epoch count and name a weights file that is
    in ``backup/``; else a ``CorruptRunFileError`` names both and what to do."""
    record = read_json(pointer)
    epoch, weights = record.get("epoch"), record.get("weights")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        raise CorruptRunFileError(
            f"{pointer} is corrupt (its epoch is {epoch!r}, not a count): {START_AGAIN}.")
    if not isinstance(weights, str) or Path(weights).name != weights:
        raise CorruptRunFileError(
            f"{pointer} is corrupt (it names no backup file in {pointer.parent}): "
            f"{START_AGAIN}.")
    if not (pointer.parent / weights).is_file():
        raise CorruptRunFileError(
            f"{pointer} names {pointer.parent / weights}, which is missing, so the run cannot "
            f"resume from epoch {epoch}: put that file back, or {START_AGAIN}.")


def check_log(path: Path) -> None:
    """``log.csv`` must have an ``epoch`` column of whole numbers (a resumed run cuts it
    back to its backup's epoch); else a ``CorruptRunFileError`` names it."""
    import csv

    try:
        with path.open(newline="", errors="replace") as f:
            rows = list(csv.DictReader(f))
        for row in rows:
            int(row["epoch"])
    except (KeyError, TypeError, ValueError, csv.Error):
        raise CorruptRunFileError(
            f"{path} is corrupt (not the per-epoch log, with an epoch column, that runs "
            f"write): put the run's log back, or {START_AGAIN}.") from None


def has_backup(out: Path) -> bool:
    """True when ``out`` holds the backup of at least one finished epoch."""
    return (out / BACKUP_POINTER).is_file()


# --- where the folder may be -------------------------------------------------------------
# The files and folders a run writes in its folder: none may be a link (a run would write
# or truncate what it names, e.g. appending to a linked log.csv).
RUN_FILES = (LOCK_FILE, FINGERPRINT_FILE, METRICS_FILE, STATE_FILE, LOG_FILE, "gates.csv",
             "last.keras", "best.keras", "partial-last.keras", "partial-best.keras",
             ZOO_RECORD, "tensorboard", "backup")
# The run's folders, whose files it writes under names of their own: nothing anywhere in
# them may be a link either.
RUN_FOLDERS = ("tensorboard", "backup")
# Every name a run writes at the top of its folder: the run files, and the partial files
# it writes them through (and removes) on the way.
RUN_NAMES = (*RUN_FILES, "gates.partial", *(f"{name}.partial" for name in (
    FINGERPRINT_FILE, METRICS_FILE, STATE_FILE, LOG_FILE, ZOO_RECORD)))
# What a launch leaves in a new folder before it records the run (its lock, left behind by
# a kill; the fingerprint being written): no one else's files.
BEFORE_RECORD = (LOCK_FILE, f"{FINGERPRINT_FILE}.partial")


def _run_paths(out: Path) -> Iterator[Path]:
    """The paths of ``RUN_FILES`` in ``out``, then every entry below its ``RUN_FOLDERS``
    (a linked folder is listed, never entered)."""
    for name in RUN_FILES:
        yield out / name
    for name in RUN_FOLDERS:
        folder = out / name
        if folder.is_symlink() or not folder.is_dir():
            continue
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            for entry in sorted(dirs + files):
                yield Path(root) / entry


def check_no_linked_run_files(out: Path) -> None:
    """Refuse (``RunFolderError``) a run folder where a file or folder a run writes, or
    anything inside ``tensorboard/`` or ``backup/``, is a symbolic link or a file with
    other hard links: a run never writes through a link."""
    for path in _run_paths(out):
        if is_linked(path):
            kind = "a symbolic link" if path.is_symlink() else "a file with other hard links"
            raise RunFolderError(f"{path} is {kind}, which a run never writes through: "
                                 "replace it by a file or folder of its own, or use a new --out.")


def holds_run(out: Path) -> bool:
    """Whether ``out`` holds a run of this tool: its settings (``fingerprint.json``), a
    backup (``backup/latest.json``) or a finished run's ``metrics.json`` (one finished
    before runs kept fingerprints)."""
    return any((out / name).is_file() for name in (FINGERPRINT_FILE, BACKUP_POINTER, METRICS_FILE))


def check_new_or_run(out: Path) -> None:
    """Refuse (``RunFolderError``) a folder that holds no run but files under the names a
    run writes (``RUN_NAMES``: ``last.keras``, ``log.csv``, ``backup/``...): the run would
    overwrite or delete them. A new folder, one of unrelated files only (the run then
    writes new paths alone) and a run's folder pass."""
    if not out.is_dir() or holds_run(out):
        return
    taken = [name for name in RUN_NAMES
             if name not in BEFORE_RECORD and os.path.lexists(out / name)]
    if taken:
        shown = ", ".join(taken[:3]) + (", ..." if len(taken) > 3 else "")
        raise RunFolderError(
            f"--out {out} holds no run of this tool (no {FINGERPRINT_FILE}, no backup) but "
            f"files a run writes ({shown}), which it would overwrite: give a new or empty "
            "--out, or the folder of an earlier run to resume it.")


def check_out_path(out: Path) -> None:
    """Refuse an ``--out`` that is a file, or lies under one.

    That is a wrong argument rather than a broken environment (the same command with
    another path works), so it is a ``RunFolderError``: exit 2.
    """
    if out.exists() and not out.is_dir():
        raise RunFolderError(f"--out {out} is a file, not a folder: give the path of a folder "
                             "(a new one to start a run).")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise RunFolderError(f"--out {out} lies under {parent}, which is a file, not a "
                                     "folder: choose another --out.")
            break


def check_not_in_zoo(out: Path) -> None:
    """Refuse an ``--out`` inside the zoo (``keras_gated.files.zoo_folders``) or one that
    holds a release's files: only ``training.release`` writes zoo folders."""
    reason = release_folder_reason(out)
    if reason is not None:
        raise RunFolderError(
            f"--out {out} is {reason}, which only python -m training.release writes: give a "
            f"run folder outside it (e.g. --out runs/{out.name})."
        )


def check_zoo_subfolder(out: Path, weight_id: str) -> Path:
    """The zoo-style folder a fine-tuning run writes, ``out/zoo/<weight id>``; refused
    (``RunFolderError``) when it lands in the zoo, as ``--out`` at the checkout's root
    would put it over the release of the same weight id, and when ``out/zoo`` or the
    folder is a symbolic link (a run never writes or deletes through one)."""
    folder = out / "zoo" / weight_id
    for path in (folder.parent, folder):
        if path.is_symlink():
            raise RunFolderError(f"{path} is a symbolic link, which a run never writes through: "
                                 "replace it by a folder of its own, or use a new --out.")
    if release_folder_reason(folder) == "in the zoo":
        raise RunFolderError(
            f"--out {out} would write its zoo folder {folder} into the zoo, over the release "
            f"of {weight_id} that only python -m training.release writes: give a run folder "
            f"outside the checkout (e.g. --out runs/{weight_id})."
        )
    return folder


def recorded_zoo_digests(out: Path, folder: Path) -> list[str]:
    """The ``tree_digest`` of each version of the zoo folder ``folder`` that the run in
    ``out`` wrote (two while one replaces the other), from ``out/zoo_folder.json``."""
    path = out / ZOO_RECORD
    if not path.is_file():
        return []
    record = read_json(path)
    digests = record.get("digests")
    if record.get("folder") != folder.relative_to(out).as_posix() or not isinstance(digests, list):
        return []
    return [digest for digest in digests if isinstance(digest, str)]


def record_zoo_folder(out: Path, folder: Path, digests: list[str]) -> None:
    """Record in ``out/zoo_folder.json`` that the run wrote ``folder`` with these digests."""
    record = {"folder": folder.relative_to(out).as_posix(), "digests": digests}
    write_text_atomic(out / ZOO_RECORD, json.dumps(record, indent=2) + "\n")


def check_zoo_folder_replaceable(out: Path, weight_id: str) -> str | None:
    """Refuse (``RunFolderError``) to write the zoo folder ``out/zoo/<weight id>``, besides
    as ``check_zoo_subfolder`` does, unless it is absent, empty, or exactly as the run in
    ``out`` wrote it (``recorded_zoo_digests``): a folder of anyone else's, or one changed
    since, is never removed. Returns the folder's digest when it is this run's, else None."""
    folder = check_zoo_subfolder(out, weight_id)
    if not folder.exists() or (folder.is_dir() and not any(folder.iterdir())):
        return None
    digest = tree_digest(folder) if folder.is_dir() else None
    if digest is None or digest not in recorded_zoo_digests(out, folder):
        raise RunFolderError(
            f"{folder} exists and was not written by this run (or was changed since), so it "
            f"is not replaced: move it out of {folder.parent}, or use a new --out.")
    return digest


def move_aside(out: Path) -> Path | None:
    """``--restart``: rename the run folder ``out`` to ``<out>.old-<timestamp>`` (under its
    lock, so never from under a running run) and return the new path; None when there is
    no folder (nothing to move)."""
    if not out.is_dir():
        return None
    fd = _lock(out)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = out.with_name(f"{out.name}.old-{stamp}")
    number = 1
    while target.exists():
        number += 1
        target = out.with_name(f"{out.name}.old-{stamp}-{number}")
    try:
        os.rename(out, target)
    except BaseException:
        _unlock(out, fd)
        raise
    _unlock(target, fd)
    return target


def _make_folder(out: Path) -> Path | None:
    """Create ``out`` and its missing parents; the topmost folder created, None if ``out``
    existed. A folder that cannot be created raises ``OSError`` (exit 1)."""
    if out.is_dir():
        return None
    missing = [out, *[p for p in out.parents if not p.exists()]]
    out.mkdir(parents=True, exist_ok=True)
    return missing[-1]


def _remove_created(out: Path, topmost: Path) -> None:
    """Remove ``out`` and the empty parents created with it, up to ``topmost``."""
    shutil.rmtree(out, ignore_errors=True)
    for parent in out.parents:
        if not parent.is_relative_to(topmost):
            break
        with contextlib.suppress(OSError):  # not empty: someone else writes there too
            parent.rmdir()


# --- the lock ---------------------------------------------------------------------------
def _lock(out: Path) -> int:
    """Take ``out/run.lock`` (``flock``, exclusive, non-blocking) and write our pid into it.

    The OS releases a ``flock`` when its process ends, however it ends, so a lock is never
    left behind by a crash; the file itself may be, and is then simply locked again.
    """
    path = out / LOCK_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise RunFolderBusy(
                f"{out} is in use by another run (pid {holder}, see {path}): wait for it to "
                "end, or use another --out."
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # The previous holder unlinks the file when it ends: if that happened between our
        # open and our flock, we hold a lock on a removed file; lock the current one.
        try:
            current = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except BaseException:
        _unlock(out, fd)
        raise
    return fd


def _unlock(out: Path, fd: int) -> None:
    """Remove the lock file (while still holding it, see ``_lock``), then release it."""
    with contextlib.suppress(OSError):
        (out / LOCK_FILE).unlink()
    os.close(fd)


@contextlib.contextmanager
def open_run_folder(out: Path, restart: bool = False) -> Iterator[Path]:
    """Use ``out`` as this launch's run folder, locked for the duration of the block.

    A folder in the zoo is refused (``check_not_in_zoo``), and so is one that holds no run
    but files under the names a run writes (``check_new_or_run``): a run never overwrites
    another's files, it resumes only its own. ``restart``: an existing run in ``out`` is first moved aside
    (``move_aside``; one line says where) and the run starts afresh. The folder is
    created if needed. If the block fails (an exception, Ctrl-C) and this
    launch created the folder and backed up no epoch, the folder (and the parents created
    with it) is removed: a failed launch leaves no empty or useless run folder behind. A
    folder that existed before is left as it is.
    """
    check_out_path(out)
    check_not_in_zoo(out)
    check_no_linked_run_files(out)
    check_new_or_run(out)
    if restart:
        moved = move_aside(out)
        if moved is not None:
            print(f"--restart: moved the previous run in {out} aside to {moved}")
    created = _make_folder(out)
    try:
        fd = _lock(out)
    except BaseException:
        if created is not None:
            _remove_created(out, created)
        raise
    try:
        yield out
    except BaseException:
        _unlock(out, fd)
        if created is not None and not has_backup(out):
            _remove_created(out, created)
        raise
    else:
        _unlock(out, fd)


# --- which run the folder holds ----------------------------------------------------------
def _flatten(data: Mapping[str, Any], prefix: str = "", whole: Collection[str] = ()) -> dict[str, Any]:
    """``{"recipe": {"lr": 0.1}}`` -> ``{"recipe.lr": 0.1}``: one entry per setting
    (the top-level keys in ``whole`` stay one entry: their value is compared as a whole)."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping) and not (not prefix and key in whole):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _normalised(fingerprint: Mapping[str, Any]) -> dict:
    """As read back from JSON (tuples become lists), so that comparisons are exact."""
    return json.loads(json.dumps(fingerprint))


def differences(stored: Mapping[str, Any], new: Mapping[str, Any],
                defaults: Mapping[str, Any] | None = None) -> list[str]:
    """``"field: stored X, now Y"`` for every setting of ``new`` that ``stored`` has
    otherwise (settings ``new`` lacks are not compared, nor those of
    ``RECORDED_WHEN_STORED`` that ``stored`` lacks).

    ``defaults``: settings added to runs after some were recorded, at the value a run had
    before (e.g. ``{"lr": None, "model_args": {}}``): a stored fingerprint without one
    of them compares as if it held that value. Their values are compared whole (a dict of
    model arguments with one key fewer is a difference too).
    """
    defaults = _normalised(defaults or {})
    whole = tuple(defaults)
    old = _flatten({**defaults, **_normalised(stored)}, whole=whole)
    now = _flatten(_normalised(new), whole=whole)
    return [f"{key}: stored {old[key]!r}, now {value!r}" if key in old
            else f"{key}: not stored, now {value!r}"
            for key, value in now.items()
            if (key not in old and key not in RECORDED_WHEN_STORED)
            or (key in old and old[key] != value)]


def check_fingerprint(out: Path, fingerprint: Mapping[str, Any], prefix: str,
                      defaults: Mapping[str, Any] | None = None) -> None:
    """Make sure a backup in ``out`` is this run's before it is resumed.

    ``fingerprint``: the settings that make a run (model, data, recipe, epochs, batch
    size, seed, model constructor arguments...). Without a backup nothing is resumed: the
    fingerprint is written, or, where a run stopped before its first backup left one, it
    must equal that one. With a backup it must equal the stored one. Either way a
    ``RunFolderError`` names the differences. A backup without a fingerprint (one
    removed, or from before runs kept one) is refused: its settings are unknown, and
    resuming it under this launch's could record a run that never happened. A stored
    fingerprint that lacks a setting of ``defaults`` compares as if it held the default
    (``differences``), and is left as it is.
    """
    path = out / FINGERPRINT_FILE
    stored = read_json(path) if path.is_file() else None
    new = _normalised(fingerprint)
    if has_backup(out) and stored is None:
        raise RunFolderError(
            f"{out} holds a backup but no {FINGERPRINT_FILE}, so the settings it was trained "
            f"with are unknown and it is not resumed: {START_AGAIN}."
        )
    if has_backup(out):
        changed = differences(stored, new, defaults)
        if changed:
            raise RunFolderError(
                f"{out} holds the backup of another run ({'; '.join(changed)}): resuming it "
                f"would mix two runs; rerun with the settings of {path} to resume it, or "
                f"{START_AGAIN}."
            )
        return
    if stored is not None:
        changed = differences(stored, new, defaults)
        if changed:
            # A run stopped before its first backup: nothing to resume, but its folder
            # (log, fingerprint) belongs to that run and is not taken over by another.
            raise RunFolderError(
                f"{out} holds a run stopped before its first backup with other settings "
                f"({'; '.join(changed)}); rerun with the settings of {path} to start it "
                f"again, or {START_AGAIN}."
            )
    if stored != new:
        write_text_atomic(path, json.dumps(new, indent=2) + "\n")


def finished_run(out: Path, fingerprint: Mapping[str, Any], epochs: int,
                 defaults: Mapping[str, Any] | None = None) -> dict | None:
    """The metrics of a finished run in ``out`` that this launch would repeat, None when
    ``out`` holds no finished run.

    A finished run with other settings is refused (``RunFolderError``): a rerun never
    rewrites it. ``fingerprint`` may lack settings only known once the data is loaded;
    a run finished before fingerprints were kept is compared on its model and epochs.
    """
    if not (out / METRICS_FILE).is_file():
        return None
    metrics = read_json(out / METRICS_FILE)
    if (out / FINGERPRINT_FILE).is_file():
        changed = differences(read_json(out / FINGERPRINT_FILE), fingerprint, defaults)
    else:
        changed = differences({"model": metrics.get("model"), "epochs": metrics.get("epochs")},
                              {"model": fingerprint.get("model"), "epochs": epochs})
    if changed:
        raise RunFolderError(
            f"{out} holds a finished run of {metrics.get('epochs')} epochs with other settings "
            f"({'; '.join(changed)}); it is not rewritten: to train with these settings, "
            f"{START_AGAIN}."
        )
    return metrics


def disk_error(error: BaseException, folder: Path) -> OSError | None:
    """The ``OSError`` to report instead of ``error``, None to report ``error`` itself: an
    OS error without a file name gets ``folder``; a full disk reported by a library in its
    own words (TensorFlow, h5py: "No space left on device") becomes an ``OSError``."""
    if isinstance(error, OSError) and error.errno is not None:
        if error.filename is None:
            return OSError(error.errno, error.strerror or str(error), str(folder))
        return None
    text = str(error)
    if "No space left on device" in text or "errno = 28" in text:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(folder))
    return None
