"""The model registry of the built-in families as a data file, readable without Keras.

The families register their models when their modules are imported, and those modules
import Keras (a second or more before anything is listed). ``catalog.json`` beside this
module is a snapshot of what they register: each model's family, description, arguments,
default recipe, and the data files of its released weights. ``keras-gated list`` and
``keras-gated info`` fill the registry from it and never start a deep-learning backend;
everything else imports the families and uses the live registry.

After adding or changing a family, write the snapshot again (a test fails while it is
stale):

    python -m keras_gated.catalog
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from keras_gated.registry import ModelEntry, add_entry, get_model_entry, is_model, list_models
from keras_gated.weights.registered import register_cfg_file

CATALOG_FILE = Path(__file__).with_name("catalog.json")
PACKAGE_DIR = Path(__file__).parent
BUILT_IN = "keras_gated."


class CatalogConstructor:
    """A constructor named by the catalog (``module:function``), imported on first call,
    so that a registry filled from the catalog still builds models. The family's own
    registration, when its module is imported later, replaces the catalogued entry."""

    stands_in_for_a_family = True

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, **kwargs: Any):
        module, _, name = self.path.partition(":")
        return getattr(importlib.import_module(module), name)(**kwargs)

    def __repr__(self) -> str:
        return f"CatalogConstructor({self.path!r})"


def build_catalog() -> dict[str, Any]:
    """The snapshot of the live registry's built-in families (imports them, and Keras)."""
    # Lazy and heavy: the families import Keras and register their models as they are
    # imported; only writing the snapshot imports them, reading it does not.
    importlib.import_module("keras_gated.models")

    models = {}
    cfg_files = set()
    for name in list_models():
        entry = get_model_entry(name)
        module = entry.constructor.__module__
        if not module.startswith(BUILT_IN):
            continue  # a family registered at run time by another package
        models[name] = {
            "constructor": f"{module}:{entry.constructor.__name__}",
            "family": entry.family,
            "description": entry.description,
            "kwargs": entry.kwargs,
            "default_recipe": entry.default_recipe,
            "supports_dropout": entry.supports_dropout,
            "slow": entry.slow,
        }
        data_file = Path(sys.modules[module].__file__).with_suffix(".json")
        if data_file.is_file():
            cfg_files.add(data_file.relative_to(PACKAGE_DIR).as_posix())
    return {"models": models, "cfg_files": sorted(cfg_files)}


def write_catalog(path: str | os.PathLike = CATALOG_FILE) -> Path:
    """Write the snapshot of the live registry to ``path`` (the package's by default)."""
    path = Path(path)
    path.write_text(json.dumps(build_catalog(), indent=1, sort_keys=True) + "\n")
    return path


def read_catalog(path: str | os.PathLike = CATALOG_FILE) -> dict[str, Any]:
    """The snapshot as written by ``write_catalog``; a missing or malformed file is one
    sentence that says how to write it."""
    try:
        catalog = json.loads(Path(path).read_text())
        catalog["models"], catalog["cfg_files"]  # noqa: B018 - both keys must be there
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise RuntimeError(
            f"The model catalog {path} cannot be read ({error}); write it again with "
            "`python -m keras_gated.catalog`."
        ) from None
    return catalog


def fill_registry_from_catalog(path: str | os.PathLike = CATALOG_FILE) -> int:
    """Register every catalogued model (constructors imported on first call) and its
    released-weight configs, without importing Keras. Models already registered are
    kept. Returns how many were added."""
    catalog = read_catalog(path)
    added = 0
    for name, fields in catalog["models"].items():
        if is_model(name):
            continue
        add_entry(ModelEntry(
            name,
            CatalogConstructor(fields["constructor"]),
            dict(fields["kwargs"]),
            fields["family"],
            fields["description"],
            default_recipe=fields["default_recipe"],
            supports_dropout=fields["supports_dropout"],
            slow=fields["slow"],
        ))
        added += 1
    for relative in catalog["cfg_files"]:
        register_cfg_file(PACKAGE_DIR / relative)
    return added


if __name__ == "__main__":
    print(f"wrote {write_catalog()}")
