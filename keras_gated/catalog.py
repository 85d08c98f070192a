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

from keras_gated.registry import ModelEntry, add_entry, get_model_entry, is_model, list_models
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


def build_catalog() -> dict[str, Any]:
    """The snapshot of the built-in families' declarations and of the models they
    register (imports the families, and Keras)."""
    # The families import Keras: only writing the snapshot imports them, reading it does not.
    from keras_gated.models import family_spec

    families = [f for f in family_spec.specs() if f.register is not None
                or any(m.constructor.__module__.startswith(BUILT_IN) for m in f.models)]
    cfg_files = sorted(Path(f.released).resolve().relative_to(PACKAGE_DIR.resolve()).as_posix()
                       for f in families if f.released is not None and Path(f.released).is_file())
    registry_families = {name for f in families for name in f.registry_families}
    models = {}
    for name in list_models():
        entry = get_model_entry(name)
        if entry.family not in registry_families:
            continue  # a family registered at run time by another package
        models[name] = {
            "constructor": f"{entry.constructor.__module__}:{entry.constructor.__name__}",
            "family": entry.family,
            "description": entry.description,
            "kwargs": entry.kwargs,
            "default_recipe": entry.default_recipe,
            "supports_dropout": entry.supports_dropout,
            "slow": entry.slow,
        }
    public = sorted(name for f in families for name in f.public_names)
    return {"models": models, "cfg_files": cfg_files, "public": public}


def catalog_text() -> str:
    """``catalog.json`` as ``write_catalog`` writes it."""
    return json.dumps(build_catalog(), indent=1, sort_keys=True) + "\n"


def write_catalog(path: str | os.PathLike = CATALOG_FILE) -> Path:
    """Write the snapshot of the live registry to ``path`` (the package's by default)."""
    path = Path(path)
    path.write_text(catalog_text())
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


if __name__ == "__main__":  # the catalog alone; `python -m keras_gated.models.generate` writes all
    print(f"wrote {write_catalog()}")
