"""Leave large released checkpoints behind for a lease call, and bring them back.

A lease call copies the tracked files and the untracked ones git does not ignore, and
``zoo/`` is never ignored. A release folder too large for a call (the flagship's weights
alone are about 70 MB) is left behind by taking it out of the index (``git rm -r
--cached``) and moving its files into the git directory (``.git/keras-gated-left-behind/``,
which no call copies); ``restore`` moves them back and puts them back in the index from
HEAD. The record is kept in that folder, so ``restore`` works after a failed or killed
call and in a new shell:

    python -m training.lease leave-behind     # before the call (prepare says when)
    python -m training.lease restore          # after it, whatever happened

Until ``restore``, ``git status`` shows the folder as deleted: do not commit then.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

STORE = "keras-gated-left-behind"
RECORD = "record.json"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True,
                          capture_output=True, text=True).stdout


def store(root: Path) -> Path:
    """The folder in the git directory that holds what was left behind."""
    path = Path(_git(root, "rev-parse", "--git-path", STORE).strip())
    return path if path.is_absolute() else root / path


def left_behind(root: Path) -> list[str]:
    """The folders left behind now (from the store's record)."""
    record = store(root) / RECORD
    return json.loads(record.read_text()) if record.is_file() else []


def _parked(root: Path, folder: str) -> Path:
    return store(root) / folder.strip("/").replace("/", "__")


def leave_behind(root: Path, folders: list[str]) -> None:
    """Take ``folders`` (tracked, relative to ``root``) out of what a call copies."""
    if left_behind(root):
        raise SystemExit("Folders are already left behind: run `python -m training.lease "
                         "restore` first.")
    for folder in folders:
        if not _git(root, "ls-files", "--", folder).strip():
            raise SystemExit(f"{folder} has no tracked files: nothing to leave behind.")
        if (root / folder).is_symlink() or not (root / folder).is_dir():
            raise SystemExit(f"{folder} is not a folder of the checkout.")
    parked = store(root)
    parked.mkdir(parents=True, exist_ok=True)
    (parked / RECORD).write_text(json.dumps(folders))  # first: restore finds a half-done move
    for folder in folders:
        _git(root, "rm", "-r", "-q", "--cached", "--", folder)
        shutil.move(str(root / folder), str(_parked(root, folder)))


def restore(root: Path) -> list[str]:
    """Move every left-behind folder back and put it back in the index from HEAD;
    returns the folders. Safe to run when nothing is left behind."""
    folders = left_behind(root)
    for folder in folders:
        parked = _parked(root, folder)
        if parked.exists():
            if (root / folder).exists():
                raise SystemExit(f"{folder} exists again beside its left-behind copy "
                                 f"{parked}: keep one of them, then run restore again.")
            shutil.move(str(parked), str(root / folder))
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
