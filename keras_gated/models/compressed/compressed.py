"""Compressed nets: released gated nets made smaller by ``keras_gated.compress``, each
registered under a name of its own, as timm ships ``efficientnet_b1_pruned``.

A compressed architecture (``architectures.jsonl``, one line each) is a registered
source architecture without some of its blocks. Where a Residual Gate computes
u = g(k)·f_r(x) + x, a removed block is its identity shortcut, u = x: ``gresnet20_c50``
computes exactly what ``gresnet20`` computes with the gates of its removed blocks at
g(k) = 0, and is built as ``keras_gated.models.prune(GResNet20(...), removed)`` is
(same layer names, same weights layout), named ``gresnet20_c50`` so that its weights
resolve under ``gresnet20_c50.<tag>``:

    >>> model = keras_gated.create_model("gresnet20_c50.cifar10")
    >>> backbone = keras_gated.create_model("gresnet20_c50", weights="cifar10", include_top=False)

Each architecture's constructor takes the arguments of its source's constructor but
those that define the source (``depth``); the source's own code builds it, inside
``keras_gated.models.builder.compressed_build``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import keras

from keras_gated.models.builder import (
    arguments_of,
    compressed_build,
    defaults_of,
    public_constructor,
)
from keras_gated.models.compressed.architectures import CompressedArch, read_architectures
from keras_gated.registry import ModelEntry, get_model_entry, is_model, register_model
from keras_gated.registry.models import unregister_model

FAMILY = "compressed"
# Registry name -> the registered architecture, and its constructor (``keras_gated.catalog``
# names the constructors ``<this module>:<name>``).
ARCHITECTURES: dict[str, CompressedArch] = {}
CONSTRUCTORS: dict[str, Callable[..., keras.Model]] = {}


def compressed_constructor(arch: CompressedArch) -> Callable[..., keras.Model]:
    """The public constructor of ``arch``: its source's constructor, with the arguments
    that define the source fixed, building inside ``compressed_build``."""
    source = get_model_entry(arch.source)
    fixed = tuple(source.kwargs)

    def build(**kwargs: Any) -> keras.Model:
        with compressed_build(arch.name, arch.source, arch.removed_blocks):
            return source.build(**kwargs)

    build.__name__ = build.__qualname__ = arch.name
    build.__module__ = __name__
    build.__doc__ = (
        f"{arch.description}.\n\n"
        f"    ``{arch.source}`` without {', '.join(arch.removed_blocks)}, each pruned to its "
        "identity shortcut:\n    it computes what the source computes with the Residual Gates "
        "of those blocks at g(k) = 0.\n\n"
        f"    Family arguments: those of ``{source.constructor.__name__}`` but "
        f"{', '.join(fixed) or 'none'} (fixed by the source).\n"
    )
    return public_constructor(*arguments_of(source.constructor, *fixed),
                              defaults=defaults_of(source.constructor))(build)


def register_compressed(arch: CompressedArch) -> ModelEntry:
    """Register ``arch`` (its source registered already), described, recipe'd and marked
    slow as its source."""
    source = get_model_entry(arch.source)
    if source.family == FAMILY:
        raise ValueError(f"{arch.name} would compress {arch.source}, itself a compressed net: "
                         f"name its source, {ARCHITECTURES[arch.source].source}, and every block "
                         "removed from it.")
    constructor = compressed_constructor(arch)
    entry = register_model(arch.name, constructor, family=FAMILY, description=arch.description,
                           default_recipe=source.default_recipe, slow=source.slow)
    ARCHITECTURES[arch.name] = arch
    CONSTRUCTORS[arch.name] = constructor
    return entry


def unregister_compressed(name: str) -> ModelEntry:
    """Remove a compressed architecture from the registry."""
    ARCHITECTURES.pop(name, None)
    CONSTRUCTORS.pop(name, None)
    return unregister_model(name)


@contextlib.contextmanager
def registered(arch: CompressedArch) -> Iterator[ModelEntry]:
    """``arch`` registered for the duration of the block (as it is, if it already is); a
    registered architecture of that name without other blocks is refused."""
    if is_model(arch.name):
        known = ARCHITECTURES.get(arch.name)
        if known is None or set(known.removed_blocks) != set(arch.removed_blocks):
            removed = ", ".join(known.removed_blocks) if known else "none of its blocks"
            raise ValueError(
                f"{arch.name} is registered already as {known.source if known else 'a model'} "
                f"without {removed}, not without {', '.join(arch.removed_blocks)}: a released "
                "name keeps its architecture, so remove its line from architectures.jsonl and "
                "its weights first if this net replaces it.")
        yield get_model_entry(arch.name)
        return
    entry = register_compressed(arch)
    try:
        yield entry
    finally:
        unregister_compressed(arch.name)


def __getattr__(name: str) -> Callable[..., keras.Model]:
    """The constructor of a registered compressed architecture, by its name."""
    try:
        return CONSTRUCTORS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def register_released() -> list[ModelEntry]:
    """Register every architecture of ``architectures.jsonl`` (the family's declaration
    calls this once its sources are registered)."""
    return [register_compressed(arch) for arch in read_architectures()]
