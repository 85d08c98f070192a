"""``keras-gated convert``: a model built from a reference PyTorch state dict."""

from __future__ import annotations

import argparse

from keras_gated.convert import convert


def convert_command(args: argparse.Namespace) -> int:
    """``keras-gated convert ARCH SOURCE_FILE``."""
    model = convert(args.arch, args.source_file, args.source, out=args.out)
    print(f"converted {args.source_file} ({args.source} layout) into {model.name}: "
          f"{model.count_params():,} parameters")
    print(f"wrote {args.out}; load it with weights={str(args.out)!r}")
    return 0
