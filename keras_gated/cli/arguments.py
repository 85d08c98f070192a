"""The argument types and shared options of the ``keras-gated`` command line, checked
before any import of Keras or TensorFlow: a bad value is a usage error (exit 2) at once.

Model names are checked against ``keras_gated.catalog``'s data file, which lists every
built-in model without importing the families (and so Keras): a typo is refused with its
close matches. ``training``'s command lines share ``dataset_help`` and ``positive_int``.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import math

from keras_gated.catalog import read_catalog
from keras_gated.files import check_new_folder
from keras_gated.registry import split_weight_id
from keras_gated.registry.models import is_model  # no Keras: the registry's own table

__all__ = ["add_class_map", "budget_fraction", "catalog_names", "class_pair", "count",
           "dataset_help", "finite", "model_name", "new_folder", "positive_int",
           "source_weights"]


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


def budget_fraction(text: str) -> float:
    """argparse type of ``--macs``: a fraction strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"give a fraction of the source's MACs between 0 and 1 "
                                         f"(0.5: half), not {text}")
    return value


def distill_weight(text: str) -> float:
    """argparse type of ``--distill``: α, the teacher's share of the loss, in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"give the teacher's share of the loss, above 0 and at "
                                         f"most 1 (0.9: mostly the teacher), not {text}")
    return value


def count(minimum: int):
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


def class_pair(text: str) -> tuple[str, str]:
    """argparse type of ``--class-map``: ``FOLDER=CLASS``."""
    folder, sep, name = text.partition("=")
    if not sep or not folder or not name:
        raise argparse.ArgumentTypeError(f"give FOLDER=CLASS (tshirt=T-shirt/top), not {text!r}")
    return folder, name


def add_class_map(parser: argparse.ArgumentParser) -> None:
    """``--class-map FOLDER=CLASS`` (repeatable) of the commands that score weights on data."""
    parser.add_argument("--class-map", action="append", type=class_pair, default=[],
                        metavar="FOLDER=CLASS",
                        help="an image folder's class folder FOLDER holds the weights' class "
                             "CLASS (repeatable), for class names that cannot be folder names "
                             "(tshirt=T-shirt/top)")


def finite(*, positive: bool):
    """argparse type: a finite number > 0 (``positive``) or >= 0."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise argparse.ArgumentTypeError(
                f"give a finite number {'> 0' if positive else '>= 0'}, not {text}")
        return value

    return parse


def new_folder(text: str) -> str:
    """argparse type of ``compress --out``: a folder that does not exist yet or is empty,
    outside the zoo (it is written whole; nothing already there is replaced); refused with
    ``check_new_folder``'s reason."""
    try:
        check_new_folder(text)
    except ValueError as error:  # argparse names the option itself
        reason = str(error).removeprefix("--out ").rstrip(".")
        raise argparse.ArgumentTypeError(reason) from None
    return text


@functools.lru_cache(maxsize=1)
def catalog_names() -> frozenset[str]:
    """The registered model names the catalog lists (empty when it cannot be read: the
    registry then decides, after Keras is imported)."""
    try:
        return frozenset(read_catalog()["models"])
    except RuntimeError:
        return frozenset()


def model_name(text: str) -> str:
    """argparse type: a registered model name, or a weight id ``name.tag`` of one."""
    names = catalog_names()
    arch = text.split(".", 1)[0]
    if not names or arch in names or is_model(arch):  # registered in this process too
        return text
    close = difflib.get_close_matches(arch, sorted(names), n=5, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}" if close else ""
    raise argparse.ArgumentTypeError(
        f"unknown model name {arch!r}{hint} (`keras-gated list` shows every name)"
    )


def source_weights(args: argparse.Namespace) -> tuple[str, str]:
    """``(architecture, weights)`` of a command's ``weight_id`` argument and ``--weights``:
    a weight id (``gresnet20.cifar10``) brings its tag, ``--weights`` overrides it."""
    arch, tag = split_weight_id(args.weight_id) if "." in args.weight_id else (args.weight_id, None)
    weights = args.weights or tag
    if weights is None:
        raise ValueError(f"{args.weight_id!r} names no weights: give a weight id (gresnet20.cifar10) "
                         "or --weights.")
    return arch, weights
