"""Model registry (timm style): every architecture under one lower-case name.

    >>> import keras_gated
    >>> keras_gated.list_models("gresnet[0-9]*")
    ['gresnet1001', 'gresnet110', 'gresnet164', 'gresnet20', ...]
    >>> model = keras_gated.create_model("gwrn_16_2", classes=100)
    >>> model = keras_gated.create_model("gresnet20.cifar10")   # name.tag = weight id

A name identifies an architecture (``gresnet20``); a *weight id* ``name.tag`` adds the
tag of the data its weights were trained on (``gresnet20.cifar10``).
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import keras

from keras_gated.weight_ids import split_weight_id


@dataclass(frozen=True)
class ModelEntry:
    """A registered architecture: its constructor and the arguments that define it."""

    name: str
    constructor: Callable[..., keras.Model]
    kwargs: dict = field(default_factory=dict)
    family: str = ""
    description: str = ""

    def build(self, **overrides: Any) -> keras.Model:
        return self.constructor(**{**self.kwargs, **overrides})


_REGISTRY: dict[str, ModelEntry] = {}


def register_model(
    name: str,
    constructor: Callable[..., keras.Model],
    *,
    family: str = "",
    description: str = "",
    **kwargs: Any,
) -> ModelEntry:
    """Register ``constructor(**kwargs)`` under ``name`` (lower case, unique)."""
    if name != name.lower() or "." in name:
        raise ValueError(f"Model names are lower case without dots, got {name!r}.")
    if name in _REGISTRY:
        raise ValueError(f"A model named {name!r} is already registered.")
    entry = ModelEntry(name, constructor, dict(kwargs), family, description)
    _REGISTRY[name] = entry
    return entry


def _natural_key(name: str):
    """Sort ``gresnet20`` before ``gresnet110`` (numbers compared as numbers)."""
    import re

    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def list_models(pattern: str | None = None, pretrained: bool = False) -> list[str]:
    """Registered model names matching the fnmatch ``pattern`` (all when None).

    With ``pretrained=True``, the weight ids (``name.tag``) of released weights instead.
    """
    if pretrained:
        from keras_gated.weights import list_pretrained

        names = list_pretrained()
    else:
        names = list(_REGISTRY)
    if pattern is not None:
        names = [n for n in names if fnmatch.fnmatch(n, pattern)]
    return sorted(names, key=_natural_key)


def is_model(name: str) -> bool:
    return name in _REGISTRY


def get_model_entry(name: str) -> ModelEntry:
    """The registry entry for ``name``; a ValueError with close matches if unknown."""
    try:
        return _REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_REGISTRY), n=5, cutoff=0.6)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise ValueError(
            f"Unknown model name {name!r}.{hint} `keras_gated.list_models()` (or "
            "`keras-gated list`) shows every registered name."
        ) from None


def create_model(name: str, **kwargs: Any) -> keras.Model:
    """Build a registered model by name; ``name.tag`` also loads the tag's weights.

    Keyword arguments override the registered ones (``classes=100``,
    ``include_top=False``, ``weights="cifar10"``, ...).
    """
    arch, tag = split_weight_id(name)
    if not isinstance(name, str) or name.endswith(".") or not arch:
        raise ValueError(
            f"Invalid model name {name!r}: give a registered name ('gresnet20') or a "
            "weight id 'name.tag' ('gresnet20.cifar10'), with both parts non-empty."
        )
    entry = get_model_entry(arch)
    if tag is not None:
        if kwargs.get("weights") not in (None, tag):
            raise ValueError(
                f"create_model({name!r}) names weights {tag!r} but `weights`="
                f"{kwargs['weights']!r} was passed too; give only one."
            )
        kwargs["weights"] = tag
    return entry.build(**kwargs)
