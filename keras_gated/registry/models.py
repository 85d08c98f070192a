"""The model registry: every architecture under one lower-case name (timm style).

A family's declaration (``keras_gated.registry.families.declare``) registers its models
here (one entry per configuration); ``keras_gated.registry.names`` lists them and
``keras_gated.models.factory`` builds them by name. The weights registry (``keras_gated.weights.registered``) is told the
family of every registered name.
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from keras_gated.weights.registered import register_architecture, unregister_architecture

if TYPE_CHECKING:  # Keras is imported by the families, not by the registry itself
    import keras


@dataclass(frozen=True)
class ModelEntry:
    """A registered architecture: its constructor, the arguments that define it, and what
    training needs to know about it."""

    name: str
    constructor: Callable[..., keras.Model]
    kwargs: dict = field(default_factory=dict)
    family: str = ""
    description: str = ""
    default_recipe: str | None = None  # a recipe of keras_gated.training.recipes (training's default)
    supports_dropout: bool = False  # the constructor takes `dropout` (a recipe's rate goes there)
    slow: bool = False  # too heavy to build in the default test run (ImageNet size, very deep)
    # A regular expression for what the model name gains when the constructor is called
    # with other arguments than ``kwargs`` (another width: ``_w100``); "" where it gains none.
    variant_suffix: str = ""

    def build(self, **overrides: Any) -> keras.Model:
        return self.constructor(**{**self.kwargs, **overrides})

    def names_a_variant(self, model_name: str) -> bool:
        """Whether ``model_name`` is this entry's name, or the name its constructor gives
        a model built with other arguments (``resnetfc10_w100`` of ``resnetfc10``)."""
        return re.fullmatch(re.escape(self.name) + f"(?:{self.variant_suffix})",
                            model_name) is not None

    @classmethod
    def of(
        cls,
        name: str,
        constructor: Callable[..., keras.Model],
        kwargs: dict[str, Any],
        *,
        family: str = "",
        description: str = "",
        default_recipe: str | None = None,
        slow: bool = False,
        variant_suffix: str = "",
    ) -> ModelEntry:
        """The entry of ``constructor(**kwargs)``, ``supports_dropout`` read off the
        constructor."""
        return cls(name, constructor, dict(kwargs), family, description,
                   default_recipe=default_recipe, supports_dropout=_takes_dropout(constructor),
                   slow=bool(slow), variant_suffix=variant_suffix)


_REGISTRY: dict[str, ModelEntry] = {}


def register_model(
    name: str,
    constructor: Callable[..., keras.Model],
    *,
    family: str = "",
    description: str = "",
    default_recipe: str | None = None,
    slow: bool = False,
    **kwargs: Any,
) -> ModelEntry:
    """Register ``constructor(**kwargs)`` under ``name`` (lower case, unique).

    A family declares its models once (``keras_gated.registry.families.Family``), which
    registers them; ``register_model`` adds a single one (a compressed net released
    later, a test's throw-away model).
    """
    return add_entry(ModelEntry.of(name, constructor, kwargs, family=family,
                                   description=description, default_recipe=default_recipe,
                                   slow=slow))


def add_entry(entry: ModelEntry) -> ModelEntry:
    """Register a complete entry (``register_model`` and the family declarations build
    theirs from a constructor; ``keras_gated.catalog`` reads them from its data file)."""
    if entry.name != entry.name.lower() or "." in entry.name:
        raise ValueError(f"Model names are lower case without dots, got {entry.name!r}.")
    existing = _REGISTRY.get(entry.name)
    if existing is not None and not getattr(existing.constructor, "stands_in_for_a_family", False):
        raise ValueError(f"A model named {entry.name!r} is already registered.")
    _REGISTRY[entry.name] = entry
    register_architecture(entry.name, entry.family)
    return entry


def register_entries(entries: Iterable[ModelEntry]) -> list[ModelEntry]:
    """Register every entry of ``entries`` (a family's declared models), in order."""
    return [add_entry(entry) for entry in entries]


def unregister_model(name: str) -> ModelEntry:
    """Remove ``name`` from the registry (tests that register throw-away models)."""
    entry = _REGISTRY.pop(name)
    unregister_architecture(name)
    return entry


def unregister_family(family: str) -> list[ModelEntry]:
    """Remove every model of ``family`` from the registry."""
    return [unregister_model(name) for name in [n for n, e in _REGISTRY.items() if e.family == family]]


def _takes_dropout(constructor: Callable[..., keras.Model]) -> bool:
    """Whether ``constructor`` accepts ``dropout`` (a public constructor lists its
    arguments in ``valid_arguments``)."""
    valid = getattr(constructor, "valid_arguments", None)
    if valid is None:
        valid = inspect.signature(constructor).parameters
    return "dropout" in valid


def is_model(name: str) -> bool:
    """Whether ``name`` is a registered model name."""
    return name in _REGISTRY


def model_names() -> list[str]:
    """Every registered name, in registration order."""
    return list(_REGISTRY)


def list_model_entries() -> list[ModelEntry]:
    """Every registered entry, in registration order."""
    return list(_REGISTRY.values())


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
