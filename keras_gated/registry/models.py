"""The model registry: every architecture under one lower-case name (timm style).

A family registers its models with ``register_family`` (one entry per configuration);
``keras_gated.registry.factory`` lists and builds them by name. The weights registry
(``keras_gated.weights.registered``) is told each family's data file of released
configs and the family of every registered name.
"""

from __future__ import annotations

import difflib
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keras_gated.weights.registered import (
    register_architecture,
    register_cfg_file,
    unregister_architecture,
)

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
    default_recipe: str | None = None  # a recipe of keras_gated.recipes (training's default)
    supports_dropout: bool = False  # the constructor takes `dropout` (a recipe's rate goes there)
    slow: bool = False  # too heavy to build in the default test run (ImageNet size, very deep)

    def build(self, **overrides: Any) -> keras.Model:
        return self.constructor(**{**self.kwargs, **overrides})


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

    A family registers its models with ``register_family``, which derives each name from
    the function its builder names models with; ``register_model`` adds a single one.
    """
    entry = _add_entry(name, constructor, family, description, default_recipe, slow, kwargs)
    _register_family_cfgs(constructor)
    return entry


def _add_entry(name, constructor, family, description, default_recipe, slow, kwargs) -> ModelEntry:
    return add_entry(ModelEntry(
        name,
        constructor,
        dict(kwargs),
        family,
        description,
        default_recipe=default_recipe,
        supports_dropout=_takes_dropout(constructor),
        slow=bool(slow),
    ))


def add_entry(entry: ModelEntry) -> ModelEntry:
    """Register a complete entry (``register_model`` and ``register_family`` build theirs
    from a constructor; ``keras_gated.catalog`` reads them from its data file)."""
    if entry.name != entry.name.lower() or "." in entry.name:
        raise ValueError(f"Model names are lower case without dots, got {entry.name!r}.")
    existing = _REGISTRY.get(entry.name)
    if existing is not None and not getattr(existing.constructor, "stands_in_for_a_family", False):
        raise ValueError(f"A model named {entry.name!r} is already registered.")
    _REGISTRY[entry.name] = entry
    register_architecture(entry.name, entry.family)
    return entry


def register_family(
    family: str,
    constructor: Callable[..., keras.Model],
    *,
    arch_name: Callable[..., str],
    configs: Iterable[dict[str, Any]] = ({},),
    description: str | Callable[..., str] = "",
    default_recipe: str | None = None,
    slow: bool | Callable[..., bool] = False,
) -> list[ModelEntry]:
    """Register one model of ``family`` per config: ``constructor(**config)``.

    Args:
        family: the family's name (``"gresnet"``), shown by ``keras-gated info``.
        constructor: the public constructor the configs are passed to.
        arch_name: ``arch_name(**config)`` is the registered name. The family's builder
            names its models with the same function (``build_application(arch=...)``),
            so a built model, its registry entry and its weight ids (``name.tag``)
            always agree.
        configs: the constructor arguments of each registered model.
        description: one line per model; a string is formatted with the config
            (``"Gated ResNet-{depth}"``), a function is called with it.
        default_recipe: the recipe ``python -m training.train`` uses without
            ``--recipe`` (a name of ``keras_gated.recipes.RECIPES``).
        slow: True (or a function of the config returning True) for models too heavy
            to build in the default test run; the tests over ``list_models()`` mark them
            slow.

    The released-weight configs of the family, if any, are the data file beside the
    constructor's module (``preact_resnet.py`` -> ``preact_resnet.json``).
    """
    entries = []
    for config in configs:
        config = dict(config)
        text = description(**config) if callable(description) else description.format(**config)
        is_slow = slow(**config) if callable(slow) else slow
        entries.append(
            _add_entry(arch_name(**config), constructor, family, text, default_recipe,
                       is_slow, config)
        )
    _register_family_cfgs(constructor)
    return entries


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


def _register_family_cfgs(constructor: Callable[..., keras.Model]) -> None:
    """Register the released-weight configs kept beside the constructor's module
    (``preact_resnet.py`` -> ``preact_resnet.json``), if it has any."""
    module_file = getattr(sys.modules.get(constructor.__module__), "__file__", None)
    if module_file is None:
        return
    data_file = Path(module_file).with_suffix(".json")
    if data_file.is_file():
        register_cfg_file(data_file)


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
