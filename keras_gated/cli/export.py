"""``keras-gated export``: a model for serving, as ONNX, TFLite or a TF SavedModel."""

from __future__ import annotations

import argparse
from pathlib import Path

from keras_gated.export import default_file_name, export
from keras_gated.models import factory  # the module: create_model looked up when called
from keras_gated.progress import Bar


def model_with_weights(name: str, weights: str | None):
    """``create_model(name, weights=weights)``; a weight id (``gresnet20.cifar10``) as ``name``
    brings its own tag."""
    return factory.create_model(name, weights=weights) if weights else factory.create_model(name)


def export_command(args: argparse.Namespace) -> int:
    """``keras-gated export NAME --format FORMAT``."""
    with Bar(2, f"exporting {args.name} as {args.format}", unit="stage") as bar:
        model = model_with_weights(args.name, args.weights)
        bar.advance()
        out = Path(args.out) if args.out else Path(default_file_name(model.name, args.format))
        export(model, out, args.format)
    weights = args.weights or (args.name.split(".", 1)[1] if "." in args.name else "random")
    print(f"exported {model.name} (weights {weights}) as {args.format}: {out}")
    return 0
