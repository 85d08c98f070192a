"""Leave large released checkpoints behind for a lease call, and bring them back.

A lease call copies the tracked files and the untracked ones git does not ignore, and
``zoo/`` is never ignored. A release folder too large for a call (the flagship's weights
alone are about 70 MB) is left behind by taking it out of the index and moving its files
into the git directory (``.git/keras-gated-left-behind/``, which no call copies);
``restore`` moves them back and puts back the index entries the folder had (staged
changes and new staged files included). The record, with those entries, is written
before anything changes and kept in that folder, so ``restore`` works after a failed or
killed call, or a killed ``leave-behind``, and in a new shell:

    python -m training.lease leave-behind     # before the call (prepare says when)
    python -m training.lease restore          # after it, whatever happened

Until ``restore``, ``git status`` shows the folder as deleted: do not commit then.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

STORE = "keras-gated-left-behind"
RECORD = "record.json"
NOT_A_CHECKOUT = ("python -m training.lease {command} must run from the top of the project's "
                  "git checkout: cd to it.")


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    """``git -C root args``; a failure ends in git's own one-line reason."""
    try:
        return subprocess.run(["git", "-C", str(root), *args], check=True, input=stdin,
                              capture_output=True, text=True).stdout
    except subprocess.CalledProcessError as error:
        lines = [line for line in error.stderr.splitlines() if line.strip()]
        reason = next((line for line in lines if line.startswith(("fatal:", "error:"))),
                      lines[0] if lines else f"exit status {error.returncode}")
        raise SystemExit(f"git {args[0]} failed in {root} ({reason}): fix that, then run "
                         "the command again.") from None


def check_checkout(root: Path, command: str) -> None:
    """Refuse, in one sentence, a ``root`` that is not the top of a git checkout."""
    try:
        top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        raise SystemExit(f"python -m training.lease {command} needs git: install it.") from None
    if not top or Path(top).resolve() != root.resolve():
        raise SystemExit(NOT_A_CHECKOUT.format(command=command))


def store(root: Path) -> Path:
    """The folder in the git directory that holds what was left behind."""
    path = Path(_git(root, "rev-parse", "--git-path", STORE).strip())
    return path if path.is_absolute() else root / path


def _record(root: Path) -> dict:
    """The store's record: ``folders`` left behind and, for each, its ``index`` entries
    (``git ls-files -s`` lines) from before; empty when nothing is left behind. A record
    that is a bare list of folders has no saved entries."""
    path = store(root) / RECORD
    if not path.is_file():
        return {"folders": [], "index": {}}
    record = json.loads(path.read_text())
    return {"folders": record, "index": {}} if isinstance(record, list) else record


def left_behind(root: Path) -> list[str]:
    """The folders left behind now (from the store's record)."""
    return _record(root)["folders"]


def _parked(root: Path, folder: str) -> Path:
    return store(root) / folder.strip("/").replace("/", "__")


def index_entries(root: Path, folder: str) -> list[str]:
    """``folder``'s index entries as ``git ls-files -s`` gives them ("mode sha stage\\tpath"),
    staged content and unmerged stages included."""
    return [line for line in _git(root, "ls-files", "-s", "-z", "--", folder).split("\0") if line]


def _set_index(root: Path, folder: str, entries: list[str]) -> None:
    """Make ``folder``'s index entries exactly ``entries``: every path now under it is
    removed (whatever its staged content), then each entry is put back as it was."""
    paths = [line.split("\t", 1)[1] for line in index_entries(root, folder)]
    if paths:
        _git(root, "update-index", "--force-remove", "-z", "--stdin", stdin="\0".join(paths) + "\0")
    if entries:
        _git(root, "update-index", "-z", "--index-info", stdin="\0".join(entries) + "\0")


def _write_record(root: Path, record: dict) -> None:
    """Write the record whole or not at all (a temporary file renamed over it)."""
    path = store(root) / RECORD
    temporary = path.with_name(RECORD + ".tmp")
    temporary.write_text(json.dumps(record, indent=1))
    os.replace(temporary, path)


def leave_behind(root: Path, folders: list[str]) -> None:
    """Take ``folders`` (tracked, relative to ``root``) out of what a call copies."""
    if left_behind(root):
        raise SystemExit("Folders are already left behind: run `python -m training.lease "
                         "restore` first.")
    for folder in folders:
        if not index_entries(root, folder):
            raise SystemExit(f"{folder} has no tracked files: nothing to leave behind.")
        if (root / folder).is_symlink() or not (root / folder).is_dir():
            raise SystemExit(f"{folder} is not a folder of the checkout.")
    store(root).mkdir(parents=True, exist_ok=True)
    # The record comes first, with every entry as it is now: whatever point a kill
    # stops at below, restore puts the files and the index back from it.
    _write_record(root, {"folders": folders,
                         "index": {folder: index_entries(root, folder) for folder in folders}})
    for folder in folders:
        _set_index(root, folder, [])
        shutil.move(str(root / folder), str(_parked(root, folder)))


def restore(root: Path) -> list[str]:
    """Move every left-behind folder back and give it back the index entries it had;
    returns the folders. Safe to run when nothing is left behind."""
    record = _record(root)
    folders = record["folders"]
    for folder in folders:
        parked = _parked(root, folder)
        if parked.exists() and (root / folder).exists():
            raise SystemExit(f"{folder} exists again beside its left-behind copy "
                             f"{parked}: keep one of them, then run restore again.")
    for folder in folders:
        parked = _parked(root, folder)
        if parked.exists():
            shutil.move(str(parked), str(root / folder))
        if folder in record["index"]:
            _set_index(root, folder, record["index"][folder])
        else:
            _git(root, "reset", "-q", "HEAD", "--", folder)
    if folders:
        (store(root) / RECORD).unlink()
        store(root).rmdir()
    return folders


def largest_releases(files: list[tuple[str, int]], excess: int) -> list[str]:
    """The fewest ``zoo/<weight id>`` folders, largest first, whose sizes add up to at
    least ``excess`` bytes (empty when ``excess`` <= 0)."""
    sizes: dict[str, int] = {}
    for name, size in files:
        parts = Path(name).parts
        if len(parts) > 2 and parts[0] == "zoo":
            sizes[f"zoo/{parts[1]}"] = sizes.get(f"zoo/{parts[1]}", 0) + size
    chosen, freed = [], 0
    for folder, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
        if freed >= excess:
            break
        chosen.append(folder)
        freed += size
    return chosen
