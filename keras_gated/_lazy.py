"""Packages whose public names are imported on first use (PEP 562 module ``__getattr__``),
so that importing the package starts no backend and reads no large module."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence


def lazy_names(package: str, where: Mapping[str, str], submodules: Sequence[str],
               namespace: dict) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a submodule of ``submodules``, or a name
    of ``where`` (name -> the module that defines it), imported when first asked for and
    then kept in ``namespace`` (the package's globals)."""

    def __getattr__(name: str):
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *where])

    return __getattr__, __dir__
