"""``keras-gated``'s entry point: parse the command line, start Keras quietly where the
command builds models, run the command, and turn its errors into exit codes
(``keras_gated.errors``)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Sequence

from keras_gated.backends import announce_choice, is_installed, require_backend
from keras_gated.catalog import fill_registry_from_catalog
from keras_gated.cli.parser import build_parser
from keras_gated.errors import debug_enabled, run_command
from keras_gated.progress import set_enabled


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
    debug = debug_enabled(getattr(args, "debug", False))
    if not debug:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if "keras" in sys.modules:
        return
    if needs_no_backend(args):
        fill_registry_from_catalog()
        # Should anything import Keras after all, the light numpy backend suffices.
        if is_installed("jax"):
            os.environ.setdefault("KERAS_BACKEND", "numpy")
        return
    require_backend()
    announce_choice()  # now: Keras's import below writes nothing to stderr
    with contextlib.nullcontext() if debug else native_stderr_silenced():
        importlib.import_module("keras")
        if args.command in BUILD_MODELS and is_installed("tensorflow"):
            # Keras's serialisation imports it on every backend: imported here, quietly.
            importlib.import_module("tensorflow")
    # Lazy and heavy: the families import Keras and register their models as they are
    # imported; the registry-only commands above never import them.
    importlib.import_module("keras_gated.models")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``keras-gated`` with ``argv`` (default: ``sys.argv[1:]``); the exit code:
    0 done, 2 a usage error, 1 a fault of the environment or a bug, 130 interrupted
    (``keras_gated.errors``)."""
    args = build_parser().parse_args(argv)

    def command() -> int:
        set_enabled(args.progress)
        start_keras(args)
        return args.func(args)

    return run_command("keras-gated", command, debug=args.debug)
