"""The ``keras-gated`` command line: ``list``, ``info``, ``demo``, ``evaluate``, ``analyze``,
``compress``, ``convert``, ``export``, ``publish`` and ``pull``.

Each command imports what it runs when it runs: ``keras-gated list`` and ``info`` answer
from ``catalog.json`` without importing Keras (which starts a backend), and no command
loads the modules of another (publishing, the analyses, TensorFlow's export).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from keras_gated.cli_names import model_name
from keras_gated.model_args import model_arg


def dataset_help(use: str = "") -> str:
    """The ``--dataset`` help of every command that takes one; ``use`` says how the
    command uses the data set's splits."""
    return (
        "data tag (cifar10, fashion_mnist), tfds name, or image folder laid out "
        "ROOT/train/<class>/<image> and ROOT/test/<class>/<image> (a folder per class, the "
        f"same in both splits){use}. The tags' local copies are looked for in "
        "$KERAS_GATED_DATA, then shared/data and ../shared/data from the working directory "
        "(docs/training.md)"
    )


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1 (checked before Keras is imported)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _cmd_list(args: argparse.Namespace) -> int:
    # imported when the command runs (see the module's docstring)
    from keras_gated.registry import get_model_entry, list_models
    from keras_gated.release.listing import accuracy_text, planned_table, released_table
    from keras_gated.weights import get_pretrained_cfg, list_pretrained

    if args.planned:
        for weight_id in list_pretrained(args.pattern, planned=True):
            print(f"{weight_id:<28} planned: {get_pretrained_cfg(weight_id).plan.expect}")
        return 0
    if args.markdown:
        print(released_table(get_pretrained_cfg(w) for w in list_pretrained(args.pattern)))
        print()
        print(planned_table(get_pretrained_cfg(w) for w in list_pretrained(planned=True)))
        return 0
    names = list_models(args.pattern, pretrained=args.pretrained)
    for name in names:
        if args.pretrained:
            cfg = get_pretrained_cfg(name)
            print(f"{name:<28} {accuracy_text(cfg.metrics):>8} on {cfg.dataset} "
                  f"({cfg.metrics.get('split', 'test')} split)")
            if cfg.caveat:
                print(f"{'':<28} caveat: {cfg.caveat}")
        else:
            print(f"{name:<22} {get_model_entry(name).description}")
    if not names:
        print("(no match)", file=sys.stderr)
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    # imported when the command runs (see the module's docstring)
    from keras_gated.weights import get_pretrained_cfg, list_pretrained, split_weight_id, tags_for
    from keras_gated.weights.planned import training_command
    from keras_gated.registry import create_model, get_model_entry

    arch, tag = split_weight_id(args.name)
    entry = get_model_entry(arch)
    if tag:
        get_pretrained_cfg(args.name)  # neither released nor planned: say so, print nothing
    print(f"name:        {entry.name}")
    print(f"family:      {entry.family}")
    print(f"description: {entry.description}")
    print(f"arguments:   {entry.kwargs}")
    print(f"recipe:      {entry.default_recipe or 'none (pass --recipe)'} "
          "(python -m training.train's default)")
    if args.params:
        import numpy as np

        model = create_model(arch)
        trainable = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
        print(f"trainable parameters: {trainable:,}")
    released = tags_for(arch)
    tags = [t for t in released if tag in (None, t)]
    print(f"released weights: {', '.join(f'{arch}.{t}' for t in tags) or 'none yet'}")
    for weight_id in list_pretrained(f"{arch}.{tag or '*'}", planned=True):
        planned = get_pretrained_cfg(weight_id)
        print(f"planned weights: {weight_id} (needs a GPU/TPU host): "
              f"{training_command(planned)}; expect {planned.plan.expect}")
    for t in tags:
        cfg = get_pretrained_cfg(f"{arch}.{t}")
        print(f"  {cfg.weight_id}:")
        for key, value in vars(cfg).items():
            if key != "weight_id":
                print(f"    {key + ':':<15}{value}")
    return 0


def _official_entry(cfg):
    """The registered config of ``cfg``'s weight id and its data file, for
    ``publish --pin-official``; refused (before anything is uploaded) unless the folder
    is that release (same sha256 for every weight file) and the repo is its registered Hub repo."""
    # imported when the command runs (see the module's docstring)
    from keras_gated.weights.registered import cfg_source_file, find_pretrained_cfg

    registered = find_pretrained_cfg(cfg.arch, cfg.tag)
    source = cfg_source_file(cfg.weight_id)
    if registered is None or source is None:
        raise ValueError(f"{cfg.weight_id} has no registered config to pin: register it first "
                         "(python -m training.release RUN --register).")
    if registered.files != cfg.files:  # a shard index's own hash does not pin the weights
        raise ValueError(f"The weights in the folder are not the registered {cfg.weight_id} "
                         "(sha256 differs): register this folder first, then publish with "
                         "--pin-official.")
    if registered.hf_hub_id != cfg.hf_hub_id:
        raise ValueError(f"--pin-official pins {cfg.weight_id}'s registered repo "
                         f"{registered.hf_hub_id}, not {cfg.hf_hub_id}: drop --repo-id or "
                         "drop --pin-official.")
    return registered, source


def _cmd_publish(args: argparse.Namespace) -> int:
    import json

    # imported when the command runs (see the module's docstring)
    from keras_gated.release.hub import keras_hub_handle, publish
    from keras_gated.release.zoo_folder import KERAS_HUB_PRESET, pretrained_cfg_from_folder
    from keras_gated.weights.registered import write_cfg

    cfg = pretrained_cfg_from_folder(args.folder, hf_hub_id=args.repo_id)  # checks it first
    official = _official_entry(cfg) if args.pin_official else None
    commit = publish(args.folder, cfg.hf_hub_id, commit_message=args.message,
                     delete_other_files=args.delete_other_files)
    cfg = dataclasses.replace(cfg, revision=commit)
    print(f"published {args.folder} to {cfg.hf_hub_id}")
    print(f"commit: {commit}")
    if (Path(args.folder) / KERAS_HUB_PRESET).is_dir():
        print(f"keras-hub preset: keras_hub.models.ImageClassifier.from_preset("
              f"{keras_hub_handle(cfg.hf_hub_id)!r}) after `import keras_gated.keras_hub`")
    if official is not None:
        registered, source = official
        write_cfg(dataclasses.replace(registered, revision=commit), source)
        print(f"pinned revision {commit} of the official {cfg.weight_id} in {source}")
    else:
        compressed = (cfg.arch in _compressed_names()
                      or (cfg.model_kwargs or {}).get("removed_blocks"))
        release = ("training.release_compressed FOLDER --name NAME" if compressed
                   else "training.release RUN")
        print("registered configs are unchanged; a config for this repo (register it with "
              f"python -m {release} --register, or pass --pin-official when "
              "publishing the official release):")
        print(json.dumps({cfg.weight_id: cfg.to_dict()}, indent=2))
    return 0


def _compressed_names() -> set[str]:
    """The registered compressed architectures' names (released by release_compressed)."""
    # imported when the command runs (see the module's docstring)
    from keras_gated.models.compressed.architectures import read_architectures

    return {arch.name for arch in read_architectures()}


def _cmd_pull(args: argparse.Namespace) -> int:
    # imported when the command runs (see the module's docstring)
    from keras_gated.weights.hub import HubDownloadError, pull

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


def _cmd_demo(args: argparse.Namespace) -> int:
    # imported when the command runs (see the module's docstring)
    from keras_gated.evaluation import run_demo

    run_demo(weights=args.weights)
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    # imported when the command runs (see the module's docstring)
    from keras_gated.evaluation import evaluate
    from keras_gated.model_args import parse_model_args

    result = evaluate(args.name, args.weights, args.dataset, batch_size=args.batch_size,
                      model_args=parse_model_args(args.model_args), data_engine=args.data_engine,
                      resize=args.resize, class_map=dict(args.class_map))
    print(f"{result['model']} (weights {result['weights']}) on {result['dataset']}, "
          f"{result['split']} split, {result['num_examples']} images")
    print(f"test accuracy: {result['test_accuracy']:.4f}")
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    # imported when the command runs (see the module's docstring)
    from keras_gated.convert import convert

    model = convert(args.arch, args.source_file, args.source, out=args.out)
    print(f"converted {args.source_file} ({args.source} layout) into {model.name}: "
          f"{model.count_params():,} parameters")
    print(f"wrote {args.out}; load it with weights={str(args.out)!r}")
    return 0


def _model_with_weights(name: str, weights: str | None):
    """``create_model(name, weights=weights)``; a weight id (``gresnet20.cifar10``) as ``name``
    brings its own tag."""
    # imported when the command runs (see the module's docstring)
    from keras_gated.registry import create_model

    return create_model(name, weights=weights) if weights else create_model(name)


def _cmd_analyze(args: argparse.Namespace) -> int:
    # imported when the command runs (see the module's docstring)
    from keras_gated import datasets
    from keras_gated.analysis.report import analyze, subset
    from keras_gated.evaluation import data_classes
    from keras_gated.files import check_outside_zoo
    from keras_gated.registry import create_model, split_weight_id

    check_outside_zoo(args.out)  # before anything is loaded
    arch, tag = split_weight_id(args.weight_id) if "." in args.weight_id else (args.weight_id, None)
    weights = args.weights or tag
    if weights is None:
        raise ValueError(f"{args.weight_id!r} names no weights: give a weight id (gresnet20.cifar10) "
                         "or --weights.")
    model = create_model(arch, weights=weights)
    twin = create_model(args.twin, weights=args.twin_weights or weights) if args.twin else None
    x, y, info = datasets.load_numpy(args.dataset, "test")
    relabel = data_classes(model, info, weights, args.dataset, arch, dict(args.class_map))
    y = relabel[y]
    if info.num_classes != model.num_classes:
        raise ValueError(f"{args.dataset} has {info.num_classes} classes but {arch} (weights "
                         f"{weights}) has {model.num_classes}: analyze it on the data set it "
                         "was trained on.")
    x, y = subset(x, y, args.examples)
    result = analyze(model, x, y, args.out, twin=twin, with_prune=not args.no_prune)
    print(f"{arch} (weights {weights}) on {len(x)} {args.dataset} test images: accuracy "
          f"{result['accuracy']:.4f}; wrote {args.out}/analysis.json and "
          f"{', '.join(sorted(p.name for p in Path(args.out).glob('*.png')))}")
    return 0


def _budget_fraction(text: str) -> float:
    """argparse type of ``--macs``: a fraction strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"give a fraction of the source's MACs between 0 and 1 "
                                         f"(0.5: half), not {text}")
    return value


def _count(minimum: int):
    """argparse type: an integer >= ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"give an integer >= {minimum}, not {value}")
        return value

    return parse


def _class_pair(text: str) -> tuple[str, str]:
    """argparse type of ``--class-map``: ``FOLDER=CLASS``."""
    folder, sep, name = text.partition("=")
    if not sep or not folder or not name:
        raise argparse.ArgumentTypeError(f"give FOLDER=CLASS (tshirt=T-shirt/top), not {text!r}")
    return folder, name


def _add_class_map(parser: argparse.ArgumentParser) -> None:
    """``--class-map FOLDER=CLASS`` (repeatable) of the commands that score weights on data."""
    parser.add_argument("--class-map", action="append", type=_class_pair, default=[],
                        metavar="FOLDER=CLASS",
                        help="an image folder's class folder FOLDER holds the weights' class "
                             "CLASS (repeatable), for class names that cannot be folder names "
                             "(tshirt=T-shirt/top)")


def _finite(*, positive: bool):
    """argparse type: a finite number > 0 (``positive``) or >= 0."""

    def parse(text: str) -> float:
        import math

        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise argparse.ArgumentTypeError(
                f"give a finite number {'> 0' if positive else '>= 0'}, not {text}")
        return value

    return parse


def _new_folder(text: str) -> str:
    """argparse type of ``compress --out``: a folder that does not exist yet or is empty
    (it is written whole; nothing already there is replaced)."""
    # imported when the command runs (see the module's docstring)
    from keras_gated.files import check_new_folder

    try:
        check_new_folder(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text} exists and is not an empty folder: give a "
                                         "new one") from None
    return text


def compress_command(args: argparse.Namespace, backend: str) -> str:
    """The command line that reproduces a ``compress`` run (on ``backend``)."""
    import shlex

    parts = ["keras-gated", "compress", args.weight_id, "--dataset", args.dataset]
    parts += ["--macs", str(args.macs)] if args.macs is not None else ["--blocks", str(args.blocks)]
    parts += ["--epochs", str(args.epochs)]
    for flag in ("weights", "pressure_epochs", "strength", "baseline", "remove_like", "examples",
                 "batch_size", "learning_rate", "seed", "backup_dir"):
        value = getattr(args, flag)
        if value is not None and (flag, value) not in (("seed", 0),):
            parts += [f"--{flag.replace('_', '-')}", str(value)]
    if args.augment:
        parts.append("--augment")
    for folder, name in getattr(args, "class_map", []):
        parts += ["--class-map", f"{folder}={name}"]
    parts += ["--out", args.out]
    return f"KERAS_BACKEND={backend} {shlex.join(parts)}"


def _cmd_compress(args: argparse.Namespace) -> int:
    import keras

    # imported when the command runs (see the module's docstring)
    from keras_gated import datasets
    from keras_gated.analysis.compress import compress, compressible_blocks, not_compressible
    from keras_gated.analysis.compress_report import write_compressed
    from keras_gated.analysis.compress_training import check_backup_folder, remove_backup
    from keras_gated.analysis.report import load_examples
    from keras_gated.evaluation import data_classes, weights_classes
    from keras_gated.files import new_output_folder
    from keras_gated.progress import keras_verbose, on_stderr
    from keras_gated.registry import create_model, split_weight_id

    if args.backup_dir:  # before anything is loaded or trained
        check_backup_folder(Path(args.backup_dir))
    with new_output_folder(args.out) as staging:  # a second run into --out is refused
        arch, tag = split_weight_id(args.weight_id) if "." in args.weight_id else (args.weight_id, None)
        weights = args.weights or tag
        if weights is None:
            raise ValueError(f"{args.weight_id!r} names no weights: give a weight id "
                             "(gresnet20.cifar10) or --weights.")
        classes = weights_classes(arch, weights)
        model = create_model(arch, weights=weights, **({"classes": classes} if classes else {}))
        if not compressible_blocks(model):
            raise ValueError(not_compressible(model))
        x_test, y_test, info = datasets.load_numpy(args.dataset, "test")
        relabel = data_classes(model, info, weights, args.dataset, arch, dict(args.class_map))
        y_test = relabel[y_test]
        if info.num_classes != model.num_classes:
            raise ValueError(f"{args.dataset} has {info.num_classes} classes but {arch} (weights "
                             f"{weights}) has {model.num_classes}: compress a net trained on it.")
        x, y = load_examples(args.dataset, args.examples or sys.maxsize, "train", seed=args.seed)
        y = relabel[y]
        options = {k: v for k, v in (("pressure_epochs", args.pressure_epochs),
                                     ("strength", args.strength), ("batch_size", args.batch_size),
                                     ("learning_rate", args.learning_rate)) if v is not None}
        remove = None
        if args.remove_like:
            import json

            record = Path(args.remove_like) / "compression.json"
            if not record.is_file():
                raise ValueError(f"--remove-like {args.remove_like} has no compression.json: "
                                 "give a folder written by keras-gated compress.")
            remove = json.loads(record.read_text())["record"]["removed"]
        verbose = keras_verbose() if args.verbose is None else args.verbose
        with on_stderr():  # Keras's bars and lines, beside the command's own messages
            result = compress(model, (x, y), macs=args.macs, blocks=args.blocks, epochs=args.epochs,
                              baseline=args.baseline, remove=remove, augment=args.augment,
                              seed=args.seed, verbose=verbose, backup_dir=args.backup_dir,
                              delete_backup=False, **options)
        numbers = write_compressed(
            result, model, staging, final=args.out, arch=arch, dataset=args.dataset,
            test=(x_test.astype("float32"), y_test),
            command=compress_command(args, keras.backend.backend()),
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


def _cmd_export(args: argparse.Namespace) -> int:
    # imported when the command runs (see the module's docstring)
    from keras_gated.export import default_file_name, export
    from keras_gated.progress import Bar

    with Bar(2, f"exporting {args.name} as {args.format}", unit="stage") as bar:
        model = _model_with_weights(args.name, args.weights)
        bar.advance()
        out = Path(args.out) if args.out else Path(default_file_name(model.name, args.format))
        export(model, out, args.format)
    weights = args.weights or (args.name.split(".", 1)[1] if "." in args.name else "random")
    print(f"exported {model.name} (weights {weights}) as {args.format}: {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="keras-gated",
        description="Gated deep networks for Keras 3: list and inspect the model zoo, "
        "publish and pull its weights.",
    )
    parser.add_argument("--debug", action="store_true",
                        help="show tracebacks on errors and TensorFlow's start-up log lines "
                             "(also KERAS_GATED_DEBUG=1)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bars on stderr for the long commands (default: where "
                             "stderr is a terminal)")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_zoo_commands(sub)
    _add_evaluate_command(sub)
    _add_hub_commands(sub)
    _add_convert_and_analyze_commands(sub)
    _add_compress_command(sub)
    _add_export_command(sub)
    return parser


def _add_zoo_commands(sub) -> None:
    """``list``, ``info`` and ``demo``: what the zoo holds."""
    p = sub.add_parser("list", help="list registered models (or released weights)")
    p.add_argument("pattern", nargs="?", default=None, help="fnmatch pattern, e.g. 'gresnet*'")
    p.add_argument("--pretrained", action="store_true", help="list released weight ids")
    p.add_argument("--planned", action="store_true",
                   help="list planned checkpoints (need a GPU host to train)")
    p.add_argument("--markdown", action="store_true",
                   help="print the released and planned tables as markdown (as in docs/zoo.md)")
    p.set_defaults(func=_cmd_list)
    p = sub.add_parser("info", help="show a model or weight id")
    p.add_argument("name", help="model name or weight id (gresnet20, gresnet20.cifar10)")
    p.add_argument("--params", action="store_true", help="build it and count parameters")
    p.set_defaults(func=_cmd_info)
    p = sub.add_parser("demo", help="classify bundled CIFAR-10 images with gresnet20.cifar10")
    p.add_argument("--weights", default="cifar10", help="tag, file or hf:// reference")
    p.set_defaults(func=_cmd_demo)


def _add_evaluate_command(sub) -> None:
    """``evaluate``: a test accuracy."""
    p = sub.add_parser("evaluate", help="test accuracy of weights on a data set's test split")
    p.add_argument("name", type=model_name, help="model name (gresnet20)")
    p.add_argument("--weights", required=True, help="tag (cifar10), weights file, folder or hf://")
    p.add_argument("--dataset", required=True, help=dataset_help(": its test split is measured"))
    p.add_argument("--batch-size", type=positive_int, default=256)
    p.add_argument("--model-arg", dest="model_args", action="append", type=model_arg, default=[],
                   metavar="NAME=VALUE",
                   help="a constructor argument the weights were trained with (repeatable), "
                        "as given to training.train: batch_norm=False, units=71")
    p.add_argument("--data-engine", choices=("numpy", "tf"), default="numpy",
                   help="input pipeline: numpy (no TensorFlow needed) or tf (tf.data)")
    p.add_argument("--resize", action="store_true",
                   help="scale images of another size to the model's input (bilinear, "
                        "antialiased); without it, images larger than the input are refused")
    _add_class_map(p)
    p.set_defaults(func=_cmd_evaluate)


def _add_hub_commands(sub) -> None:
    """``publish`` and ``pull``: weights to and from the Hub."""
    p = sub.add_parser("publish", help="upload a zoo/<weight id> folder to the Hub")
    p.add_argument("folder", help="a folder written by keras_gated.release.save_zoo_folder")
    p.add_argument("--repo-id", default=None, help="ORG/NAME (default: keras-gated/<weight id>)")
    p.add_argument("--message", default=None, help="commit message")
    p.add_argument("--pin-official", action="store_true",
                   help="the release step: pin the published commit in the registered "
                        "config of the weight id (its own repo only)")
    p.add_argument("--delete-other-files", action="store_true",
                   help="publish over a repo that holds files of its own (notebooks, data), "
                        "deleting them (without it, such a repo is refused)")
    p.set_defaults(func=_cmd_publish)
    p = sub.add_parser("pull", help="download released weights into the HF cache")
    p.add_argument("name", help="weight id (gresnet20.cifar10) or hf://org/name[@revision]")
    p.set_defaults(func=_cmd_pull)


def _add_convert_and_analyze_commands(sub) -> None:
    """``convert`` (a PyTorch state dict) and ``analyze`` (gates, removal, pruning)."""
    p = sub.add_parser("convert", help="build a model from a reference PyTorch state dict")
    p.add_argument("arch", type=model_name, help="registry name (resnet50, gresnet50, wrn_16_2, preactresnet110, ...)")
    p.add_argument("source_file", help=".pth, .pt or .safetensors state dict")
    p.add_argument("--from", dest="source", required=True, choices=("torchvision", "wrn", "fbresnet"),
                   help="the source's parameter names: torchvision/timm resnet50, the WRN "
                        "authors' code, or a Torch7 pre-act CIFAR ResNet (fb.resnet.torch)")
    p.add_argument("--out", required=True, help="new folder for the Keras save (weights=OUT loads it)")
    p.set_defaults(func=_cmd_convert)

    p = sub.add_parser("analyze", help="gate values, block removal, pruning and stage analyses, as PNGs + JSON")
    p.add_argument("weight_id", type=model_name, help="weight id (gresnet20.cifar10) or model name with --weights")
    p.add_argument("--weights", default=None, help="tag, file, folder or hf:// (default: the weight id's tag)")
    p.add_argument("--dataset", required=True, help=dataset_help(": its test split is analyzed"))
    p.add_argument("--out", required=True, help="folder for the plots and analysis.json")
    p.add_argument("--examples", type=positive_int, default=2000,
                   help="test images used (default 2000)")
    p.add_argument("--twin", type=model_name, default=None, help="ungated twin to compare (e.g. preactresnet20)")
    p.add_argument("--twin-weights", default=None, help="the twin's weights (default: the same tag)")
    p.add_argument("--no-prune", action="store_true", help="skip the pruning speed/accuracy curve")
    _add_class_map(p)
    p.set_defaults(func=_cmd_analyze)


def _add_compress_command(sub) -> None:
    """``compress``: a smaller net at a budget."""
    p = sub.add_parser("compress", help="a smaller net at a MACs or block budget, by gate-guided "
                       "block removal and fine-tuning")
    p.add_argument("weight_id", type=model_name, help="weight id (gresnet20.cifar10) or model name with --weights")
    p.add_argument("--weights", default=None, help="tag, file, folder or hf:// (default: the weight id's tag)")
    p.add_argument("--dataset", required=True,
                   help=dataset_help(": its train split trains, its test split is measured"))
    budget = p.add_mutually_exclusive_group(required=True)
    budget.add_argument("--macs", type=_budget_fraction, help="at most this fraction of the source's counted MACs")
    budget.add_argument("--blocks", type=_count(1), help="remove this many blocks")
    p.add_argument("--epochs", type=_count(0), required=True, help="fine-tuning epochs of the smaller net")
    p.add_argument("--pressure-epochs", type=_count(0), default=None,
                   help="epochs under the gate pressure (default: --epochs)")
    p.add_argument("--strength", type=_finite(positive=False), default=None, help="the pressure λ (default 0.01)")
    p.add_argument("--baseline", choices=("lowest", "random", "scratch"), default=None,
                   help="a baseline instead of the method: lowest g(k) without pressure, random "
                        "blocks (--seed), or the smaller net trained from scratch")
    p.add_argument("--remove-like", default=None, metavar="DIR",
                   help="remove the blocks an earlier compress run removed (its DIR): the "
                        "scratch baseline then trains exactly that architecture")
    p.add_argument("--examples", type=_count(1), default=None,
                   help="training examples used, drawn at random with --seed (default: all)")
    p.add_argument("--batch-size", type=_count(1), default=None)
    p.add_argument("--learning-rate", type=_finite(positive=True), default=None, help="SGD learning rate (default 0.01)")
    p.add_argument("--augment", action="store_true", help="random flips and padded crops while training")
    _add_class_map(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--verbose", type=int, default=None, choices=(0, 1, 2),
                   help="Keras's training output on stderr: 0 none, 1 a progress bar, 2 a line "
                        "an epoch (default: 1 where progress bars are shown, else 0)")
    p.add_argument("--out", type=_new_folder, required=True,
                   help="new folder for the Keras save, card, compression.json and tradeoff.png")
    p.add_argument("--backup-dir", default=None, metavar="DIR",
                   help="back up after every epoch into DIR (new or empty); the same command "
                        "resumes there after a stop (the backup's files are removed when the "
                        "run has ended)")
    p.set_defaults(func=_cmd_compress)


def _add_export_command(sub) -> None:
    """``export``: ONNX, TFLite or a SavedModel."""
    p = sub.add_parser("export", help="export for serving: ONNX, TFLite or TF SavedModel")
    p.add_argument("name", type=model_name,
                   help="model name (gresnet20) or weight id (gresnet20.cifar10)")
    p.add_argument("--weights", default=None, help="tag, file, folder or hf:// (default: random, or the id's)")
    p.add_argument("--format", required=True, choices=("onnx", "tflite", "savedmodel"))
    p.add_argument("--out", default=None, help="output path (default: NAME.onnx, NAME.tflite, NAME_savedmodel)")
    p.set_defaults(func=_cmd_export)


@contextlib.contextmanager
def native_stderr_silenced() -> Iterator[None]:
    """Send file descriptor 2 to /dev/null for the block: the C++ start-up lines of
    TensorFlow and XLA (CUDA probing, CPU features) are written there, below Python."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def needs_no_backend(args: argparse.Namespace) -> bool:
    """True for the subcommands that only read the registry (nothing is built or run)."""
    return args.command == "list" or (args.command == "info" and not args.params)


# The subcommands that build models: Keras imports TensorFlow (where installed) for them
# on every backend, so the CLI imports it first, quietly.
BUILD_MODELS = ("demo", "evaluate", "analyze", "compress", "convert", "export", "info")


def start_keras(args: argparse.Namespace) -> None:
    """Import Keras quietly before a subcommand runs. Registry-only subcommands import no
    backend: they read the registry from ``keras_gated.catalog``'s data file.

    TensorFlow's C++ start-up lines (CUDA probing, CPU features, oneDNN) are written when it
    is imported, some before its log level is read: without ``--debug`` its level is set
    to errors only (``TF_CPP_MIN_LOG_LEVEL=3``, unless set) and the imports run with the
    native stderr silenced; with ``--debug`` they are shown."""
    # imported when the command runs (see the module's docstring)
    from keras_gated.errors import debug_enabled

    debug = debug_enabled(getattr(args, "debug", False))
    if not debug:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if "keras" in sys.modules:
        return
    if needs_no_backend(args):
        # imported when the command runs (see the module's docstring)
        from keras_gated.catalog import fill_registry_from_catalog

        fill_registry_from_catalog()
        # Should anything import Keras after all, the light numpy backend suffices.
        from keras_gated.backends import is_installed

        if is_installed("jax"):
            os.environ.setdefault("KERAS_BACKEND", "numpy")
        return
    # imported when the command runs (see the module's docstring)
    from keras_gated.backends import announce_choice, require_backend

    require_backend()
    announce_choice()  # now: Keras's import below writes nothing to stderr
    # imported when the command runs (see the module's docstring)
    from keras_gated.backends import is_installed

    with contextlib.nullcontext() if debug else native_stderr_silenced():
        import keras  # noqa: F401
        if args.command in BUILD_MODELS and is_installed("tensorflow"):
            import tensorflow  # noqa: F401  (Keras's serialisation imports it on every backend)
    import keras_gated.models  # noqa: F401  (the families register their models)


def main(argv: Sequence[str] | None = None) -> int:
    # imported when the command runs (see the module's docstring)
    from keras_gated.errors import run_command

    args = build_parser().parse_args(argv)

    def command() -> int:
        # imported when the command runs (see the module's docstring)
        from keras_gated.progress import set_enabled

        set_enabled(args.progress)
        start_keras(args)
        return args.func(args)

    return run_command("keras-gated", command, debug=args.debug)


if __name__ == "__main__":
    raise SystemExit(main())
