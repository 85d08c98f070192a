"""``--model-arg NAME=VALUE``: constructor arguments given on a command line.

Used by ``keras-gated evaluate`` and ``python -m training.train`` alike, so that a model
trained with ``--model-arg batch_norm=False`` is evaluated with the same flag.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterable

#: Set from the data set by the commands, never by ``--model-arg``.
DATA_MODEL_ARGS = ("classes", "input_shape")


def literal_or_string(text: str):
    """A Python literal (``0.5``, ``-2``, ``True``, ``(1, 2)``, ``None``), else the text."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def parse_model_arg(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` -> ``(NAME, value)``; ``ValueError`` in one sentence otherwise."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise ValueError(f"--model-arg {text!r} is not NAME=VALUE (e.g. k_init=0.5).")
    if name in DATA_MODEL_ARGS:
        raise ValueError(f"--model-arg {name} is set from the data set, not by --model-arg.")
    return name, literal_or_string(value)


def model_arg(text: str) -> tuple[str, object]:
    """argparse type of ``--model-arg`` (a bad one ends the parse with exit code 2)."""
    try:
        return parse_model_arg(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_model_args(texts: Iterable[str | tuple[str, object]] | None) -> dict:
    """Repeated ``--model-arg`` (texts, or pairs already parsed) as a dict; a name given
    twice with different values is refused (``ValueError``)."""
    found: dict = {}
    for text in texts or []:
        name, value = parse_model_arg(text) if isinstance(text, str) else text
        if name in found and found[name] != value:
            raise ValueError(f"--model-arg {name} is given twice ({found[name]!r} and {value!r}).")
        found[name] = value
    return found


def format_model_arg(name: str, value) -> str:
    """``NAME=VALUE`` that ``model_arg`` parses back into the same value."""
    text = value if isinstance(value, str) and literal_or_string(value) == value else repr(value)
    return f"{name}={text}"
