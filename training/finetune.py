"""Fine-tune a pretrained backbone on a new data set and save a zoo-style folder.

    python -m training.finetune --model gresnet20 --weights cifar10 \\
        --dataset fashion_mnist --epochs 5 --out runs/gresnet20-fmnist

The backbone is built with ``include_top=False, pooling="avg"`` (every pretrained weight
but the head); a new ``predictions`` Dense for the new data set's classes goes on top,
so the result keeps the applications head contract. Images that do not match the
backbone's input (e.g. Fashion-MNIST 28×28×1 for a CIFAR net) are tiled to its channels
and centre-padded or cropped. ``--freeze-backbone`` trains the head only (BN layers then
run in inference mode). Outputs as ``training.train`` plus ``<out>/zoo/<name>.<tag>/``,
the folder ``keras-gated publish`` uploads.

``--weights none`` trains the same network from scratch with the same recipe and steps:
the baseline that shows what the pretrained weights are worth. ``--train-examples N``
uses N training examples drawn at random with ``--seed`` (a quick or few-shot run; the
test split stays whole).

``--validation-split F`` (default 0.1) holds out a fraction F of the training examples,
drawn at random with ``--seed``: the ``val_*`` metrics and ``best.keras`` come from it,
the card names it, and the test split is evaluated once, at the end.

Without ``--batch-size`` and ``--epochs`` the run suits them to the number of training
examples (``suited_schedule``): a small data set gets a smaller batch, so that an epoch
has at least ``MIN_STEPS_PER_EPOCH`` steps, and more epochs, so that the run has at least
``MIN_STEPS`` steps; a large one keeps the recipe's. The run says what it chose, and its
recorded command names the values and ``--out``, so that it reruns the same run.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Sequence
from pathlib import Path

# The library's modules that import Keras are imported inside the functions below: the
# backend (--backend) is set from the command line first (``training.arguments.run_main``).
from keras_gated.cli.arguments import dataset_help
from keras_gated.files import portable_path, portable_record, portable_text
from keras_gated.training.build import RunSettings, build_run, run_recipe
from keras_gated.training.run_dir import (
    START_AGAIN,
    check_fingerprint,
    check_run_files,
    check_zoo_folder_replaceable,
    check_zoo_subfolder,
    finished_run,
    open_run_folder,
    record_zoo_folder,
)
from training.arguments import (
    add_data_engine_argument,
    command_line,
    positive_float,
    positive_int,
    run_main,
)
from training.train import dataset_key, fraction, recipe_settings

# A weight id is ``name.tag`` in lower case (as keras_gated.weights requires).
WEIGHT_ID = re.compile(r"^[a-z0-9_]+\.[a-z0-9_]+$")
DEFAULT_VALIDATION_SPLIT = 0.1
# The batch size and epochs suited to the data set's size (``suited_schedule``): the
# recipe's batch is halved, down to MIN_BATCH_SIZE, until an epoch has MIN_STEPS_PER_EPOCH
# steps; the recipe's epochs are raised, up to MAX_EPOCHS, until the run has MIN_STEPS.
MIN_BATCH_SIZE = 16
MIN_STEPS_PER_EPOCH = 16
MIN_STEPS = 200
MAX_EPOCHS = 50


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m training.finetune", description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="registered model name")
    p.add_argument("--weights", required=True, help="a released tag (cifar10), a .weights.h5 file, a save folder, hf://org/repo[@rev], or 'none' (from scratch: the baseline)")
    p.add_argument("--dataset", required=True, help=dataset_help(
        ": its train split trains (less a validation part), its test split is measured"))
    p.add_argument("--freeze-backbone", action="store_true", help="train the new head only")
    p.add_argument("--train-examples", type=positive_int, help="use N training examples, drawn at random with --seed")
    p.add_argument("--recipe", default="finetune", help="a recipe of keras_gated/training/recipes.py")
    p.add_argument("--epochs", type=positive_int, help="default: the recipe's (10 for "
                   "finetune), more for a small data set (at least 200 steps in all, 50 epochs at most)")
    p.add_argument("--batch-size", type=positive_int, help="default: the recipe's (128 for "
                   "finetune), halved down to 16 until an epoch has 16 steps")
    p.add_argument("--learning-rate", type=positive_float, help="override the recipe's learning rate")
    p.add_argument("--backend", choices=("tensorflow", "jax", "torch"))
    p.add_argument("--out", help="output directory (default: runs/<model>-<dataset>-finetune, "
                   "-scratch for --weights none, plus -n<N> for --train-examples N)")
    p.add_argument("--restart", action="store_true",
                   help="move a run already in --out aside to <out>.old-<timestamp> and start afresh")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--validation-split", type=fraction, default=DEFAULT_VALIDATION_SPLIT,
                   metavar="FRACTION", help="training examples held out (at random, --seed) "
                   "for val_* and best.keras (default 0.1); the test split is used once, at the end")
    p.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2))
    add_data_engine_argument(p)
    return p


def reproduce_command(args: argparse.Namespace, backend: str, *, epochs: int | None = None,
                      batch_size: int | None = None, out: str | Path | None = None) -> str:
    """The command that reruns this run: ``args`` with the epochs and batch size it used
    (``epochs``, ``batch_size``: the chosen ones, when not given) and its ``out`` folder."""
    parts = ["--model", args.model, "--weights", args.weights, "--dataset", args.dataset]
    if args.freeze_backbone:
        parts.append("--freeze-backbone")
    chosen = {"epochs": epochs, "batch_size": batch_size}
    for flag in ("train_examples", "recipe", "epochs", "batch_size", "learning_rate", "seed"):
        value = getattr(args, flag)
        value = chosen.get(flag) if value is None else value
        if value is not None and (flag, value) not in (("recipe", "finetune"), ("seed", 0)):
            parts += [f"--{flag.replace('_', '-')}", str(value)]
    if getattr(args, "data_engine", None) is not None:
        parts += ["--data-engine", args.data_engine]
    if args.validation_split != DEFAULT_VALIDATION_SPLIT:
        parts += ["--validation-split", str(args.validation_split)]
    if out is not None:
        parts += ["--out", str(out)]
    return command_line("training.finetune", backend, parts)


def suited_batch_size(num_examples: int, batch_size: int) -> int:
    """A recipe's ``batch_size`` halved (not below ``MIN_BATCH_SIZE``) until an epoch of
    ``num_examples`` training examples has at least ``MIN_STEPS_PER_EPOCH`` steps."""
    if num_examples < 1:
        raise ValueError(f"A run needs at least 1 training example, got {num_examples}.")
    while batch_size > MIN_BATCH_SIZE and math.ceil(num_examples / batch_size) < MIN_STEPS_PER_EPOCH:
        batch_size = max(MIN_BATCH_SIZE, batch_size // 2)
    return batch_size


def suited_epochs(num_examples: int, batch_size: int, epochs: int) -> int:
    """A recipe's ``epochs`` raised (not above ``MAX_EPOCHS``) until the run, in batches
    of ``batch_size``, has at least ``MIN_STEPS`` steps."""
    steps_per_epoch = math.ceil(num_examples / batch_size)
    return max(epochs, min(MAX_EPOCHS, math.ceil(MIN_STEPS / steps_per_epoch)))


def suited_schedule(num_examples: int, batch_size: int, epochs: int) -> tuple[int, int]:
    """``(batch size, epochs)`` suited to ``num_examples`` training examples, from a
    recipe's ``batch_size`` and ``epochs`` (``suited_batch_size``, then
    ``suited_epochs``). A data set large enough keeps the recipe's values."""
    batch_size = suited_batch_size(num_examples, batch_size)
    return batch_size, suited_epochs(num_examples, batch_size, epochs)


def training_examples(total: int, args: argparse.Namespace) -> int:
    """How many of a training split's ``total`` examples train: ``--train-examples`` of
    them (at most all), less the ``--validation-split`` held out (as
    ``keras_gated.training.build.split_validation`` holds it out)."""
    used = min(total, args.train_examples or total)
    return used - int(round(used * args.validation_split))


def choose_schedule(args: argparse.Namespace, num_examples: int, recipe) -> tuple[int, int, str]:
    """``(batch size, epochs, sentence)``: ``--batch-size`` and ``--epochs`` where given,
    else those suited to ``num_examples`` training examples (the epochs for the batch
    size used); the sentence says which were chosen."""
    batch_size = args.batch_size or suited_batch_size(num_examples, recipe.batch_size)
    epochs = args.epochs or suited_epochs(num_examples, batch_size, recipe.epochs)
    values = ((args.batch_size, f"batch {batch_size}"), (args.epochs, f"{epochs} epochs"))
    chosen = " and ".join(text for given, text in values if given is None)
    given = " and ".join(text for value, text in values if value is not None)
    sentence = f"{num_examples} training examples: "
    sentence += f"{chosen} chosen for the data set's size" if chosen else ""
    sentence += ("; " if chosen and given else "") + (f"{given} as given" if given else
                                                      " (--batch-size and --epochs set them)")
    steps = math.ceil(num_examples / batch_size)
    return batch_size, epochs, f"{sentence}; {steps} steps an epoch, {steps * epochs} in all"


def from_scratch(weights: str) -> bool:
    return weights.lower() == "none"


def default_out(args: argparse.Namespace) -> str:
    """``runs/<model>-<data>-finetune[-n<N>]`` (``-scratch`` for the baseline): the
    pretrained run and its baseline never share, and so never resume, each other's folder."""
    kind = "scratch" if from_scratch(args.weights) else "finetune"
    subset = f"-n{args.train_examples}" if args.train_examples else ""
    return f"runs/{args.model}-{Path(args.dataset).name}-{kind}{subset}"


def weight_id_for(model: str, dataset: str) -> str:
    """The zoo folder's weight id, ``<model>.<tag>``: the tag is the data set's name in
    lower case with every run of other characters than letters, digits and ``_`` made one
    ``_`` (``"Tiny Data"`` -> ``tiny_data``). Refused before training if none is left."""
    tag = re.sub(r"[^a-z0-9_]+", "_", Path(dataset).name.lower()).strip("_")
    weight_id = f"{model}.{tag}"
    if not WEIGHT_ID.match(weight_id):
        raise ValueError(f"--dataset {dataset!r} gives no valid weight id ({weight_id!r}: lower-"
                         "case letters, digits and _ only): rename the data set's folder.")
    return weight_id


def weights_key(weights: str) -> str:
    """A weights file or folder by its absolute path, a tag or hf:// id as given."""
    path = Path(weights).expanduser()
    return str(path.resolve()) if path.exists() else weights


def load_backbone(args: argparse.Namespace, classes: int):
    """``build_finetune_model``, with a weights file that cannot be read (truncated,
    corrupt) reported as a wrong ``--weights`` (exit 2) naming it."""
    import zipfile

    try:
        return build_finetune_model(args.model, args.weights, classes, args.freeze_backbone)
    except (OSError, zipfile.BadZipFile, EOFError) as error:
        if not Path(args.weights).expanduser().exists() or (
                isinstance(error, OSError) and error.errno is not None):
            raise  # not about the file's content: an environment fault (exit 1)
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ValueError(f"--weights {args.weights} cannot be read as Keras weights ({reason}): "
                         "the file is corrupt or truncated; save or download it again.") from None


def build_finetune_model(name: str, weights: str, classes: int, freeze_backbone: bool):
    """Pretrained backbone (no head) + a new ``avg_pool`` -> ``predictions`` head.

    ``weights="none"`` gives the same network randomly initialised (the baseline).
    """
    import keras

    from keras_gated.models.factory import create_model  # looked up when called: tests replace it

    backbone = create_model(name, weights=None if from_scratch(weights) else weights,
                            include_top=False, pooling="avg")
    if freeze_backbone:
        backbone.trainable = False
    outputs = keras.layers.Dense(classes, activation="softmax", name="predictions")(backbone.output)
    # One input tensor, not a list of one: the model is then called with an image batch
    # as every keras-gated model is, without Keras's input-structure warning.
    return keras.Model(backbone.input, outputs, name=backbone.name), backbone


def finetune_record(args: argparse.Namespace, command: str, recipe, batch_size: int,
                    built) -> dict:
    """What ``metrics.json`` says of how a fine-tuned net was made, beside its accuracy."""
    from keras_gated.models.fast_path_model import describe  # imports Keras: after run_main set the backend

    model, train_info = built.model, built.train_info
    return {
        "command": command,
        "model": args.model,
        "base_weights": args.weights,
        "epochs": recipe.epochs,
        "batch_size": batch_size,
        "recipe": recipe.describe(),
        "freeze_backbone": args.freeze_backbone,
        "train_examples": train_info.num_examples,
        "validation_split": args.validation_split,
        "val_split": built.val_info.note,
        "val_num_examples": built.val_info.num_examples,
        "fast_path": describe(model),
        # evaluate adapts the data as training did (a crop included) only when told so
        **({"input_adaptation": adaptation_note(train_info.image_shape,
                                                tuple(model.inputs[0].shape[1:]))}
           if built.adapted else {}),
    }


def write_zoo_folder(args: argparse.Namespace, model, zoo: Path, weight_id: str,
                     metrics: dict, recipe, built, test_info, given: list, out: Path) -> Path:
    """The fine-tuned net's zoo folder (weights, card, records), written whole: into a new
    staging folder beside it, then put in its place. It replaces only a folder this run
    wrote (``check_zoo_folder_replaceable``), and the run records what it wrote in
    ``zoo_folder.json`` (both versions while one replaces the other), so that a rerun
    after a kill recognises its own folder. A failure removes the staging folder alone."""
    import contextlib
    import shutil

    from keras_gated.files import new_staging_folder, replace_folder, tree_digest
    from keras_gated.release.zoo_folder import save_zoo_folder  # imports Keras: after run_main set the backend

    own = check_zoo_folder_replaceable(out, weight_id)  # nothing else put there meanwhile
    train_info = built.train_info
    input_shape = tuple(model.inputs[0].shape[1:])
    note = (f"{test_info.note}; trained from scratch (baseline)" if from_scratch(args.weights)
            else f"{test_info.note}; fine-tuned from {args.model} weights {args.weights!r}")
    made_parent = not zoo.parent.exists()
    zoo.parent.mkdir(parents=True, exist_ok=True)
    staging = new_staging_folder(zoo)
    try:
        save_zoo_folder(
            model, staging, weight_id=weight_id, metrics=metrics,
            recipe=recipe.describe(), command=metrics["command"],
            dataset_note=portable_text(
                paths=given, text=f"{note}; validation (val_*, best.keras): {built.val_info.note}"),
            training_log=out / "log.csv", class_names=list(train_info.class_names),
            usage=card_usage(args.model, zoo, input_shape, train_info.num_classes, built.adapted),
            input_adaptation=(adaptation_note(train_info.image_shape, input_shape)
                              if built.adapted else None),
            check_command=check_command(args.model, zoo, args.dataset),
            max_shard_bytes=None,  # one file: its card loads it with keras.saving.load_model
        )
        written = tree_digest(staging)
        record_zoo_folder(out, zoo, [d for d in (own, written) if d is not None])
        replace_folder(staging, zoo)
    except BaseException:  # no half-written zoo folder; the rerun writes it again
        shutil.rmtree(staging, ignore_errors=True)
        if made_parent:
            with contextlib.suppress(OSError):
                zoo.parent.rmdir()
        raise
    record_zoo_folder(out, zoo, [written])
    return zoo


def evaluation_pipelines(args: argparse.Namespace, built, engine: str) -> tuple:
    """``(val, test, test_info)``: the held-out and test batches of a fine-tuning run, the
    test images adapted to the backbone's input as the training images were."""
    from keras_gated.training.pipeline import adapt_source, load_split, make_pipeline  # imports Keras: after run_main set the backend

    recipe, model = built.recipe, built.model
    test_ds, test_info = load_split(args.dataset, "test", engine)
    if built.adapted:
        input_shape = tuple(model.inputs[0].shape[1:])
        print(f"[finetune] adapting {built.train_info.image_shape} images to the backbone's "
              f"{input_shape}")
        test_ds = adapt_source(test_ds, input_shape)
    test = make_pipeline(test_ds, recipe, training=False, batch_size=recipe.batch_size)
    val = make_pipeline(built.val_ds, recipe, training=False, batch_size=recipe.batch_size)
    print(f"[finetune] val_* metrics and best.keras: {built.val_info.note}; the test split "
          "is evaluated once, at the end")
    return val, test, test_info


def run(args: argparse.Namespace) -> int:
    # Keras and the modules that import it: after run_main set the backend.
    import keras

    from keras_gated.models.fast_path_model import describe_text
    from keras_gated.training.loop import evaluate_metrics, fit_resumable, write_metrics
    from keras_gated.training.pipeline import engine_for, load_split

    if from_scratch(args.weights) and args.freeze_backbone:
        raise ValueError("--freeze-backbone with --weights none would train a head on random "
                         "features; drop one of the two.")
    backend = keras.backend.backend()
    weight_id = weight_id_for(args.model, args.dataset)  # before anything is trained
    out = Path(args.out or default_out(args))
    zoo = check_zoo_subfolder(out, weight_id)  # before anything is trained
    engine = getattr(args, "data_engine", None)
    train_split = load_split(args.dataset, "train", engine)
    batch_size, epochs, schedule = choose_schedule(
        args, training_examples(train_split[1].num_examples, args),
        run_recipe(RunSettings(model=args.model, dataset=args.dataset, recipe=args.recipe)))
    run_config = RunSettings(model=args.model, dataset=args.dataset, recipe=args.recipe,
                             epochs=epochs, batch_size=batch_size,
                             lr=args.learning_rate, seed=args.seed,
                             train_examples=args.train_examples, data_engine=engine,
                             validation_split=args.validation_split, validation_seeded=True)
    recipe = run_recipe(run_config)
    settings = {"model": args.model, "weights": weights_key(args.weights),
                "dataset": dataset_key(args.dataset), "recipe": recipe_settings(recipe),
                "epochs": recipe.epochs, "batch_size": batch_size, "seed": args.seed,
                "freeze_backbone": args.freeze_backbone, "train_examples": args.train_examples,
                "validation_split": args.validation_split}
    with open_run_folder(out, restart=args.restart):
        check_run_files(out)
        if finished_run(out, settings, recipe.epochs):
            print(f"{out} is already finished (to train again: {START_AGAIN}).")
            return 0
        check_zoo_folder_replaceable(out, weight_id)  # before anything is trained

        print(f"[finetune] {schedule}")
        built = build_run(run_config, make_model=lambda info: load_backbone(args, info.num_classes)[0],
                          train_split=train_split)
        model, train, train_info = built.model, built.batches, built.train_info
        check_fingerprint(out, {**settings, "model_kwargs": {
            "include_top": False, "pooling": "avg", "head_classes": train_info.num_classes},
            "data_engine": engine_for(run_config.data_engine), "backend": backend},
            "[finetune]")
        val, test, test_info = evaluation_pipelines(args, built, run_config.data_engine)
        trainable = sum(int(math.prod(v.shape)) for v in model.trainable_weights)
        print(f"[finetune] {args.model} ({args.weights}) on {args.dataset}: {train_info.num_classes} "
              f"classes, {trainable:,} trainable parameters"
              f"{' (backbone frozen)' if args.freeze_backbone else ''}; recipe {recipe.describe()}")
        print(f"[finetune] fast path: {describe_text(model)}")

        if not fit_resumable(model, train, val, epochs=recipe.epochs, out=out, verbose=args.verbose,
                             prefix="[finetune]"):
            return 1  # no zoo folder from a run that went NaN
        command = reproduce_command(args, backend, epochs=recipe.epochs, batch_size=batch_size,
                                    out=out)
        metrics = evaluate_metrics(model, test, test_info, out,
                                   finetune_record(args, command, recipe, batch_size, built))
        given = [p for p in (args.dataset, args.weights, out) if Path(p).expanduser().exists()]
        metrics = portable_record(metrics, given)  # no local folder in what is published
        folder = write_zoo_folder(args, model, zoo, weight_id, metrics, recipe, built,
                                  test_info, given, out)
        # Last: metrics.json marks the run finished, so a finished run has its zoo folder.
        write_metrics(out, metrics)
    print(f"[finetune] test accuracy {metrics['test_accuracy']:.4f} ({test_info.num_examples} "
          f"images); zoo folder {folder}")
    return 0


def adaptation_note(image_shape: Sequence[int], input_shape: Sequence[int]) -> str:
    """How ``keras_gated.datasets.adapt_images`` brought the data set's images to the
    backbone's input, in words (the card records it)."""
    (h, w, c), (height, width, channels) = tuple(image_shape), tuple(input_shape)
    steps = []
    if c != channels:
        steps.append("grey tiled to 3 channels" if channels > c else "turned grey (ITU-R 601 luma)")
    if (h, w) != (height, width):
        verb = ("zero-padded" if h <= height and w <= width else
                "cropped" if h >= height and w >= width else "padded or cropped")
        steps.append(f"centre-{verb} from {h}×{w} to {height}×{width}")
    return (f"{h}×{w}×{c} images {' and '.join(steps) or 'unchanged'} "
            f"(`keras_gated.datasets.adapt_images(images, {tuple(input_shape)})`)")


def check_command(arch: str, folder: Path, dataset: str) -> str:
    """The card's command that measures a fine-tuned folder's accuracy again: the folder
    itself (not a registered release of the same tag) on the data it was tuned on, both
    named as ``keras_gated.files.portable_path`` names them."""
    import shlex

    data = portable_path(dataset) if Path(dataset).expanduser().is_dir() else dataset
    return shlex.join(["keras-gated", "evaluate", arch, "--weights", portable_path(folder),
                       "--dataset", data]) + "  # or --weights hf://<org>/<repo> once published"


def card_usage(arch: str, folder: Path, input_shape: Sequence[int], classes: int, adapted: bool) -> str:
    """The card's usage lines for a fine-tuned folder: it is not a registered release,
    so they load the folder itself (or its Hub repo once published), and adapt the
    images as training did."""
    lines = [
        "import keras",
        "import keras_gated as kg  # registers the layers with Keras",
        "",
        f'folder = "{portable_path(folder)}"  # or "hf://<org>/<repo>" once published',
        "model = keras.saving.load_model(folder)",
        f'model = kg.create_model("{arch}", weights=folder, classes={classes})  # the same',
    ]
    if adapted:
        lines += [
            "",
            "from keras_gated.datasets import adapt_images",
            f"images = adapt_images(images, {tuple(int(d) for d in input_shape)})  # as in training",
        ]
    lines.append("probabilities = model.predict(images)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("training.finetune", build_parser(), run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
