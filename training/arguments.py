"""Command-line plumbing shared by ``training.train`` and ``training.finetune``.

Nothing here imports Keras: the backend (``--backend``) and device flags must be set in
the environment before Keras, TensorFlow or JAX are imported.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
from collections.abc import Callable, Sequence

from keras_gated.cli.arguments import positive_int  # the same argparse type as the command line's


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (e.g. a learning rate)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def command_line(module: str, backend: str, args: list[str]) -> str:
    """The exact shell command that reruns ``python -m module args`` on ``backend``."""
    return f"KERAS_BACKEND={backend} " + shlex.join(["python", "-m", module, *args])


def prepare_environment(args: argparse.Namespace) -> None:
    """Set what must be set before Keras/TensorFlow/JAX are imported."""
    if getattr(args, "backend", None):
        os.environ["KERAS_BACKEND"] = args.backend
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if getattr(args, "strategy", None) == "dataparallel" and getattr(args, "cpu_replicas", None):
        flag = f"--xla_force_host_platform_device_count={args.cpu_replicas}"
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flag}".strip()


def run_main(prog: str, parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int],
             argv: Sequence[str] | None) -> int:
    """Parse, prepare the environment, run; failures end in one sentence and an exit code
    (2: bad input, 1: the environment failed; ``keras_gated.errors``)."""
    if not any(action.dest == "debug" for action in parser._actions):
        parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    args = parser.parse_args(argv)  # a bad argument ends here (exit 2), before any import
    prepare_environment(args)
    from keras_gated.errors import run_command  # imports keras: after prepare_environment

    return run_command(prog, lambda: run(args), debug=args.debug)


DATA_ENGINES = ("numpy", "tf")


def add_data_engine_argument(parser: argparse.ArgumentParser) -> None:
    """``--data-engine numpy|tf``: the engine that runs the input pipeline
    (``keras_gated.training.pipeline``). Default: numpy, or tf for a tf.distribute strategy."""
    parser.add_argument("--data-engine", choices=DATA_ENGINES, default=None,
                        help="input pipeline engine: numpy (keras.utils.PyDataset, no "
                             "TensorFlow needed; the default) or tf (tf.data; the default "
                             "with --strategy mirrored/multiworker/tpu)")


def add_time_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """``--time-limit MINUTES`` and ``--shard-mb N`` (``keras_gated.training.loop.fit_resumable``)."""
    parser.add_argument("--time-limit", type=positive_float, metavar="MINUTES",
                        help="stop after the step that would run past MINUTES, write a backup "
                             "and exit 0; the same command goes on from that step (numpy "
                             "engine)")
    parser.add_argument("--shard-mb", type=positive_int, metavar="N",
                        help="write backups as Keras sharded weights, files of at most N MB")
