"""Old import paths of keras-gated, answered from the modules that replaced them.

One table, ``MOVED``: an old module name -> the modules its names now live in, searched
in order; and ``MOVED_NAMES`` for names that left a package that still stands.
``import keras_gated.gates`` (or ``from keras_gated.hub import publish``) still works: a
finder on ``sys.meta_path`` makes a stand-in module whose attributes are looked up in the
new modules, with one ``DeprecationWarning`` per old module naming the new place
(as timm's table of deprecated model names does for names). No file stands at an old
path. An old package (``keras_gated.pretrained``) stands in as a package, so that its old
submodules import too; it warns when a name is first taken from it, so that importing one
of its submodules warns once, naming that submodule's new place. ``python -m`` of an old
module is not supported: run the new one.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import ModuleType

MOVED: dict[str, tuple[str, ...]] = {
    "keras_gated.class_names": ("keras_gated.datasets",),
    "keras_gated.cli_names": ("keras_gated.cli.arguments",),
    "keras_gated.analysis.compress_training": ("keras_gated.training.phases",),
    "keras_gated.analysis.gate_log": ("keras_gated.training.callbacks",),
    "keras_gated.analysis.prune": ("keras_gated.models.prune",),
    "keras_gated.fast_path": ("keras_gated.models.fast_path_model",),
    "keras_gated.gates": ("keras_gated.gating",),
    "keras_gated.hub": ("keras_gated.weights.hub", "keras_gated.release.hub",
                        "keras_gated.release.zoo_folder"),
    "keras_gated.kerashub": ("keras_gated.keras_hub",),
    "keras_gated.models.family_spec": ("keras_gated.registry.families",),
    "keras_gated.models.application": (
        "keras_gated.models.builder",
        "keras_gated.models.constructor",
        "keras_gated.models.gated_model",
        "keras_gated.weights.load",
        "keras_gated.weights.sources",
    ),
    "keras_gated.pretrained": ("keras_gated.weights", "keras_gated.release"),
    "keras_gated.pretrained.citations": ("keras_gated.release.citations",),
    "keras_gated.pretrained.config": ("keras_gated.weights.config",),
    "keras_gated.pretrained.hub": ("keras_gated.weights.hub", "keras_gated.release.hub"),
    "keras_gated.pretrained.listing": ("keras_gated.release.listing",),
    "keras_gated.pretrained.load": ("keras_gated.weights.load",),
    "keras_gated.pretrained.planned": ("keras_gated.weights.planned",),
    "keras_gated.pretrained.registry": ("keras_gated.weights.registered",),
    "keras_gated.pretrained.resolve": ("keras_gated.weights.resolve",),
    "keras_gated.pretrained.shards": ("keras_gated.weights.shards",),
    "keras_gated.pretrained.sources": ("keras_gated.weights.sources",),
    "keras_gated.pretrained.zoo_folder": ("keras_gated.release.zoo_folder",),
    "keras_gated.recipes": ("keras_gated.training.recipes",),
    "keras_gated.registry.factory": ("keras_gated.models.factory", "keras_gated.registry.names"),
    "keras_gated.registry.weights": ("keras_gated.weights.registered",),
    "keras_gated.transforms": ("keras_gated.training.transforms",),
}

# Names that left a package that still exists: package -> {name: its new module}. The
# package's module ``__getattr__`` answers them through ``moved_name``.
MOVED_NAMES: dict[str, dict[str, str]] = {
    "keras_gated.registry": {"create_model": "keras_gated.models.factory"},
}


def moved_name(package: str, name: str) -> object:
    """``package.name`` of ``MOVED_NAMES``, taken from its new module with one
    DeprecationWarning (then kept on the package, as an old module's stand-in warns once);
    an AttributeError for any other name."""
    new = MOVED_NAMES.get(package, {}).get(name)
    if new is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    warnings.warn(f"{package}.{name} is deprecated: import it from {new}.", DeprecationWarning,
                  stacklevel=3)
    value = getattr(importlib.import_module(new), name)
    setattr(sys.modules[package], name, value)
    return value


def _public(module: ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    return list(names) if names is not None else [n for n in vars(module) if not n.startswith("_")]


class MovedModule(ModuleType):
    """The stand-in at an old path: every attribute comes from the new modules."""

    __moved_to__: tuple[str, ...] = ()
    __warned__: bool = True  # an old package: False until a name is taken from it

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        if f"{self.__name__}.{name}" in MOVED:  # an old submodule: it warns itself
            return importlib.import_module(f"{self.__name__}.{name}")
        if not self.__warned__:
            self.__warned__ = True
            _warn(self.__name__, stacklevel=3)
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
        if any(name.startswith(f"{module.__name__}.") for name in MOVED):
            module.__path__ = []  # an old package: its old submodules are found here too
            module.__warned__ = False
        else:
            _warn(module.__name__, stacklevel=3)


def _warn(old: str, stacklevel: int) -> None:
    """The one DeprecationWarning of an old module, naming its new place."""
    warnings.warn(f"{old} is deprecated: import from {' or '.join(MOVED[old])}.",
                  DeprecationWarning, stacklevel=stacklevel)


def install() -> None:
    """Put the finder on ``sys.meta_path`` once, right after the path finder: no file
    stands at an old path, so it finds nothing there first, and a finder after it (an
    editable install of another checkout, say) does not answer for an old path instead."""
    if any(isinstance(f, MovedFinder) for f in sys.meta_path):
        return
    after = [i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder]
    sys.meta_path.insert(after[0] + 1 if after else len(sys.meta_path), MovedFinder())
