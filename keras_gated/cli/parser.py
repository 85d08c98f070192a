"""The ``keras-gated`` argument parser: its commands, their options and the function that
runs each.

A command's function is named by its module (``keras_gated.cli.<module>``) and imported
when the command runs: building the parser imports none of them, so that ``keras-gated
list`` and ``info`` answer from ``catalog.json`` without importing Keras (which starts a
backend), and no command loads the modules of another (publishing, the analyses,
TensorFlow's export).
"""

from __future__ import annotations

import argparse
import importlib

from keras_gated.cli.arguments import (
    add_class_map,
    budget_fraction,
    count,
    dataset_help,
    distill_weight,
    finite,
    model_name,
    new_folder,
    positive_int,
)
from keras_gated.model_args import model_arg


class Command:
    """The function ``keras_gated.cli.<module>.<function>`` that runs a command, called with
    the parsed arguments; its module is imported on the call (see the module's docstring)."""

    def __init__(self, module: str, function: str) -> None:
        self.module = f"keras_gated.cli.{module}"
        self.function = function

    def __call__(self, args: argparse.Namespace) -> int:
        return getattr(importlib.import_module(self.module), self.function)(args)

    def __repr__(self) -> str:
        return f"Command({self.module}.{self.function})"


def build_parser() -> argparse.ArgumentParser:
    """The parser of every ``keras-gated`` command; ``args.func(args)`` runs the parsed one."""
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
    p.set_defaults(func=Command("zoo", "list_command"))
    p = sub.add_parser("info", help="show a model or weight id")
    p.add_argument("name", help="model name or weight id (gresnet20, gresnet20.cifar10)")
    p.add_argument("--params", action="store_true", help="build it and count parameters")
    p.add_argument("--gates", action="store_true",
                   help="load a gated net's released weights and print each block's gate "
                        "(k of a Residual Gate, the mean transform-gate bias of a highway block)")
    p.set_defaults(func=Command("zoo", "info_command"))
    p = sub.add_parser("demo", help="classify bundled CIFAR-10 images with gresnet20.cifar10")
    p.add_argument("--weights", default="cifar10", help="tag, file or hf:// reference")
    p.set_defaults(func=Command("evaluate", "demo_command"))


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
    add_class_map(p)
    p.set_defaults(func=Command("evaluate", "evaluate_command"))


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
    p.set_defaults(func=Command("publish", "publish_command"))
    p = sub.add_parser("pull", help="download released weights into the HF cache")
    p.add_argument("name", help="weight id (gresnet20.cifar10) or hf://org/name[@revision]")
    p.set_defaults(func=Command("pull", "pull_command"))


def _add_convert_and_analyze_commands(sub) -> None:
    """``convert`` (a PyTorch state dict) and ``analyze`` (gates, removal, pruning)."""
    p = sub.add_parser("convert", help="build a model from a reference PyTorch state dict")
    p.add_argument("arch", type=model_name, help="registry name (resnet50, gresnet50, wrn_16_2, preactresnet110, ...)")
    p.add_argument("source_file", help=".pth, .pt or .safetensors state dict")
    p.add_argument("--from", dest="source", required=True, choices=("torchvision", "wrn", "fbresnet"),
                   help="the source's parameter names: torchvision/timm resnet50, the WRN "
                        "authors' code, or a Torch7 pre-act CIFAR ResNet (fb.resnet.torch)")
    p.add_argument("--out", required=True, help="new folder for the Keras save (weights=OUT loads it)")
    p.set_defaults(func=Command("convert", "convert_command"))

    p = sub.add_parser("analyze", help="gate values, block removal, pruning and stage analyses, as PNGs + JSON")
    p.add_argument("weight_id", type=model_name, help="weight id (gresnet20.cifar10) or model name with --weights")
    p.add_argument("--weights", default=None, help="tag, file, folder or hf:// (default: the weight id's tag)")
    p.add_argument("--dataset", required=True, help=dataset_help(": its test split is analyzed"))
    p.add_argument("--out", required=True,
                   help="new or empty folder for the plots and analysis.json")
    p.add_argument("--overwrite", action="store_true",
                   help="write into an existing --out, replacing only the analysis's own files "
                        "(analysis.json and its PNGs; a link among them is refused)")
    p.add_argument("--examples", type=positive_int, default=2000,
                   help="test images used (default 2000)")
    p.add_argument("--twin", type=model_name, default=None, help="ungated twin to compare (e.g. preactresnet20)")
    p.add_argument("--twin-weights", default=None, help="the twin's weights (default: the same tag)")
    p.add_argument("--no-prune", action="store_true", help="skip the pruning speed/accuracy curve")
    add_class_map(p)
    p.set_defaults(func=Command("analyze", "analyze_command"))


def _add_compress_command(sub) -> None:
    """``compress``: a smaller net at a budget."""
    p = sub.add_parser("compress", help="a smaller net at a MACs or block budget, by gate-guided "
                       "block removal and fine-tuning")
    p.add_argument("weight_id", type=model_name, help="weight id (gresnet20.cifar10) or model name with --weights")
    p.add_argument("--weights", default=None, help="tag, file, folder or hf:// (default: the weight id's tag)")
    p.add_argument("--dataset", required=True,
                   help=dataset_help(": its train split trains, its test split is measured"))
    budget = p.add_mutually_exclusive_group(required=True)
    budget.add_argument("--macs", type=budget_fraction, help="at most this fraction of the source's counted MACs")
    budget.add_argument("--blocks", type=count(1), help="remove this many blocks")
    p.add_argument("--epochs", type=count(0), required=True, help="fine-tuning epochs of the smaller net")
    p.add_argument("--pressure-epochs", type=count(0), default=None,
                   help="epochs under the gate pressure (default: --epochs)")
    p.add_argument("--strength", type=finite(positive=False), default=None, help="the pressure λ (default 0.01)")
    p.add_argument("--baseline", choices=("lowest", "random", "scratch"), default=None,
                   help="a baseline instead of the method: lowest g(k) without pressure, random "
                        "blocks (--seed), or the smaller net trained from scratch")
    p.add_argument("--remove-like", default=None, metavar="DIR",
                   help="remove the blocks an earlier compress run removed (its DIR): the "
                        "scratch baseline then trains exactly that architecture")
    p.add_argument("--examples", type=count(1), default=None,
                   help="training examples used, drawn at random with --seed (default: all)")
    p.add_argument("--batch-size", type=count(1), default=None)
    p.add_argument("--learning-rate", type=finite(positive=True), default=None, help="SGD learning rate (default 0.01)")
    p.add_argument("--finetune-learning-rate", type=finite(positive=True), default=None,
                   help="the rate the fine-tuning starts at, decayed to 0 along a half cosine "
                        "(default: the learning rate)")
    p.add_argument("--distill", type=distill_weight, default=None, metavar="ALPHA",
                   help="fine-tune on the source's outputs too (knowledge distillation): ALPHA "
                        "in (0, 1] weighs their term, 1 - ALPHA the labels' (e.g. 0.9)")
    p.add_argument("--temperature", type=finite(positive=True), default=None,
                   help="the distillation's temperature (default 4; needs --distill)")
    p.add_argument("--augment", action="store_true", help="random flips and padded crops while training")
    add_class_map(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--verbose", type=int, default=None, choices=(0, 1, 2),
                   help="Keras's training output on stderr: 0 none, 1 a progress bar, 2 a line "
                        "an epoch (default: 1 where progress bars are shown, else 0)")
    p.add_argument("--out", type=new_folder, required=True,
                   help="new folder for the Keras save, card, compression.json and tradeoff.png")
    p.add_argument("--backup-dir", default=None, metavar="DIR",
                   help="back up after every epoch into DIR (new or empty); the same command "
                        "resumes there after a stop (the backup's files are removed when the "
                        "run has ended)")
    p.set_defaults(func=Command("compress", "compress_command"))


def _add_export_command(sub) -> None:
    """``export``: ONNX, TFLite or a SavedModel."""
    p = sub.add_parser("export", help="export for serving: ONNX, TFLite or TF SavedModel")
    p.add_argument("name", type=model_name,
                   help="model name (gresnet20) or weight id (gresnet20.cifar10)")
    p.add_argument("--weights", default=None, help="tag, file, folder or hf:// (default: random, or the id's)")
    p.add_argument("--format", required=True, choices=("onnx", "tflite", "savedmodel"))
    p.add_argument("--out", default=None, help="output path (default: NAME.onnx, NAME.tflite, NAME_savedmodel)")
    p.set_defaults(func=Command("export", "export_command"))
