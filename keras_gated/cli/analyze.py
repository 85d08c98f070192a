"""``keras-gated analyze``: gate values, block removal, pruning and stage analyses of
weights, written as PNGs and ``analysis.json``."""

from __future__ import annotations

import argparse

from keras_gated import datasets  # the module: its functions looked up when called
from keras_gated.analysis.report import ANALYSIS_FILES, PLOTS, analyze, subset
from keras_gated.cli.arguments import source_weights
from keras_gated.evaluation import data_classes, weights_classes
from keras_gated.files import check_new_folder, check_replaceable_folder
from keras_gated.models import factory  # the module: create_model looked up when called


def _with_its_head(arch: str, weights: str):
    """``arch`` built with ``weights`` and the class count of the head they hold (a
    fine-tuned net's 2 classes, say), which the constructor's default would not match."""
    classes = weights_classes(arch, weights)
    return factory.create_model(arch, weights=weights, **({"classes": classes} if classes else {}))


def analyze_command(args: argparse.Namespace) -> int:
    """``keras-gated analyze WEIGHT_ID --dataset DATA --out DIR [--overwrite]``."""
    if args.overwrite:  # before anything is loaded
        check_replaceable_folder(args.out, ANALYSIS_FILES)
    else:
        check_new_folder(args.out, what_to_do="give a new one, or add --overwrite to replace "
                         "the analysis's own files in it")
    arch, weights = source_weights(args)
    model = _with_its_head(arch, weights)
    twin = _with_its_head(args.twin, args.twin_weights or weights) if args.twin else None
    x, y, info = datasets.load_numpy(args.dataset, "test")
    relabel = data_classes(model, info, weights, args.dataset, arch, dict(args.class_map))
    y = relabel[y]
    if info.num_classes != model.num_classes:
        raise ValueError(f"{args.dataset} has {info.num_classes} classes but {arch} (weights "
                         f"{weights}) has {model.num_classes}: analyze it on the data set it "
                         "was trained on.")
    x, y = subset(x, y, args.examples)
    result = analyze(model, x, y, args.out, twin=twin, with_prune=not args.no_prune,
                     overwrite=args.overwrite)
    plots = sorted(name for entry, name in PLOTS.items() if entry in result)
    print(f"{arch} (weights {weights}) on {len(x)} {args.dataset} test images: accuracy "
          f"{result['accuracy']:.4f}; wrote {args.out}/analysis.json and {', '.join(plots)}")
    return 0
