"""Train a registered model on a data set with a paper recipe.

    python -m training.train --model gresnet20 --dataset cifar10 --epochs 40 --out runs/g20

Writes to ``--out``: ``log.csv`` (one row per epoch), ``tensorboard/``, ``last.keras``
and ``best.keras`` checkpoints, ``backup/`` (resume state), ``fingerprint.json`` (the
run's settings) and, at the end, ``metrics.json`` with the final model's test accuracy.
The same command started again after a kill resumes from the last finished epoch; on a
finished run it only reports. A launch with other settings neither resumes another run's
backup nor rewrites a finished run: it is refused, naming the difference. While a run
uses the folder, ``run.lock`` (an OS lock, gone with the process) refuses a second one.

``best.keras`` is chosen on the test split (there is no separate validation split in
these recipes); ``metrics.json`` reports the *last* epoch's model, so no number in it
is selected on the test set.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

from training.cli import command_line, positive_int, run_main

STRATEGY_CHOICES = ("default", "mirrored", "multiworker", "tpu", "dataparallel")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m training.train", description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="registered model name (keras-gated list)")
    p.add_argument("--dataset", required=True, help="data tag (cifar10, fashion_mnist), image folder or tfds name")
    p.add_argument("--recipe", help="a recipe of keras_gated/recipes.py (default: the family's)")
    p.add_argument("--epochs", type=positive_int, help="scale the recipe's schedule to N epochs")
    p.add_argument("--batch-size", type=positive_int, help="global batch size (default: the recipe's)")
    p.add_argument("--strategy", default="default", choices=STRATEGY_CHOICES)
    p.add_argument("--cpu-replicas", type=positive_int, default=None,
                   help="logical CPU devices for mirrored/dataparallel on a CPU-only host")
    p.add_argument("--backend", choices=("tensorflow", "jax", "torch"),
                   help="Keras backend (default: KERAS_BACKEND, else tensorflow)")
    p.add_argument("--out", help="output directory (default: runs/<model>.<dataset>)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--precision", default="float32", choices=("float32", "mixed_bfloat16", "mixed_float16"),
                   help="Keras dtype policy; mixed precision is refused on a CPU that would "
                        "emulate it (it is several times slower there)")
    p.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2),
                   help="1: progress bar, 2: one line per epoch")
    return p


def reproduce_command(args: argparse.Namespace, backend: str) -> str:
    """The exact command line that reproduces this run."""
    parts = ["--model", args.model, "--dataset", args.dataset]
    for flag in ("recipe", "epochs", "batch_size", "seed", "precision"):
        value = getattr(args, flag)
        if value is not None and not (flag == "seed" and value == 0) and not (flag == "precision" and value == "float32"):
            parts += [f"--{flag.replace('_', '-')}", str(value)]
    if args.strategy != "default":
        parts += ["--strategy", args.strategy]
    return command_line("training.train", backend, parts)


def _model_kwargs(entry, recipe, info) -> dict:
    import inspect

    kwargs = {"classes": info.num_classes, "input_shape": info.image_shape}
    if recipe.dropout is not None and "dropout" in inspect.signature(entry.constructor).parameters:
        kwargs["dropout"] = recipe.dropout
    return kwargs


def dataset_key(dataset: str) -> str:
    """The data set as a run records it: an image folder by its absolute path (the same
    folder named another way is the same data), a tag or tfds name as given."""
    path = Path(dataset).expanduser()
    return str(path.resolve()) if path.is_dir() else dataset


def recipe_settings(recipe) -> dict:
    """What of a recipe changes the training: its name and settings, without the epochs
    and batch size (recorded on their own) nor its prose (a reworded description must not
    stop a run from resuming)."""
    settings = recipe.to_dict()
    for key in ("table", "notes", "epochs", "batch_size"):
        settings.pop(key)
    return settings


def fingerprint(args: argparse.Namespace, recipe, batch_size: int) -> dict:
    """The settings that make a run (``training.run_dir.check_fingerprint``); the model's
    constructor arguments are added once the data is loaded."""
    settings = {"model": args.model, "dataset": dataset_key(args.dataset),
                "recipe": recipe_settings(recipe), "epochs": recipe.epochs,
                "batch_size": batch_size, "seed": args.seed}
    if args.precision != "float32":
        settings["precision"] = args.precision
    return settings


def set_precision(precision: str) -> None:
    """Apply ``--precision``, refusing mixed precision that this machine would emulate."""
    import keras

    from keras_gated.precision import slow_mixed_precision

    message = slow_mixed_precision(precision) if precision != "float32" else None
    if message:
        raise ValueError(f"--precision {precision}: {message} Pass --precision float32.")
    keras.mixed_precision.set_global_policy(precision)


def run(args: argparse.Namespace) -> int:
    import dataclasses

    import keras

    from keras_gated import datasets
    from keras_gated.registry import get_model_entry
    from training import distribute
    from training.data import make_pipeline, normalisation_mean
    from training.loop import evaluate_metrics, fit_resumable, write_metrics
    from training.optim import apply_weight_decay, make_optimizer
    from training.run_dir import check_fingerprint, check_run_files, finished_run, open_run_folder
    from keras_gated.fast_path import describe, describe_text
    from keras_gated.recipes import default_recipe, get_recipe

    backend = keras.backend.backend()
    entry = get_model_entry(args.model)
    recipe = (get_recipe(args.recipe) if args.recipe else default_recipe(entry.family)).with_epochs(args.epochs)
    batch_size = args.batch_size or recipe.batch_size
    recipe = dataclasses.replace(recipe, batch_size=batch_size)  # recorded as it is used
    out = Path(args.out or f"runs/{args.model}.{Path(args.dataset).name}")
    settings = fingerprint(args, recipe, batch_size)
    with open_run_folder(out):
        check_run_files(out)
        done = finished_run(out, settings, recipe.epochs)
        if done:
            print(f"{out} is already finished: test accuracy {done['test_accuracy']:.4f} after "
                  f"{recipe.epochs} epochs (delete {out / 'metrics.json'} to train again).")
            return 0

        set_precision(args.precision)
        strategy = distribute.make_strategy(args.strategy, args.cpu_replicas)
        keras.utils.set_random_seed(args.seed)
        train_ds, train_info = datasets.load(args.dataset, "train")
        test_ds, test_info = datasets.load(args.dataset, "test")
        model_kwargs = _model_kwargs(entry, recipe, train_info)
        check_fingerprint(out, {**settings, "model_kwargs": model_kwargs}, "[train]")
        steps_per_epoch = math.ceil(train_info.num_examples / batch_size)
        with distribute.scope(strategy):
            model = entry.build(**model_kwargs)
            decayed = apply_weight_decay(model, recipe)
            model.compile(
                optimizer=make_optimizer(recipe, steps_per_epoch),
                loss="sparse_categorical_crossentropy",
                metrics=["accuracy"],
            )
        train = make_pipeline(train_ds, recipe, training=True, batch_size=batch_size,
                              num_examples=train_info.num_examples, seed=args.seed,
                              pad_fill=normalisation_mean(model))
        test = make_pipeline(test_ds, recipe, training=False, batch_size=batch_size)
        train = distribute.shard_for_workers(train, strategy)
        test = distribute.shard_for_workers(test, strategy)
        print(f"[train] {args.model} on {args.dataset} ({train_info.num_examples} train / "
              f"{test_info.num_examples} test), backend {backend}, strategy {args.strategy} "
              f"({distribute.num_replicas(strategy)} replicas)")
        print(f"[train] recipe {recipe.describe()}; {decayed} variables decayed")
        print(f"[train] fast path: {describe_text(model)}")

        if not fit_resumable(model, train, test, epochs=recipe.epochs, out=out,
                             verbose=args.verbose, scope=distribute.scope(strategy)):
            return 1
        metrics = evaluate_metrics(model, test, test_info, out, {
            "command": reproduce_command(args, backend),
            "model": args.model,
            "epochs": recipe.epochs,
            "recipe": recipe.describe(),
            "strategy": args.strategy,
            "fast_path": describe(model),
        })
        write_metrics(out, metrics)
    print(f"[train] test accuracy {metrics['test_accuracy']:.4f} ({test_info.num_examples} "
          f"images); wrote {out / 'metrics.json'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("training.train", build_parser(), run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
