"""Leave large released checkpoints behind for a lease call, and bring them back.

A lease call copies the tracked files and the untracked ones git does not ignore. A
release folder too large for that (the flagship's weights alone are about 70 MB) is left
behind by taking it out of the index (``git rm -r --cached``: the files stay on disk) and
excluding it in ``.git/info/exclude``; ``restore`` puts it back in the index from HEAD and
removes those exclude lines. What was left behind is recorded in ``.git/info/exclude``
itself, between marker lines, so ``restore`` works after a failed or killed call and in
a new shell:

    python -m training.lease leave-behind     # before the call (prepare says when)
    python -m training.lease restore          # after it, whatever happened
"""

from __future__ import annotations

import subprocess
from pathlib import Path

BEGIN = "# keras-gated lease: left behind for a call (python -m training.lease restore)"
END = "# keras-gated lease: end"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True,
                          capture_output=True, text=True).stdout


def exclude_file(root: Path) -> Path:
    """The repository's ``info/exclude`` file."""
    path = Path(_git(root, "rev-parse", "--git-path", "info/exclude").strip())
    return path if path.is_absolute() else root / path


def left_behind(root: Path) -> list[str]:
    """The folders left behind now (from the marked lines of ``.git/info/exclude``)."""
    path = exclude_file(root)
    if not path.is_file():
        return []
    lines = path.read_text().splitlines()
    if BEGIN not in lines:
        return []
    start = lines.index(BEGIN) + 1
    stop = lines.index(END, start) if END in lines[start:] else len(lines)
    return [line.strip("/") for line in lines[start:stop] if line.strip()]


def leave_behind(root: Path, folders: list[str]) -> None:
    """Take ``folders`` (tracked, relative to ``root``) out of what a call copies."""
    if left_behind(root):
        raise SystemExit("Folders are already left behind: run `python -m training.lease "
                         "restore` first.")
    for folder in folders:
        if not _git(root, "ls-files", "--", folder).strip():
            raise SystemExit(f"{folder} has no tracked files: nothing to leave behind.")
    path = exclude_file(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text() if path.is_file() else ""
    block = "\n".join([BEGIN, *[f"/{f.strip('/')}/" for f in folders], END])
    path.write_text(text + ("" if text.endswith("\n") or not text else "\n") + block + "\n")
    for folder in folders:
        _git(root, "rm", "-r", "-q", "--cached", "--", folder)


def restore(root: Path) -> list[str]:
    """Put every left-behind folder back in the index (from HEAD) and drop its exclude
    lines; returns the folders. Safe to run when nothing is left behind."""
    folders = left_behind(root)
    for folder in folders:
        _git(root, "reset", "-q", "HEAD", "--", folder)
    path = exclude_file(root)
    if path.is_file():
        lines = path.read_text().splitlines()
        if BEGIN in lines:
            start = lines.index(BEGIN)
            stop = lines.index(END, start) + 1 if END in lines[start:] else len(lines)
            lines = lines[:start] + lines[stop:]
            path.write_text("\n".join(lines) + ("\n" if lines else ""))
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
