"""Train a registered model on a data set with a paper recipe.

    python -m training.train --model gresnet20 --dataset cifar10 --epochs 40 --out runs/g20

Writes to ``--out``: ``log.csv`` (one row per epoch), ``tensorboard/``, ``last.keras``
and ``best.keras`` checkpoints, ``backup/`` (resume state) and, at the end,
``metrics.json`` with the final model's test accuracy. The same command started again
after a kill resumes from the last finished epoch; on a finished run it only reports.

``best.keras`` is chosen on the test split (there is no separate validation split in
these recipes); ``metrics.json`` reports the *last* epoch's model, so no number in it
is selected on the test set.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from training.recipes import RECIPES

STRATEGY_CHOICES = ("default", "mirrored", "multiworker", "tpu", "dataparallel")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m training.train", description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="registered model name (keras-gated list)")
    p.add_argument("--dataset", required=True, help="data tag (cifar10, fashion_mnist), image folder or tfds name")
    p.add_argument("--recipe", choices=sorted(RECIPES), help="default: the family's recipe")
    p.add_argument("--epochs", type=int, help="scale the recipe's schedule to N epochs")
    p.add_argument("--batch-size", type=int, help="global batch size (default: the recipe's)")
    p.add_argument("--strategy", default="default", choices=STRATEGY_CHOICES)
    p.add_argument("--cpu-replicas", type=int, default=None,
                   help="logical CPU devices for mirrored/dataparallel on a CPU-only host")
    p.add_argument("--backend", choices=("tensorflow", "jax", "torch"),
                   help="Keras backend (default: KERAS_BACKEND, else tensorflow)")
    p.add_argument("--out", help="output directory (default: runs/<model>.<dataset>)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2),
                   help="1: progress bar, 2: one line per epoch")
    return p


def reproduce_command(args: argparse.Namespace, backend: str) -> str:
    """The exact command line that reproduces this run."""
    parts = ["python", "-m", "training.train", "--model", args.model, "--dataset", args.dataset]
    for flag in ("recipe", "epochs", "batch_size", "seed"):
        value = getattr(args, flag)
        if value is not None and not (flag == "seed" and value == 0):
            parts += [f"--{flag.replace('_', '-')}", str(value)]
    if args.strategy != "default":
        parts += ["--strategy", args.strategy]
    return f"KERAS_BACKEND={backend} " + shlex.join(parts)


def hardware() -> str:
    import keras

    devices = keras.distribution.list_devices()
    accelerators = [d for d in devices if "cpu" not in d.lower()]
    cpu = f"{os.cpu_count()} CPU cores ({platform.machine()})"
    return f"{cpu}; accelerators: {', '.join(accelerators) if accelerators else 'none'}"


class WallClock:
    """Wall time accumulated over every launch of a run, kept in ``run_state.json``."""

    def __init__(self, path: Path):
        self.path = path
        self.previous = json.loads(path.read_text())["wall_time_s"] if path.exists() else 0.0
        self.start = time.time()

    def total(self) -> float:
        return self.previous + time.time() - self.start

    def save(self) -> None:
        self.path.write_text(json.dumps({"wall_time_s": round(self.total(), 1)}))


def _model_kwargs(entry, recipe, info) -> dict:
    import inspect

    kwargs = {"classes": info.num_classes, "input_shape": info.image_shape}
    if recipe.dropout is not None and "dropout" in inspect.signature(entry.constructor).parameters:
        kwargs["dropout"] = recipe.dropout
    return kwargs


def run(args: argparse.Namespace) -> int:
    import keras

    from keras_gated import datasets
    from keras_gated.registry import get_model_entry
    from training import distribute
    from training.callbacks import (
        EpochBackup,
        ResumableCSVLogger,
        StopOnNaN,
        best_logged,
        restore_backup,
    )
    from training.data import make_pipeline
    from training.optim import apply_weight_decay, make_optimizer
    from training.recipes import default_recipe, get_recipe

    backend = keras.backend.backend()
    entry = get_model_entry(args.model)
    recipe = (get_recipe(args.recipe) if args.recipe else default_recipe(entry.family)).with_epochs(args.epochs)
    batch_size = args.batch_size or recipe.batch_size
    out = Path(args.out or f"runs/{args.model}.{Path(args.dataset).name}")
    out.mkdir(parents=True, exist_ok=True)
    metrics_path = out / "metrics.json"
    if metrics_path.exists():
        done = json.loads(metrics_path.read_text())
        if done.get("epochs") == recipe.epochs:
            print(f"{out} is already finished: test accuracy {done['test_accuracy']:.4f} "
                  f"after {recipe.epochs} epochs (delete {metrics_path} to train again).")
            return 0

    strategy = distribute.make_strategy(args.strategy, args.cpu_replicas)
    keras.utils.set_random_seed(args.seed)
    train_ds, train_info = datasets.load(args.dataset, "train")
    test_ds, test_info = datasets.load(args.dataset, "test")
    steps_per_epoch = math.ceil(train_info.num_examples / batch_size)
    train = make_pipeline(train_ds, recipe, training=True, batch_size=batch_size,
                          num_examples=train_info.num_examples, seed=args.seed)
    test = make_pipeline(test_ds, recipe, training=False, batch_size=batch_size)
    train = distribute.shard_for_workers(train, strategy)
    test = distribute.shard_for_workers(test, strategy)

    with distribute.scope(strategy):
        model = entry.build(**_model_kwargs(entry, recipe, train_info))
        decayed = apply_weight_decay(model, recipe)
        model.compile(
            optimizer=make_optimizer(recipe, steps_per_epoch),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
        )
    print(f"[train] {args.model} on {args.dataset} ({train_info.num_examples} train / "
          f"{test_info.num_examples} test), backend {backend}, strategy {args.strategy} "
          f"({distribute.num_replicas(strategy)} replicas)")
    print(f"[train] recipe {recipe.describe()}; {decayed} variables decayed")

    clock = WallClock(out / "run_state.json")
    nan_guard = StopOnNaN()
    log_path = out / "log.csv"
    callbacks = [
        nan_guard,
        ResumableCSVLogger(log_path),  # before the backup: see its docstring
        EpochBackup(out / "backup", nan_guard),
        keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: clock.save()),
        keras.callbacks.ModelCheckpoint(out / "last.keras"),
        keras.callbacks.ModelCheckpoint(
            out / "best.keras", monitor="val_accuracy", mode="max", save_best_only=True,
            initial_value_threshold=best_logged(log_path, "val_accuracy"),
        ),
        keras.callbacks.TensorBoard(out / "tensorboard"),
    ]
    initial_epoch = restore_backup(model, out / "backup")
    if initial_epoch:
        print(f"[train] resuming from {out / 'backup'} after epoch {initial_epoch}")
    model.fit(train, epochs=recipe.epochs, initial_epoch=initial_epoch, validation_data=test,
              callbacks=callbacks, verbose=args.verbose)
    clock.save()
    if nan_guard.nan_at is not None:
        epoch, batch = nan_guard.nan_at
        print(
            f"[train] stopped: the loss became NaN/inf at epoch {epoch + 1}, batch {batch + 1}. "
            "The last good epoch's backup is kept; lower the learning rate or batch size "
            "(or check the data), then start again with a new --out.",
            file=sys.stderr,
        )
        return 1

    _, accuracy = model.evaluate(test, verbose=0)
    metrics = {
        "test_accuracy": round(float(accuracy), 4),
        "split": "test",
        "num_examples": test_info.num_examples,
        "dataset": test_info.note,
        "command": reproduce_command(args, backend),
        "model": args.model,
        "epochs": recipe.epochs,
        "recipe": recipe.describe(),
        "backend": backend,
        "strategy": args.strategy,
        "hardware": hardware(),
        "wall_time_s": round(clock.total(), 1),
        "keras_version": keras.__version__,
    }
    metrics_path.write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"[train] test accuracy {accuracy:.4f} ({test_info.num_examples} images); "
          f"wrote {metrics_path}")
    return 0


def prepare_environment(args: argparse.Namespace) -> None:
    """Environment that must be set before Keras/JAX/TF are imported."""
    if args.backend:
        os.environ["KERAS_BACKEND"] = args.backend
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if args.strategy == "dataparallel" and args.cpu_replicas:
        flag = f"--xla_force_host_platform_device_count={args.cpu_replicas}"
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flag}".strip()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    prepare_environment(args)
    try:
        return run(args)
    except ValueError as error:
        print(f"training.train: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
