"""Train a registered model on a data set with a paper recipe.

    python -m training.train --model gresnet20 --dataset cifar10 --epochs 40 --out runs/g20

Writes to ``--out``: ``log.csv`` (one row per epoch), ``tensorboard/``, ``last.keras``
and ``best.keras`` checkpoints, ``backup/`` (resume state), ``fingerprint.json`` (the
run's settings) and, at the end, ``metrics.json`` with the final model's test accuracy.
The same command started again after a kill resumes from the last finished epoch; on a
finished run it only reports. A launch with other settings neither resumes another run's
backup nor rewrites a finished run: it is refused, naming the difference. While a run
uses the folder, ``run.lock`` (an OS lock, gone with the process) refuses a second one.

The ``val_*`` metrics and ``best.keras`` come from a validation split held out of the
training data: a fraction F (``--validation-split F``, default 0.1) of the training
examples drawn at random with ``--seed``, as ``python -m training.finetune`` does; the
test split is evaluated once, at the end. ``--validation-split 0`` holds nothing out and
validates on the test split (as runs started before the held-out default did; such a run
in ``--out`` resumes with the validation it recorded). ``metrics.json`` reports the *last*
epoch's model and says which split ``val_*`` is (``val_split``).

``--model-arg NAME=VALUE`` (repeatable) passes a constructor argument to the model
(``k_init=0.5``, ``transform_bias=-3``), ``--lr`` replaces the recipe's base learning
rate (the schedule's shape is kept), ``--clip-norm C`` rescales every gradient to a global
L2 norm of at most C. All of these are settings of the run (``fingerprint.json``): a run
is resumed only with the same values.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

# The library's modules that import Keras are imported inside the functions below: the
# backend (--backend) is set from the command line first (``training.arguments.run_main``).
from keras_gated.cli.arguments import dataset_help
from keras_gated.files import portable_record
from keras_gated.model_args import format_model_arg, parse_model_args
from keras_gated.registry import get_model_entry
from keras_gated.training.build import (  # noqa: F401  (default_recipe_name, split_validation: public here too)
    RunSettings,
    build_run,
    default_recipe_name,
    model_kwargs as data_model_kwargs,
    run_recipe,
    split_validation,
)
from keras_gated.training.run_dir import (
    FINGERPRINT_FILE,
    START_AGAIN,
    check_fingerprint,
    check_no_linked_run_files,
    check_out_path,
    check_run_files,
    finished_run,
    open_run_folder,
    read_json,
)
from training.arguments import (
    add_data_engine_argument,
    add_time_limit_arguments,
    command_line,
    positive_float,
    positive_int,
    run_main,
)

# The name tests and older callers import; ``keras_gated.training.build.model_kwargs`` is the function.
_model_kwargs = data_model_kwargs

STRATEGY_CHOICES = ("default", "mirrored", "multiworker", "tpu", "dataparallel")

# The settings of a run recorded after the flags that give them were added, at their
# values when the flag is not given: a fingerprint.json written before (that lacks them)
# compares equal to a launch without those flags, so older runs still resume.
FINGERPRINT_DEFAULTS = {"model_args": {}, "validation_split": None, "lr": None, "clip_norm": None,
                        "validation_seeded": False, "precision": "float32",
                        # recipe fields added later, at the value every earlier recipe had
                        "recipe.lr_schedule": "step", "recipe.warmup": 0.0}

# The fraction of the training examples held out (at random, with the seed) for val_* and
# best.keras when --validation-split is not given.
DEFAULT_VALIDATION_SPLIT = 0.1


def fraction(text: str) -> float:
    """argparse type: a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a fraction strictly between 0 and 1, got {text}")
    return value


def validation_fraction(text: str) -> float:
    """argparse type of ``--validation-split``: 0 (validate on the test split) or a
    fraction strictly between 0 and 1."""
    try:
        if float(text) == 0.0:
            return 0.0
    except ValueError:
        pass
    try:
        return fraction(text)
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"{error} (or 0: validate on the test split)") from None


def resolve_validation(given: float | None, stored: dict | None) -> tuple[float | None, bool]:
    """``(validation_split, seeded)`` of a launch with ``--validation-split given`` (None:
    not given) on a folder whose run recorded ``stored`` (None: no run): the flag's
    fraction (0: None, the test split), else the one a run recorded before the held-out
    default (resumed as it started), else ``DEFAULT_VALIDATION_SPLIT``. A fraction held
    out by this version is drawn at random (seeded); a run recorded before keeps its
    last-fraction hold-out."""
    recorded_before = stored is not None and "validation_seeded" not in stored
    if given is None:
        if recorded_before:
            return stored.get("validation_split"), False
        return DEFAULT_VALIDATION_SPLIT, True
    if given == 0.0:
        return None, False
    if recorded_before and stored.get("validation_split") == given:
        return given, False
    return given, True


def validation_of(args: argparse.Namespace) -> tuple[float | None, bool]:
    """``(validation_split, seeded)`` of this launch: as ``run`` resolved it for its
    ``--out``, else as for a new run."""
    resolved = getattr(args, "resolved_validation", None)
    if resolved is not None:
        return resolved
    return resolve_validation(getattr(args, "validation_split", None), None)


def model_args(args: argparse.Namespace) -> dict:
    """``--model-arg`` as a dict (``keras_gated.model_args``: VALUE a Python literal, else
    a string); a malformed one or a name given twice is refused (``ValueError``). Parsed
    here, when the run starts, not by argparse."""
    return parse_model_args(getattr(args, "model_args", None))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m training.train", description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="registered model name (keras-gated list)")
    p.add_argument("--dataset", required=True, help=dataset_help(
        ": its train split trains (less a validation part), its test split is measured"))
    p.add_argument("--recipe", help="a recipe of keras_gated/training/recipes.py (default: the family's)")
    p.add_argument("--epochs", type=positive_int, help="scale the recipe's schedule to N epochs")
    p.add_argument("--batch-size", type=positive_int, help="global batch size (default: the recipe's)")
    p.add_argument("--strategy", default="default", choices=STRATEGY_CHOICES)
    p.add_argument("--cpu-replicas", type=positive_int, default=None,
                   help="logical CPU devices for mirrored/dataparallel on a CPU-only host")
    p.add_argument("--backend", choices=("tensorflow", "jax", "torch"),
                   help="Keras backend (default: KERAS_BACKEND, else tensorflow)")
    p.add_argument("--out", help="output directory (default: runs/<model>.<dataset>)")
    p.add_argument("--restart", action="store_true",
                   help="move a run already in --out aside to <out>.old-<timestamp> and start afresh")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model-arg", dest="model_args", action="append", default=[],
                   metavar="NAME=VALUE",
                   help="a model constructor argument (repeatable), VALUE a Python literal or "
                        "else a string: k_init=0.5, transform_bias=-2")
    p.add_argument("--validation-split", type=validation_fraction, metavar="FRACTION",
                   help="training examples held out (at random, --seed) for val_* and "
                        "best.keras (default 0.1); 0: none, validate on the test split; the "
                        "test split is evaluated once, at the end")
    p.add_argument("--lr", type=positive_float, metavar="LR",
                   help="base learning rate instead of the recipe's (schedule shape unchanged)")
    p.add_argument("--clip-norm", type=positive_float, metavar="C",
                   help="clip the gradient to a global L2 norm of at most C (all variables "
                        "together, as torch.nn.utils.clip_grad_norm_; the weight-decay term "
                        "included)")
    p.add_argument("--precision", default="float32", choices=("float32", "mixed_bfloat16", "mixed_float16"),
                   help="Keras dtype policy; mixed precision is refused on a CPU that would "
                        "emulate it (it is several times slower there)")
    p.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2),
                   help="1: progress bar, 2: one line per epoch")
    add_data_engine_argument(p)
    add_time_limit_arguments(p)
    return p


def reproduce_command(args: argparse.Namespace, backend: str) -> str:
    """The exact command line that reproduces this run."""
    parts = ["--model", args.model, "--dataset", args.dataset]
    for flag in ("recipe", "epochs", "batch_size", "seed", "precision"):
        value = getattr(args, flag)
        if value is not None and not (flag == "seed" and value == 0) and not (flag == "precision" and value == "float32"):
            parts += [f"--{flag.replace('_', '-')}", str(value)]
    for name, value in model_args(args).items():
        parts += ["--model-arg", format_model_arg(name, value)]
    validation = validation_of(args)[0]
    if validation != DEFAULT_VALIDATION_SPLIT:
        parts += ["--validation-split", "0" if validation is None else f"{validation:g}"]
    if getattr(args, "lr", None) is not None:
        parts += ["--lr", str(args.lr)]
    if getattr(args, "clip_norm", None) is not None:
        parts += ["--clip-norm", str(args.clip_norm)]
    if args.strategy != "default":
        parts += ["--strategy", args.strategy]
    if getattr(args, "data_engine", None) is not None:
        parts += ["--data-engine", args.data_engine]
    return command_line("training.train", backend, parts)


def dataset_key(dataset: str) -> str:
    """The data set as a run records it: an image folder by its absolute path (the same
    folder named another way is the same data), a tag or tfds name as given."""
    path = Path(dataset).expanduser()
    return str(path.resolve()) if path.is_dir() else dataset


def recipe_settings(recipe) -> dict:
    """What of a recipe changes the training: its name and settings, without the epochs
    and batch size (recorded on their own) nor its prose (a reworded description must not
    stop a run from resuming)."""
    import dataclasses

    settings = dataclasses.asdict(recipe)
    for key in ("table", "notes", "epochs", "batch_size"):
        settings.pop(key)
    # Settings added to recipes later are recorded only when used, so that runs recorded
    # before them still resume.
    if settings.get("gradient_clip_norm") is None:
        settings.pop("gradient_clip_norm", None)
    if not settings.get("label_smoothing"):
        settings.pop("label_smoothing", None)
    # The optimiser's coefficient is recorded under "momentum", Nadam's β1 included (the
    # key runs have always used), so that a recorded run still resumes.
    beta_1 = settings.pop("beta_1")
    if recipe.optimizer == "nadam":
        settings["momentum"] = beta_1
    return settings


def recipe_for_run(recipe, args: argparse.Namespace, batch_size: int):
    """The recipe as this launch uses it: its batch size, and ``--lr`` and ``--clip-norm``
    in place of the recipe's own values."""
    import dataclasses

    recipe = dataclasses.replace(recipe, batch_size=batch_size)  # recorded as it is used
    if getattr(args, "lr", None) is not None:
        recipe = dataclasses.replace(recipe, learning_rate=args.lr)
    if getattr(args, "clip_norm", None) is not None:
        recipe = dataclasses.replace(recipe, gradient_clip_norm=args.clip_norm)
    return recipe


def fingerprint(args: argparse.Namespace, recipe, batch_size: int) -> dict:
    """The settings that make a run (``keras_gated.training.run_dir.check_fingerprint``); the model's
    constructor arguments are added once the data is loaded."""
    settings = {"model": args.model, "dataset": dataset_key(args.dataset),
                "recipe": recipe_settings(recipe), "epochs": recipe.epochs,
                "batch_size": batch_size, "seed": args.seed,
                "model_args": model_args(args),
                "validation_split": validation_of(args)[0],
                "validation_seeded": validation_of(args)[1],
                "lr": getattr(args, "lr", None),
                "clip_norm": getattr(args, "clip_norm", None),
                "precision": args.precision}  # a run of float32 recorded none before
    return settings


def recorded_settings(out: Path) -> dict | None:
    """The settings a run in ``out`` recorded (its ``fingerprint.json``), None without one."""
    path = out / FINGERPRINT_FILE
    return read_json(path) if path.is_file() else None


def set_precision(precision: str) -> None:
    """Apply ``--precision``, refusing mixed precision that this machine would emulate."""
    import keras

    from keras_gated.precision import slow_mixed_precision  # imports Keras: after run_main set the backend

    message = slow_mixed_precision(precision) if precision != "float32" else None
    if message:
        raise ValueError(f"--precision {precision}: {message} Pass --precision float32.")
    keras.mixed_precision.set_global_policy(precision)


def run_settings(args: argparse.Namespace) -> RunSettings:
    """The run the command line asks for."""
    from keras_gated.training.pipeline import engine_for  # imports Keras: after run_main set the backend

    return RunSettings(model=args.model, dataset=args.dataset, recipe=args.recipe,
                       epochs=args.epochs, batch_size=args.batch_size,
                       lr=getattr(args, "lr", None), clip_norm=getattr(args, "clip_norm", None),
                       model_args=model_args(args),
                       validation_split=validation_of(args)[0],
                       validation_seeded=validation_of(args)[1], seed=args.seed,
                       data_engine=engine_for(getattr(args, "data_engine", None),
                                              getattr(args, "strategy", "default")))


def run_record(args: argparse.Namespace, backend: str, recipe, model, val_split: str) -> dict:
    """What ``metrics.json`` says of how the run was made, beside its accuracies."""
    from keras_gated.models.fast_path_model import describe  # imports Keras: after run_main set the backend

    return {
        "command": reproduce_command(args, backend),
        "model": args.model,
        "epochs": recipe.epochs,
        "recipe": recipe.describe(),
        "strategy": args.strategy,
        "fast_path": describe(model),
        "model_args": model_args(args),
        "lr": args.lr,
        "clip_norm": getattr(args, "clip_norm", None),
        "validation_split": validation_of(args)[0],
        "val_split": val_split,
    }


def run_pipelines(args: argparse.Namespace, built, engine: str, strategy) -> tuple:
    """``(train, val, test, test_info)``: a built run's batches, each sharded across the
    workers of a multi-worker strategy; ``val`` is the test split without a held-out one."""
    from keras_gated.training import distribute
    from keras_gated.training.pipeline import load_split, make_pipeline  # imports Keras: after run_main set the backend

    batch_size = built.recipe.batch_size
    test_ds, test_info = load_split(args.dataset, "test", engine)
    test = distribute.shard_for_workers(
        make_pipeline(test_ds, built.recipe, training=False, batch_size=batch_size), strategy)
    train = distribute.shard_for_workers(built.batches, strategy)
    val = test
    if built.val_ds is not None:
        val = distribute.shard_for_workers(
            make_pipeline(built.val_ds, built.recipe, training=False, batch_size=batch_size),
            strategy)
    return train, val, test, test_info


def run(args: argparse.Namespace) -> int:
    # Keras and the modules that import it: after run_main set the backend.
    import keras

    from keras_gated.models.fast_path_model import describe_text
    from keras_gated.training import distribute
    from keras_gated.training.loop import TimeLimitReached, evaluate_metrics, fit_resumable, write_metrics

    extra_model_args = model_args(args)  # bad input ends here, before anything is written
    backend = keras.backend.backend()
    entry = get_model_entry(args.model)
    out = Path(args.out or f"runs/{args.model}.{Path(args.dataset).name}")
    check_out_path(out)  # a file, or a path under one: a wrong argument, said as such
    check_no_linked_run_files(out)  # before its fingerprint is read
    args.resolved_validation = resolve_validation(
        args.validation_split, None if args.restart else recorded_settings(out))
    run_config = run_settings(args)
    if args.recipe is None:
        default_recipe_name(entry)  # a model without a recipe is refused before any folder
    recipe = run_recipe(run_config)
    batch_size = recipe.batch_size
    settings = fingerprint(args, recipe, batch_size)
    with open_run_folder(out, restart=args.restart):
        check_run_files(out)
        done = finished_run(out, settings, recipe.epochs, defaults=FINGERPRINT_DEFAULTS)
        if done:
            print(f"{out} is already finished: test accuracy {done['test_accuracy']:.4f} after "
                  f"{recipe.epochs} epochs (to train again: {START_AGAIN}).")
            return 0

        set_precision(args.precision)
        strategy = distribute.make_strategy(args.strategy, args.cpu_replicas)
        built = build_run(run_config, scope=distribute.scope(strategy))
        check_fingerprint(out, {**settings, "model_kwargs": built.model_kwargs,
                                "data_engine": run_config.data_engine, "backend": backend},
                          "[train]", defaults=FINGERPRINT_DEFAULTS)
        model, val_ds, val_info = built.model, built.val_ds, built.val_info
        train, val, test, test_info = run_pipelines(args, built, run_config.data_engine, strategy)
        val_split = val_info.note if val_ds is not None else "test"
        print(f"[train] {args.model} on {args.dataset} ({built.train_info.num_examples} train / "
              f"{test_info.num_examples} test), backend {backend}, strategy {args.strategy} "
              f"({distribute.num_replicas(strategy)} replicas)")
        print(f"[train] val_* metrics and best.keras: {val_split} "
              f"({val_info.num_examples if val_ds is not None else test_info.num_examples} images)"
              + ("; the test split is evaluated once, at the end" if val_ds is not None else ""))
        if extra_model_args:
            print(f"[train] model arguments: {extra_model_args}")
        print(f"[train] recipe {recipe.describe()}; {built.decayed} variables decayed")
        print(f"[train] fast path: {describe_text(model)}")

        time_limit_s = args.time_limit * 60 if getattr(args, "time_limit", None) else None
        try:
            if not fit_resumable(model, train, val, epochs=recipe.epochs, out=out,
                                 verbose=args.verbose, scope=distribute.scope(strategy),
                                 time_limit_s=time_limit_s, shard_mb=getattr(args, "shard_mb", None)):
                return 1
        except TimeLimitReached as stop:
            print(stop)
            return 0
        extra = run_record(args, backend, recipe, model, val_split)
        if val_ds is not None:
            _, val_accuracy = model.evaluate(val, verbose=0)
            extra["val_num_examples"] = val_info.num_examples
            extra["val_accuracy"] = round(float(val_accuracy), 4)
        metrics = portable_record(evaluate_metrics(model, test, test_info, out, extra))
        write_metrics(out, metrics)  # names no local folder: a release copies it
    print(f"[train] test accuracy {metrics['test_accuracy']:.4f} ({test_info.num_examples} "
          f"images); wrote {out / 'metrics.json'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("training.train", build_parser(), run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
