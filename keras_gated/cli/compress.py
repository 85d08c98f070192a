"""``keras-gated compress``: a smaller net at a MACs or block budget, by gate-guided block
removal and fine-tuning, written with its card, ``compression.json`` and ``tradeoff.png``."""

from __future__ import annotations

import argparse
import importlib
import json
import shlex
import sys
from pathlib import Path

import keras

from keras_gated import datasets  # the module: its functions looked up when called
from keras_gated.analysis.compress_report import write_compressed
from keras_gated.analysis.report import load_examples
from keras_gated.cli.arguments import source_weights
from keras_gated.evaluation import data_classes, weights_classes
from keras_gated.files import new_output_folder
from keras_gated.models import factory  # the module: create_model looked up when called
from keras_gated.progress import keras_verbose, on_stderr
from keras_gated.training.phases import check_backup_folder, remove_backup

# The module, whose functions are looked up when called (``keras_gated.analysis.compress``
# as an attribute is the package's ``compress`` function, not this module).
compression = importlib.import_module("keras_gated.analysis.compress")


def compress_command_line(args: argparse.Namespace, backend: str) -> str:
    """The command line that reproduces a ``compress`` run (on ``backend``)."""
    parts = ["keras-gated", "compress", args.weight_id, "--dataset", args.dataset]
    parts += ["--macs", str(args.macs)] if args.macs is not None else ["--blocks", str(args.blocks)]
    parts += ["--epochs", str(args.epochs)]
    for flag in ("weights", "pressure_epochs", "strength", "baseline", "remove_like", "examples",
                 "batch_size", "learning_rate", "finetune_learning_rate", "distill",
                 "temperature", "seed", "backup_dir"):
        value = getattr(args, flag)
        if value is not None and (flag, value) not in (("seed", 0),):
            parts += [f"--{flag.replace('_', '-')}", str(value)]
    if args.augment:
        parts.append("--augment")
    for folder, name in getattr(args, "class_map", []):
        parts += ["--class-map", f"{folder}={name}"]
    parts += ["--out", args.out]
    return f"KERAS_BACKEND={backend} {shlex.join(parts)}"


def source_model(arch: str, weights: str) -> keras.Model:
    """The net to compress, with its weights' class count; refused unless it has blocks
    that can be removed."""
    classes = weights_classes(arch, weights)
    model = factory.create_model(arch, weights=weights, **({"classes": classes} if classes else {}))
    if not compression.compressible_blocks(model):
        raise ValueError(compression.not_compressible(model))
    return model


def removed_like(folder: str | None) -> list[str] | None:
    """The blocks an earlier compress run (its ``--remove-like`` folder) removed."""
    if not folder:
        return None
    record = Path(folder) / "compression.json"
    if not record.is_file():
        raise ValueError(f"--remove-like {folder} has no compression.json: "
                         "give a folder written by keras-gated compress.")
    return json.loads(record.read_text())["record"]["removed"]


def run_compression(args: argparse.Namespace, model: keras.Model, train: tuple):
    """``analysis.compress`` of ``model`` on the ``train`` examples, as the options say."""
    options = {k: v for k, v in (("pressure_epochs", args.pressure_epochs),
                                 ("strength", args.strength), ("batch_size", args.batch_size),
                                 ("learning_rate", args.learning_rate),
                                 ("finetune_learning_rate", args.finetune_learning_rate),
                                 ("distill", args.distill), ("temperature", args.temperature))
               if v is not None}
    remove = removed_like(args.remove_like)
    verbose = keras_verbose() if args.verbose is None else args.verbose
    with on_stderr():  # Keras's bars and lines, beside the command's own messages
        return compression.compress(
            model, train, macs=args.macs, blocks=args.blocks, epochs=args.epochs,
            baseline=args.baseline, remove=remove, augment=args.augment, seed=args.seed,
            verbose=verbose, backup_dir=args.backup_dir, delete_backup=False, **options)


def compress_command(args: argparse.Namespace) -> int:
    """``keras-gated compress WEIGHT_ID --dataset DATA (--macs F | --blocks N) --epochs E
    --out DIR``."""
    if args.temperature is not None and args.distill is None:  # before anything is loaded
        raise ValueError("--temperature sets the distillation's temperature: give --distill "
                         "too (e.g. --distill 0.9), or leave --temperature out.")
    if args.backup_dir:  # before anything is loaded or trained
        check_backup_folder(Path(args.backup_dir))
    with new_output_folder(args.out) as staging:  # a second run into --out is refused
        arch, weights = source_weights(args)
        model = source_model(arch, weights)
        x_test, y_test, info = datasets.load_numpy(args.dataset, "test")
        relabel = data_classes(model, info, weights, args.dataset, arch, dict(args.class_map))
        y_test = relabel[y_test]
        if info.num_classes != model.num_classes:
            raise ValueError(f"{args.dataset} has {info.num_classes} classes but {arch} (weights "
                             f"{weights}) has {model.num_classes}: compress a net trained on it.")
        x, y = load_examples(args.dataset, args.examples or sys.maxsize, "train", seed=args.seed)
        result = run_compression(args, model, (x, relabel[y]))
        numbers = write_compressed(
            result, model, staging, final=args.out, arch=arch, dataset=args.dataset,
            test=(x_test.astype("float32"), y_test),
            command=compress_command_line(args, keras.backend.backend()),
            source_weights=f"{arch} (weights {weights})", class_names=info.class_names,
            dataset_note=info.note)
    if args.backup_dir:  # the run has ended and its folder is in place
        remove_backup(args.backup_dir)
    measured = numbers["measured"]
    print(f"{arch} (weights {weights}) compressed ({result.record['method']}): removed "
          f"{', '.join(result.record['removed'])}; test accuracy "
          f"{measured['source']['accuracy']:.4f} -> {measured['compressed']['accuracy']:.4f}, "
          f"MMACs {measured['source']['macs'] / 1e6:.2f} -> {measured['compressed']['macs'] / 1e6:.2f}")
    print(f"wrote {args.out}; load it with weights={str(args.out)!r} or keras.saving.load_model")
    return 0
