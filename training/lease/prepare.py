"""``python -m training.lease prepare``: build the git-ignored folder a lease call carries.

    python -m training.lease prepare            # .lease/ in the checkout root

It holds the packed CIFAR-10 splits (``training.lease.compact_data``, checked to decode to
``keras_gated.datasets``'s arrays), the wheels the host lacks for its Python (3.12,
manylinux x86-64): keras, optree and namex, and the Pillow whose decoder the pixels were
checked with; and ``manifest.json`` with every file's sha256. It then lists what a call
copies (tracked files, untracked files git does not ignore, and ``.lease/``) and refuses,
naming the largest items, when that is over 60 MiB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

LIMIT_BYTES = 60 * 2**20
HOST_PYTHON = "3.12"
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64")


def wanted_wheels() -> list[str]:
    """Requirements of the carried wheels: this Keras and Pillow, optree, namex."""
    import keras
    import PIL

    return [f"keras=={keras.__version__}", "optree", "namex", f"pillow=={PIL.__version__}"]


def download_wheels(folder: Path, requirements: list[str]) -> None:
    """pip download of ``requirements`` as binary wheels for the host's Python."""
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--only-binary=:all:", "--python-version", HOST_PYTHON, "--implementation", "cp",
               "-d", str(folder)]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    subprocess.run(command + requirements, check=True)


def _have(folder: Path, requirement: str) -> bool:
    name, _, version = requirement.partition("==")
    for wheel in folder.glob("*.whl"):
        wname, wversion = wheel.name.split("-")[:2]
        if wname.lower() == name.lower() and (not version or wversion == version):
            return True
    return False


def travelling_files(root: Path, lease_dir: Path) -> list[tuple[str, int]]:
    """(path, bytes) of every file a lease call copies from ``root``."""
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True, capture_output=True,
    ).stdout.decode().split("\0")
    files = []
    for name in filter(None, listed):
        path = root / name
        if path.is_file() and not path.is_symlink():
            files.append((name, path.stat().st_size))
    for path in sorted(lease_dir.rglob("*")):
        if path.is_file() and not path.is_symlink():
            files.append((str(path.relative_to(root)), path.stat().st_size))
    return files


def summarize(files: list[tuple[str, int]]) -> tuple[int, list[tuple[str, int]]]:
    """Total bytes and the largest top-level items (folders summed) of ``files``."""
    groups: dict[str, int] = {}
    for name, size in files:
        parts = Path(name).parts
        key = "/".join(parts[:2]) if len(parts) > 2 else name
        groups[key] = groups.get(key, 0) + size
    return sum(s for _, s in files), sorted(groups.items(), key=lambda kv: -kv[1])


def main(args: argparse.Namespace) -> int:
    from training.lease.compact_data import SPLITS, pack_split
    from training.lease.travel import check_checkout
    from keras_gated.datasets import CIFAR10_ZIP, data_dirs

    root = Path(args.root).resolve()
    check_checkout(root, "prepare")
    out = (root / args.out).resolve() if not Path(args.out).is_absolute() else Path(args.out)
    if out.is_symlink() or root not in out.parents:
        raise SystemExit(f"{args.out}: the carried folder must be a real folder inside {root}.")
    zip_path = next((d / CIFAR10_ZIP for d in data_dirs() if (d / CIFAR10_ZIP).is_file()), None)
    if zip_path is None:
        raise SystemExit(f"{CIFAR10_ZIP} not found: set KERAS_GATED_DATA to the folder that holds it.")
    out.mkdir(exist_ok=True)
    data = []
    for split in SPLITS:
        target = out / f"cifar10-{split}.npz"
        print(f"packing CIFAR-10 {split} into {target.relative_to(root)}", flush=True)
        data.append(pack_split(zip_path, split, target))
    wheels = out / "wheels"
    needed = [r for r in wanted_wheels() if not _have(wheels, r)]
    if needed:
        print(f"downloading wheels for Python {HOST_PYTHON}: {', '.join(needed)}", flush=True)
        download_wheels(wheels, needed)
    from training.lease.bundle import sha256_file

    manifest = {
        "data": data,
        "host_python": HOST_PYTHON,
        "files": {str(p.relative_to(out)): sha256_file(p)
                  for p in sorted(out.rglob("*")) if p.is_file() and p.name != "manifest.json"},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    files = travelling_files(root, out)
    total, groups = summarize(files)
    print(f"a lease call copies {len(files)} files, {total / 2**20:.1f} MiB "
          f"(limit {LIMIT_BYTES / 2**20:.0f} MiB); largest:")
    for name, size in groups[:8]:
        print(f"  {size / 2**20:7.2f} MiB  {name}")
    if total > LIMIT_BYTES:
        from training.lease.travel import largest_releases

        behind = largest_releases(files, total - LIMIT_BYTES)
        advice = (f"leave {', '.join(behind)} behind for the call with `python -m training.lease "
                  "leave-behind` (and `python -m training.lease restore` after it)"
                  if behind else "make the largest items above smaller")
        print(f"refused: {total / 2**20:.1f} MiB is over {LIMIT_BYTES / 2**20:.0f} MiB; {advice}.",
              file=sys.stderr)
        return 1
    return 0


def travelling_total(root: Path, lease_dir: Path) -> tuple[list[tuple[str, int]], int]:
    files = travelling_files(root, lease_dir)
    return files, sum(size for _, size in files)


def leave_behind_main(args: argparse.Namespace) -> int:
    """Leave the fewest largest releases behind so that a call fits the limit."""
    from training.lease.travel import check_checkout, largest_releases, leave_behind

    root = Path(args.root).resolve()
    check_checkout(root, "leave-behind")
    files, total = travelling_total(root, root / args.out)
    behind = largest_releases(files, total - LIMIT_BYTES)
    if not behind:
        print(f"a lease call copies {total / 2**20:.1f} MiB: nothing needs to stay behind")
        return 0
    leave_behind(root, behind)
    _, after = travelling_total(root, root / args.out)
    print(f"left behind {', '.join(behind)} (out of the index, the files parked in the git "
          f"directory): a lease call now copies {after / 2**20:.1f} MiB. After the call, and "
          "before any commit: `python -m training.lease restore`.")
    return 0 if after <= LIMIT_BYTES else 1


def restore_main(args: argparse.Namespace) -> int:
    from training.lease.travel import check_checkout, restore

    root = Path(args.root).resolve()
    check_checkout(root, "restore")
    folders = restore(root)
    print(f"restored {', '.join(folders)}" if folders else "nothing was left behind")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=".lease", help="the carried folder (inside the checkout)")
    parser.add_argument("--root", default=".", help=argparse.SUPPRESS)
