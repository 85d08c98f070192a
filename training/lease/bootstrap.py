"""Make the carried wheels importable on a host without Keras (standard library only).

A wheel is a zip archive whose top level is importable as it is: unpacking it into a
folder on ``sys.path`` installs it for this process, with no index, no build step and no
pip. Only wheels without scripts or data sections are carried (keras, optree, namex).
"""

from __future__ import annotations

import atexit
import importlib
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path


def missing(module: str) -> bool:
    """True when ``module`` cannot be imported here."""
    try:
        importlib.import_module(module)
    except ImportError:
        return True
    return False


def temporary_site() -> Path:
    """A new folder for this process's unpacked wheels, removed when the process ends
    (the modules imported from it are loaded by then)."""
    site = Path(tempfile.mkdtemp(prefix="keras-gated-lease-site-"))
    atexit.register(shutil.rmtree, site, ignore_errors=True)
    return site


def unpack_wheels(wheels: list[Path], site: Path) -> list[str]:
    """Unpack each wheel into ``site`` (a fresh folder) and put it first on ``sys.path``;
    returns the wheels' file names. Members that would land outside ``site`` are refused."""
    site = site.resolve()
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                target = (site / member).resolve()
                if site not in target.parents and target != site:
                    raise ValueError(f"{wheel.name}: member {member!r} would unpack outside {site}.")
            archive.extractall(site)
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    return [w.name for w in wheels]


def ensure_keras(wheel_dir: Path) -> list[str]:
    """Import Keras as installed, or from the wheels in ``wheel_dir`` when it is missing
    (unpacked into a new temporary folder). Returns the wheels used (empty: none)."""
    if not missing("keras"):
        return []
    wheels = sorted(Path(wheel_dir).glob("*.whl"))
    if not wheels:
        raise SystemExit(
            f"Keras is not installed and no wheels were carried in {wheel_dir}: run "
            "`python -m training.lease prepare` in the checkout before the call."
        )
    site = temporary_site()
    used = unpack_wheels(wheels, site)
    if missing("keras"):
        raise SystemExit(f"Keras still cannot be imported after unpacking {', '.join(used)}.")
    return used
