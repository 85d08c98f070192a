"""The model registry of the built-in families as a data file, readable without Keras.

The families declare themselves when their folders are imported, and those import Keras
(a second or more before anything is listed). ``catalog.json`` beside this module is a
snapshot of the declarations: each model's family, description, arguments, default
recipe, the data files of the released weights, and the public constructors
(``keras_gated.__all__`` reads them from here without importing a family).
``keras-gated list`` and ``keras-gated info`` fill the registry from it and never start
a deep-learning backend; everything else imports the families and uses the live
registry.

After adding or changing a family, write the generated files again (a test fails while
one is stale):

    python -m keras_gated.models.generate
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

from keras_gated.registry import ModelEntry, add_entry, is_model
from keras_gated.weights.registered import register_cfg_file

CATALOG_FILE = Path(__file__).with_name("catalog.json")
PACKAGE_DIR = Path(__file__).parent
BUILT_IN = "keras_gated."
GENERATE = "python -m keras_gated.models.generate"


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


def read_catalog(path: str | os.PathLike = CATALOG_FILE) -> dict[str, Any]:
    """The snapshot as ``keras_gated.models.generate.write_catalog`` writes it; a missing or malformed file is one
    sentence that says how to write it."""
    try:
        catalog = json.loads(Path(path).read_text())
        catalog["models"], catalog["cfg_files"]  # noqa: B018 - both keys must be there
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise RuntimeError(
            f"The model catalog {path} cannot be read ({error}); write it again with "
            f"`{GENERATE}`."
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
