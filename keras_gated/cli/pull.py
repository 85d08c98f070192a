"""``keras-gated pull``: released weights downloaded into the Hugging Face cache."""

from __future__ import annotations

import argparse

from keras_gated.weights.hub import HubDownloadError, pull


def pull_command(args: argparse.Namespace) -> int:
    """``keras-gated pull NAME``."""
    try:
        folder = pull(args.name)
    except HubDownloadError as error:
        if error.local is None:
            raise
        label, path = error.local
        print(f"{args.name} is already here: the {label} copy {path} (sha256 checked) "
              "serves it, so nothing needs downloading (the Hub did not serve it).")
        return 0
    print(f"cached {args.name} in {folder}")
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        print(f"  {path.relative_to(folder).as_posix()}")
    return 0
