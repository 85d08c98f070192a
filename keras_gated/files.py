"""Where commands may write, and how: the one place for the rules every writing command
follows.

* A command writes only inside the folder it was given or created, and never follows a
  symbolic link out of it (``check_not_linked``).
* It never writes into a released zoo folder: those are written by the release tool
  alone (``release_folder_reason``, ``check_outside_zoo``, which every new output folder
  and path here checks).
* It never deletes or overwrites a folder it did not create; a new output folder is
  claimed under a lock, so that two commands cannot both write it (``new_output_folder``).
  Asked to on purpose, a command replaces only the files it names in an existing folder,
  never through a link (``replaced_files``).
* A finished file or folder appears whole: written beside and renamed into place, so that
  a reader (or a run resumed after a crash) finds the previous version or the new one,
  never part of one (``write_text_atomic``, ``new_output_folder``); what a killed command
  left beside its output goes with the next command given the same output.

Nothing here imports Keras at module level.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from keras_gated.weights import sources
from keras_gated.weights.shards import FOLDER_WEIGHT_FILES

# The file that marks a folder a command is writing; it is locked while the command runs.
CLAIM_FILE = ".keras-gated-writing"
# A zoo folder's own files: a folder holding them and a weight file (model.weights.h5, or a
# sharded release's model.weights.json) is a release, never another command's output.
RELEASE_MARKERS = ("config.json", "README.md", "metrics.json")


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``path`` through a temporary sibling and an atomic rename: a crash or a full
    disk leaves the previous version (or nothing), never half a file."""
    partial = path.with_name(f"{path.name}.partial")
    # A partial file left by a kill goes, and a link there (symbolic or hard) is never
    # written through: the link goes, not what it names.
    partial.unlink(missing_ok=True)
    try:
        with partial.open("w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def is_linked(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a symbolic link, or a file with more than one hard link (another
    name elsewhere shares its content: copying or publishing it would carry that file)."""
    path = Path(path)
    if path.is_symlink():
        return True
    try:
        status = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # nothing there (or a file in its path)
        return False
    return path.is_file() and status.st_nlink > 1


def check_not_linked(path: str | os.PathLike, what: str) -> None:
    """Refuse (``ValueError``) a ``path`` that is a symbolic link or a multiply hard-linked
    file: a command never follows a link out of the folder it writes, nor copies one.
    ``what`` names the path for the message (e.g. ``"the run's backup folder"``)."""
    if is_linked(path):
        kind = "a symbolic link" if Path(path).is_symlink() else "a file with other hard links"
        raise ValueError(f"{what} {path} is {kind}, which is never followed or copied: replace "
                         "it by a plain file or folder of its own and run again.")


def zoo_folders() -> list[Path]:
    """The zoo folders of this installation: ``$KERAS_GATED_ZOO`` (or the checkout's
    ``zoo/``) and the ``zoo/`` of the source checkout this package runs from."""
    checkout = Path(sources.__file__).resolve().parents[2]
    zoos = [sources.zoo_dir(), checkout / "zoo" if (checkout / "pyproject.toml").is_file() else None]
    return [zoo for zoo in zoos if zoo is not None]


def release_folder_reason(path: str | os.PathLike) -> str | None:
    """Why ``path`` must not be written by any command but the release tool: ``"in the
    zoo"`` (it is, or lies inside, a zoo folder; links resolved), ``"a released zoo
    folder"`` (it holds a release's weights, config.json, README.md and metrics.json), or
    None when it may be written."""
    path = Path(path).expanduser()
    resolved = path.resolve()
    for zoo in zoo_folders():
        zoo = zoo.resolve()
        if resolved == zoo or zoo in resolved.parents:
            return "in the zoo"
    if (any((path / name).is_file() for name in FOLDER_WEIGHT_FILES)
            and all((path / name).is_file() for name in RELEASE_MARKERS)):
        return "a released zoo folder"
    return None


def check_outside_zoo(path: str | os.PathLike, option: str = "--out") -> None:
    """Refuse (``ValueError``) to write ``path`` when it is in the zoo or a released zoo
    folder (``release_folder_reason``); ``option`` names the argument that gave it."""
    reason = release_folder_reason(path)
    if reason is not None:
        raise ValueError(
            f"{option} {path} is {reason}, which only python -m training.release writes: give "
            f"a folder outside it (e.g. {option} runs/{Path(path).name or 'out'}).")


def _lock_claim(folder: Path) -> int:
    """Take the claim file of ``folder`` (``flock``, exclusive, non-blocking); a
    ``ValueError`` when another command holds it. The OS releases the lock however the
    process ends."""
    fd = os.open(folder / CLAIM_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ValueError(f"{folder} is being written by another command: wait for it to end, "
                         "or give another folder.") from None
    return fd


class OutputExistsError(ValueError, FileExistsError):
    """An output path that exists already: a usage error (a ``ValueError``, exit 2), and
    the ``FileExistsError`` callers of ``new_output_path`` catch."""


def check_parent_folders(path: Path, option: str = "--out") -> None:
    """Refuse (``ValueError``) a ``path`` whose nearest existing parent is not a folder (a
    file, a dangling link): nothing could be made there."""
    for parent in path.parents:
        if os.path.lexists(parent):
            if not parent.is_dir():
                raise ValueError(f"{option} {path} lies below {parent}, which is not a folder: "
                                 "give a path inside a folder.")
            return


def check_new_folder(path: str | os.PathLike, option: str = "--out",
                     what_to_do: str = "give a new one (nothing already there is replaced)",
                     ) -> Path:
    """``path`` if it does not exist or is an empty folder (not a link; a claim file left by
    a command that was killed does not count), outside the zoo (``check_outside_zoo``) and
    below a folder; else a ``ValueError`` that says why, then ``what_to_do``."""
    path = Path(path).expanduser()
    check_outside_zoo(path, option)
    check_parent_folders(path, option)
    if path.is_symlink():
        raise ValueError(f"{option} {path} is a symbolic link, which is never followed: give a "
                         "new folder.")
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path} is a file, not a folder: give a new folder.")
    if path.exists() and any(p.name != CLAIM_FILE for p in path.iterdir()):
        raise ValueError(f"{option} {path} exists and is not an empty folder: {what_to_do}.")
    return path


def _staging_folders_of(path: Path) -> re.Pattern:
    """The names of ``new_staging_folder`` of ``path`` for any process; group 1 its pid."""
    return re.compile(rf"\.{re.escape(path.name)}\.partial-(\d+)(?:-\d+)?")


def _is_running(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        pass
    return True


def _remove_stale_staging(pattern: re.Pattern, folder: Path) -> None:
    """Remove the entries of ``folder`` whose names ``pattern`` matches in full, its group
    1 the pid of a process that no longer runs, or this process's (a killed command's pid
    given again: the caller, under its lock, has no staging there yet): the staging of a
    command that was killed. A link of that name goes, never what it names; nothing else
    is touched."""
    for entry in folder.iterdir():
        match = pattern.fullmatch(entry.name)
        if match and (int(match[1]) == os.getpid() or not _is_running(int(match[1]))):
            _remove(entry)


def _kept_aside(staging: Path, path: Path) -> Path:
    """Rename a finished ``staging`` that could not be put at ``path`` to a name no later
    run removes (``<name>.unplaced-<pid>``) and return where it is."""
    kept = path.with_name(f"{path.name}.unplaced-{os.getpid()}")
    if os.path.lexists(kept):
        return staging
    try:
        os.rename(staging, kept)
    except OSError:
        return staging
    return kept


@contextlib.contextmanager
def new_output_folder(path: str | os.PathLike, option: str = "--out") -> Iterator[Path]:
    """Claim ``path`` (new, or an empty folder, outside the zoo) for one command's output,
    and yield a staging folder beside it to write into.

    While the block runs, ``path`` exists and holds only a locked claim file, so a second
    command given the same folder is refused at once. When the block ends normally, the
    staging folder is renamed to ``path`` in one step: the output appears whole. When it
    fails, the staging folder is removed and ``path`` is left as it was found (removed if
    this call created it). Staging folders of ``path`` left by killed commands go.
    """
    path = check_new_folder(path, option)
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    fd = _lock_claim(path)
    staging = None
    done = False
    try:
        if [p.name for p in path.iterdir()] != [CLAIM_FILE]:
            raise ValueError(f"{option} {path} was written by another command meanwhile: give a "
                             "new folder.")
        staging = fresh_staging_folder(path)  # under the claim
        yield staging
        (path / CLAIM_FILE).unlink()  # still locked: path is empty for the rename
        try:
            os.replace(staging, path)
        except OSError as error:  # something else was written there: keep the result
            done = True
            raise OSError(error.errno, f"{path} is not empty any more, so the finished output "
                          f"was left in {_kept_aside(staging, path)}: move it where you want it",
                          str(path)) from None
        done = True
    finally:
        if not done:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            with contextlib.suppress(OSError):
                (path / CLAIM_FILE).unlink()
            if created:
                with contextlib.suppress(OSError):
                    path.rmdir()
        os.close(fd)


def check_replaceable_folder(path: str | os.PathLike, names: Iterable[str],
                             option: str = "--out") -> Path:
    """``path`` if ``replaced_files`` may write the files ``names`` into it: a folder or
    nothing yet, not a link, outside the zoo, below a folder, and none of ``names`` in it
    a link or a folder; else a ``ValueError`` that says why."""
    path = Path(path).expanduser()
    check_outside_zoo(path, option)
    check_parent_folders(path, option)
    check_not_linked(path, option)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path} is a file, not a folder: give a folder.")
    for name in names:
        check_not_linked(path / name, option)
        if (path / name).is_dir():
            raise ValueError(f"{option} {path / name} is a folder, which is never replaced: "
                             "move it away or give another folder.")
    return path


@contextlib.contextmanager
def replaced_files(path: str | os.PathLike, names: Iterable[str],
                   option: str = "--out") -> Iterator[Path]:
    """Yield a staging folder beside the folder ``path`` (created when missing) for files
    that replace their namesakes in it when the block ends normally, each renamed into
    place (never written through a link); the folder's other files are left as they are.

    Only files named in ``names`` are written (``check_replaceable_folder``, checked
    before and after the block); ``path`` is claimed under a lock while the block runs.
    When the block fails, the staging folder is removed and ``path`` is as it was
    (removed if this call created it).
    """
    names = tuple(names)
    path = check_replaceable_folder(path, names, option)
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    fd = _lock_claim(path)
    staging = None
    try:
        staging = fresh_staging_folder(path)  # under the claim
        yield staging
        written = sorted(p.name for p in staging.iterdir())
        foreign = [name for name in written if name not in names]
        if foreign:
            raise ValueError(f"{foreign[0]} is not one of the files that replace those of "
                             f"{path}: nothing was replaced.")
        check_replaceable_folder(path, written, option)
        for name in written:
            os.replace(staging / name, path / name)  # a link there is replaced, never followed
    finally:
        if staging is not None:
            _remove(staging)
        with contextlib.suppress(OSError):
            (path / CLAIM_FILE).unlink()
        if created:  # empty when the block failed: removed, as it was not there
            with contextlib.suppress(OSError):
                path.rmdir()
        os.close(fd)


def check_new_path(path: str | os.PathLike, option: str = "--out") -> Path:
    """``path`` if nothing is there, not even a link (else ``OutputExistsError``), it is
    below a folder and not in the zoo (else ``ValueError``): where ``new_output_path`` may
    write."""
    path = Path(path).expanduser()
    if os.path.lexists(path):
        raise OutputExistsError(f"{option} {path} exists already (nothing there is replaced): "
                                "choose a new path.")
    check_outside_zoo(path, option)
    check_parent_folders(path, option)
    return path


@contextlib.contextmanager
def new_output_path(path: str | os.PathLike, option: str = "--out") -> Iterator[Path]:
    """Yield a staging path beside ``path`` for one command's output, a file or a folder
    (an export), that is renamed to ``path`` when the block ends normally: the output
    appears whole.

    ``path`` must not exist, not even as a link (``OutputExistsError``, a
    ``FileExistsError``), nor lie in the zoo (``ValueError``): nothing already there is
    replaced or followed. When the block fails, the staging path is removed and nothing
    else was touched; when something appeared at ``path`` meanwhile, the finished output
    is kept beside it and the error says where. Staging paths of ``path`` left by killed
    commands go.
    """
    path = check_new_path(path, option)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".partial-{os.getpid()}-{path.name}")  # the suffix kept
    _remove_stale_staging(re.compile(rf"\.partial-(\d+)-{re.escape(path.name)}"), path.parent)
    _remove(staging)
    try:
        yield staging
    except BaseException:
        _remove(staging)
        raise
    if os.path.lexists(path):
        raise FileExistsError(f"{path} was written by something else meanwhile, so the finished "
                              f"output was left in {_kept_aside(staging, path)}: move it where "
                              "you want it.")
    os.rename(staging, path)


def _remove(path: Path) -> None:
    """Remove ``path`` (a file, a link or a folder) if it is there; a link goes, never what
    it names."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


@contextlib.contextmanager
def exclusive_lock(path: str | os.PathLike, what: str) -> Iterator[None]:
    """Hold the lock file ``path`` (``flock``, exclusive, non-blocking) for the block; a
    ``ValueError`` naming ``what`` when another process holds it.

    The OS releases a ``flock`` when its process ends, however it ends; the file is
    removed on exit while still held, and a lock taken on a file removed meanwhile is
    taken again on the current one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ValueError(f"{what} is in use by another process (lock {path}): wait for it "
                             "to end and run again.") from None
        try:
            current = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            break
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)


def replace_folder(new: Path, target: Path) -> None:
    """Put the finished folder ``new`` at ``target`` (same file system), replacing the
    folder there: the old one is renamed aside, the new one renamed into place, then the
    old one removed, so ``target`` always holds one whole version."""
    if not target.exists():
        os.rename(new, target)
        return
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    shutil.rmtree(old, ignore_errors=True)
    os.rename(target, old)
    try:
        os.rename(new, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old)


def fresh_staging_folder(path: Path) -> Path:
    """``new_staging_folder(path)`` after removing the ones of ``path`` that killed
    commands left (``_remove_stale_staging``): call it while holding the lock or claim that
    keeps every other writer of ``path`` out."""
    _remove_stale_staging(_staging_folders_of(path), path.parent)
    return new_staging_folder(path)


def new_staging_folder(path: Path) -> Path:
    """A new, empty folder beside ``path`` (``.<name>.partial-<pid>[-N]``), created here, so
    that whatever is written into it and whatever removes it touches nothing else."""
    number = 0
    while True:
        suffix = f"-{number}" if number else ""
        staging = path.with_name(f".{path.name}.partial-{os.getpid()}{suffix}")
        try:
            staging.mkdir()
        except FileExistsError:  # a name taken (a killed command's): never reused
            number += 1
            continue
        return staging


def tree_digest(folder: str | os.PathLike) -> str:
    """A sha256 of everything under ``folder``: each entry's relative path and kind, a
    file's content, a link's target (links are listed, never followed). Two folders have
    the same digest when they hold the same names with the same bytes."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(folder):  # followlinks=False: a link is an entry
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(root) / name
            relative = path.relative_to(folder).as_posix()
            if path.is_symlink():
                entry = f"link {relative} {os.readlink(path)}"
            elif path.is_dir():
                entry = f"folder {relative}"
            else:
                content = hashlib.sha256()
                with path.open("rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        content.update(chunk)
                entry = f"file {relative} {content.hexdigest()}"
            digest.update(entry.encode() + b"\0")
    return digest.hexdigest()


def portable_path(path: str | os.PathLike) -> str:
    """``path`` as a card or a record shows it, without this machine's layout: relative to
    the working folder when inside it, ``~/...`` under the home folder, else relative to
    the working folder (``../data``)."""
    absolute = Path(os.path.abspath(Path(path).expanduser()))
    cwd, home = Path.cwd(), Path.home()
    if absolute == cwd or cwd in absolute.parents:
        return absolute.relative_to(cwd).as_posix()
    if home != Path("/") and (absolute == home or home in absolute.parents):
        return f"~/{absolute.relative_to(home).as_posix()}"
    return Path(os.path.relpath(absolute, cwd)).as_posix()


def portable_text(text: str, paths: Iterable[str | os.PathLike] = ()) -> str:
    """``text`` (a command line, a note) with the absolute paths of the working folder and
    the home folder in it made ``./``-relative and ``~/``, each of ``paths`` (the
    folders and files the command was given, wherever they are) and any other absolute
    path under a folder that exists here (``/tmp/...``, ``/mnt/...``; not ``/usr``...)
    as ``portable_path`` names it: what is published names no local folder."""
    prefixes = {str(Path.home()): "~", str(Path.cwd()): "."}
    for path in paths:  # first: the given paths may lie outside both folders
        absolute = os.path.abspath(Path(path).expanduser())
        if absolute != "/":
            prefixes[absolute] = portable_path(absolute)
    for prefix in sorted((p for p in prefixes if p != "/"), key=len, reverse=True):
        text = re.sub(rf"{re.escape(prefix)}(?=/|\b|$)", prefixes[prefix], text)
    # Any other absolute path that names a place on this machine (a folder in free text,
    # outside the working and home folders): relative to the working folder.
    return _ABSOLUTE_PATH.sub(_portable_if_local, text)


# An absolute path in text: "/" then names, not inside a URL or a relative path.
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~-])/(?:[\w.+@-]+/)*[\w.+@-]+/?")
# Folders whose paths are the same on every machine (a program's path, not a user's data).
_SYSTEM_ROOTS = frozenset({"bin", "sbin", "usr", "lib", "lib64", "etc", "dev", "proc", "sys"})


def _portable_if_local(match: re.Match) -> str:
    path = match.group(0)
    top = path.strip("/").split("/")[0]
    if top in _SYSTEM_ROOTS or not Path("/", top).exists() or path.count("/") < 2:
        return path
    return portable_path(path) + ("/" if path.endswith("/") else "")


def portable_record(record: object, paths: Iterable[str | os.PathLike] = ()) -> object:
    """A JSON-like ``record`` (dicts, lists, strings) with ``portable_text`` (and
    ``paths``) applied to every string in it."""
    if isinstance(record, str):
        return portable_text(record, paths)
    if isinstance(record, dict):
        return {key: portable_record(value, paths) for key, value in record.items()}
    if isinstance(record, (list, tuple)):
        return [portable_record(value, paths) for value in record]
    return record
