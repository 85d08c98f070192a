"""The public names of ``keras_gated`` and the module each one lives in.

``import keras_gated`` imports nothing heavy: an attribute (``keras_gated.GResNet20``)
imports the module that defines it on first use, through the package's module
``__getattr__`` (PEP 562). This table is the one list of what the package exports.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

MODELS = "keras_gated.models"

# Public name -> the module that defines it. Family constructors live in MODELS; a
# family added later is found there too (see ``resolve``).
PUBLIC: dict[str, str] = {
    **dict.fromkeys((
        "GPlainNet", "GResNet", "GResNet20", "GResNet32", "GResNet44", "GResNet56",
        "GResNet110", "GResNet164", "GResNet1001", "GResNet50", "GResNetFC", "GWideResNet",
        "HighwayFC", "HighwayNet", "HighwayNet50", "PlainNet", "PostActResNet",
        "PostActResNet110", "PreActResNet",
        "PreActResNet20", "PreActResNet32", "PreActResNet44", "PreActResNet56",
        "PreActResNet110", "PreActResNet164", "PreActResNet1001", "ResNet50", "ResNetFC",
        "WideResNet",
    ), MODELS),
    "compress": "keras_gated.analysis.compress",
    "gate": "keras_gated.gating",
    "gate_values": "keras_gated.gating",
    "gated_blocks": "keras_gated.gating",
    "remove_block": "keras_gated.gating",
    "set_gate": "keras_gated.gating",
    "decode_predictions": "keras_gated.preprocessing",
    "preprocess_input": "keras_gated.preprocessing",
    "PretrainedCfg": "keras_gated.weights",
    "get_pretrained_cfg": "keras_gated.weights",
    "list_pretrained": "keras_gated.weights",
    "create_model": "keras_gated.registry",
    "get_model_entry": "keras_gated.registry",
    "is_model": "keras_gated.registry",
    "list_models": "keras_gated.registry",
}

# Modules whose public functions answer from the registry (model names, released weights):
# the families register there as ``keras_gated.models`` is imported, so it is imported
# first, and ``keras_gated.list_models()`` lists every family right after ``import
# keras_gated`` (as ``timm.list_models()`` does).
READ_THE_REGISTRY = ("keras_gated.registry", "keras_gated.weights")

# Subpackages reachable as attributes (``keras_gated.layers``), imported on first use.
SUBMODULES = ("layers", "models")


def public_names() -> list[str]:
    """Every public name, sorted: the table, the subpackages, and any family constructor
    ``keras_gated.models`` exports beyond the table (once it is imported)."""
    names = set(PUBLIC) | set(SUBMODULES)
    models = sys.modules.get(MODELS)
    names |= set(getattr(models, "__all__", ()))
    return sorted(names)


def resolve(name: str) -> object:
    """The object ``keras_gated.<name>`` stands for, importing its module.

    Raises:
        AttributeError: ``name`` is not public.
    """
    if name in SUBMODULES:
        return importlib.import_module(f"keras_gated.{name}")
    if name in PUBLIC:
        if PUBLIC[name] in READ_THE_REGISTRY:
            importlib.import_module(MODELS)
        return getattr(importlib.import_module(PUBLIC[name]), name)
    if not name.startswith("_"):  # a family constructor added after this table was written
        models: ModuleType = importlib.import_module(MODELS)
        if name in getattr(models, "__all__", ()):
            return getattr(models, name)
        # Any module of the package, as ``keras_gated.<module>`` was reachable when the
        # package imported its modules eagerly (a deprecated one warns as it imports).
        if importlib.util.find_spec(f"keras_gated.{name}") is not None:
            return importlib.import_module(f"keras_gated.{name}")
    raise AttributeError(f"module 'keras_gated' has no attribute {name!r}")


def import_all() -> None:
    """Import every module of the table: defines every public name and registers every
    layer and model class with Keras's serialization."""
    for module in sorted({*PUBLIC.values(), *(f"keras_gated.{s}" for s in SUBMODULES),
                          "keras_gated.export"}):
        importlib.import_module(module)
