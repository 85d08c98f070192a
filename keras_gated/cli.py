"""The ``keras-gated`` command line: ``list`` and ``info`` (more commands land with the
weights, Hub and training work)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _cmd_list(args: argparse.Namespace) -> int:
    from keras_gated.registry import get_model_entry, list_models

    names = list_models(args.pattern, pretrained=args.pretrained)
    for name in names:
        if args.pretrained:
            print(name)
        else:
            print(f"{name:<22} {get_model_entry(name).description}")
    if not names:
        print("(no match)", file=sys.stderr)
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from keras_gated.registry import create_model, get_model_entry, split_weight_id
    from keras_gated.weights import get_pretrained_cfg, tags_for

    arch, tag = split_weight_id(args.name)
    entry = get_model_entry(arch)
    print(f"name:        {entry.name}")
    print(f"family:      {entry.family}")
    print(f"description: {entry.description}")
    print(f"arguments:   {entry.kwargs}")
    if args.params:
        import numpy as np

        model = create_model(arch)
        trainable = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
        print(f"trainable parameters: {trainable:,}")
    tags = [tag] if tag else tags_for(arch)
    print(f"released weights: {', '.join(f'{arch}.{t}' for t in tags) or 'none yet'}")
    for t in tags:
        cfg = get_pretrained_cfg(f"{arch}.{t}")
        for key, value in vars(cfg).items():
            print(f"  {key}: {value}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="keras-gated",
        description="Gated deep networks for Keras 3: list and inspect the model zoo.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list", help="list registered models (or released weights)")
    p.add_argument("pattern", nargs="?", default=None, help="fnmatch pattern, e.g. 'gresnet*'")
    p.add_argument("--pretrained", action="store_true", help="list released weight ids")
    p.set_defaults(func=_cmd_list)
    p = sub.add_parser("info", help="show a model or weight id")
    p.add_argument("name", help="model name or weight id (gresnet20, gresnet20.cifar10)")
    p.add_argument("--params", action="store_true", help="build it and count parameters")
    p.set_defaults(func=_cmd_info)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as error:
        print(f"keras-gated: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
