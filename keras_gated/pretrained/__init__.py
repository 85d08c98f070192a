"""Pretrained weights: configs, where their files come from, and loading them.

One job per module:

* ``config``: ``PretrainedCfg``, the data of one weight (released or planned);
* ``planned``: what asking for planned weights says (command, recipe, compute);
* ``sources``: where a weight file comes from (Hugging Face cache -> ``zoo/`` or the
  wheel's bundled copy -> Hub, sha256 checked);
* ``resolve``: a ``weights=`` value resolved once into a ``ResolvedWeights`` record
  (architecture arguments, verified file, saved config, class names);
* ``load``: that record loaded into a model (strict, head adaptation, configuration check);
* ``shards``: a release too large for one file, as Keras sharded weights;
* ``zoo_folder``: the folder and model card a release is published as;
* ``hub``: publishing to and pulling from the Hub;
* ``listing``: the markdown tables of the zoo.

The configs themselves are kept by the weights registry, ``keras_gated.registry.weights``
(its functions are importable from here too). Names are loaded on first use (PEP 562),
so that reading configs (``keras-gated list``) starts no backend and the registry and
this package can import each other's modules in any order.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "HUB_ORG": "keras_gated.pretrained.config",
    "WEIGHTS_FILE": "keras_gated.pretrained.config",
    "PlannedWeightsError": "keras_gated.pretrained.config",
    "PretrainedCfg": "keras_gated.pretrained.config",
    "TrainingPlan": "keras_gated.pretrained.config",
    "split_weight_id": "keras_gated.pretrained.config",
    "find_pretrained_cfg": "keras_gated.registry.weights",
    "get_pretrained_cfg": "keras_gated.registry.weights",
    "list_pretrained": "keras_gated.registry.weights",
    "pretrained_cfgs_overlay": "keras_gated.registry.weights",
    "register_cfg_file": "keras_gated.registry.weights",
    "register_pretrained": "keras_gated.registry.weights",
    "tags_for": "keras_gated.registry.weights",
    "unregister_pretrained": "keras_gated.registry.weights",
    "ChecksumError": "keras_gated.pretrained.sources",
    "WeightsNotFoundError": "keras_gated.pretrained.sources",
    "sha256_of": "keras_gated.pretrained.sources",
    "zoo_dir": "keras_gated.pretrained.sources",
    "ResolvedWeights": "keras_gated.pretrained.resolve",
    "resolve_weights": "keras_gated.pretrained.resolve",
    "save_zoo_folder": "keras_gated.pretrained.zoo_folder",  # imports Keras
    "load_folder_model": "keras_gated.pretrained.zoo_folder",  # imports Keras
    "MAX_SHARD_BYTES": "keras_gated.pretrained.shards",
}


# Submodules reachable as attributes (``keras_gated.pretrained.sources``) before any
# import of them, as when this package imported them eagerly.
_SUBMODULES = ("citations", "config", "hub", "listing", "load", "planned", "resolve",
               "shards", "sources", "zoo_folder")


def __getattr__(name: str):
    """The public names and submodules, each imported on first use."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'keras_gated.pretrained' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = sorted(_WHERE)
