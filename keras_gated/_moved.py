"""Old import paths of keras-gated, answered from the modules that replaced them.

One table, ``MOVED``: an old module name -> the modules its names now live in, searched
in order. ``import keras_gated.gates`` (or ``from keras_gated.hub import publish``) still
works: a finder on ``sys.meta_path`` makes a stand-in module whose attributes are looked
up in the new modules, with one ``DeprecationWarning`` per old module naming the new place
(as timm's table of deprecated model names does for names). No file stands at an old
path. ``python -m`` of an old module is not supported: run the new one.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import ModuleType

MOVED: dict[str, tuple[str, ...]] = {
    "keras_gated.gates": ("keras_gated.gating",),
    "keras_gated.hub": ("keras_gated.pretrained.hub", "keras_gated.pretrained.zoo_folder"),
    "keras_gated.kerashub": ("keras_gated.keras_hub",),
    "keras_gated.pretrained.registry": ("keras_gated.registry.weights",),
    "keras_gated.models.application": (
        "keras_gated.models.builder",
        "keras_gated.models.constructor",
        "keras_gated.models.gated_model",
        "keras_gated.pretrained.load",
        "keras_gated.pretrained.sources",
    ),
}


def _public(module: ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    return list(names) if names is not None else [n for n in vars(module) if not n.startswith("_")]


class MovedModule(ModuleType):
    """The stand-in at an old path: every attribute comes from the new modules."""

    __moved_to__: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        for target in self.__moved_to__:
            module = importlib.import_module(target)
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r} (it moved to "
                             f"{', '.join(self.__moved_to__)})")

    def __dir__(self) -> list[str]:
        return sorted({n for t in self.__moved_to__ for n in _public(importlib.import_module(t))})


class MovedFinder:
    """Finds the old module names of ``MOVED`` and loads their stand-ins (the import
    protocols' finder and loader, without ``importlib.abc``'s base classes)."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec) -> ModuleType:
        return MovedModule(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        targets = MOVED[module.__name__]
        module.__moved_to__ = targets
        module.__all__ = sorted({n for t in targets for n in _public(importlib.import_module(t))})
        warnings.warn(f"{module.__name__} is deprecated: import from {' or '.join(targets)}.",
                      DeprecationWarning, stacklevel=2)


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (after the path finders: no file stands at
    an old path, so they find nothing there first)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
