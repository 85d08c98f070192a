"""Files written whole or not at all: a reader (or a run resumed after a crash) finds the
previous version or the new one, never part of one."""

from __future__ import annotations

import os
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``path`` through a temporary sibling and an atomic rename: a crash or a full
    disk leaves the previous version (or nothing), never half a file."""
    partial = path.with_name(f"{path.name}.partial")
    try:
        with partial.open("w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
