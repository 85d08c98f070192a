"""Model names on the command line, checked against the catalog before any import of
Keras or TensorFlow: a typo is a usage error (exit 2) with close matches, at once.

``keras_gated.catalog``'s data file lists every built-in model without importing the
families (and so Keras); ``model_name`` is an argparse ``type`` for arguments naming one.
"""

from __future__ import annotations

import argparse
import difflib
import functools


@functools.lru_cache(maxsize=1)
def catalog_names() -> frozenset[str]:
    """The registered model names the catalog lists (empty when it cannot be read: the
    registry then decides, after Keras is imported)."""
    from keras_gated.catalog import read_catalog

    try:
        return frozenset(read_catalog()["models"])
    except RuntimeError:
        return frozenset()


def model_name(text: str) -> str:
    """argparse type: a registered model name, or a weight id ``name.tag`` of one."""
    from keras_gated.registry.models import is_model  # no Keras: the registry's own table

    names = catalog_names()
    arch = text.split(".", 1)[0]
    if not names or arch in names or is_model(arch):  # registered in this process too
        return text
    close = difflib.get_close_matches(arch, sorted(names), n=5, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}" if close else ""
    raise argparse.ArgumentTypeError(
        f"unknown model name {arch!r}{hint} (`keras-gated list` shows every name)"
    )
