"""Pretrained weights at run time: their configs, resolving a ``weights=`` value to
verified files, and loading those files into a model.

One job per module:

* ``config``: ``PretrainedCfg``, the data of one weight (released or planned);
* ``registered``: every known config, read from the families' data files;
* ``planned``: what asking for planned weights says (command, recipe, compute);
* ``sources``: where a weight file comes from (Hugging Face cache -> ``zoo/`` or the
  wheel's bundled copy -> Hub, sha256 checked);
* ``resolve``: a ``weights=`` value resolved once into a ``ResolvedWeights`` record
  (architecture arguments, verified file, saved config, class names), the one place
  that does so for the registry and the constructors alike;
* ``load``: that record loaded into a model (strict, head adaptation, configuration check);
* ``shards``: a release too large for one file, as Keras sharded weights;
* ``hub``: pulling released weights into the Hugging Face cache.

Besides the standard library, Keras, h5py and huggingface_hub it imports only the
package's leaf modules (``errors``, ``recipes``, ``flops``): the model registry and the
constructors call it, never the reverse, and what it must know of them (each registered
architecture and its family) the model registry tells ``registered``.
Writing a release (zoo folders, model cards, publishing) is ``keras_gated.release``.
Names are loaded on first use (PEP 562), so that reading configs (``keras-gated list``)
starts no backend.
"""

from __future__ import annotations

from keras_gated._api import lazy_names

_WHERE = {
    "HUB_ORG": "keras_gated.weights.config",
    "WEIGHTS_FILE": "keras_gated.weights.config",
    "PlannedWeightsError": "keras_gated.weights.config",
    "PretrainedCfg": "keras_gated.weights.config",
    "TrainingPlan": "keras_gated.weights.config",
    "split_weight_id": "keras_gated.weights.config",
    "find_pretrained_cfg": "keras_gated.weights.registered",
    "get_pretrained_cfg": "keras_gated.weights.registered",
    "list_pretrained": "keras_gated.weights.registered",
    "pretrained_cfgs_overlay": "keras_gated.weights.registered",
    "register_cfg_file": "keras_gated.weights.registered",
    "register_pretrained": "keras_gated.weights.registered",
    "tags_for": "keras_gated.weights.registered",
    "unregister_pretrained": "keras_gated.weights.registered",
    "ChecksumError": "keras_gated.weights.sources",
    "WeightsNotFoundError": "keras_gated.weights.sources",
    "sha256_of": "keras_gated.weights.sources",
    "zoo_dir": "keras_gated.weights.sources",
    "ResolvedWeights": "keras_gated.weights.resolve",
    "resolve_weights": "keras_gated.weights.resolve",
    "MAX_SHARD_BYTES": "keras_gated.weights.shards",
}


# Submodules reachable as attributes (``keras_gated.weights.sources``) before any
# import of them.
_SUBMODULES = ("config", "hub", "load", "planned", "registered", "resolve", "shards",
               "sources")


__getattr__, __dir__ = lazy_names(__name__, _WHERE, _SUBMODULES, globals())

__all__ = sorted(_WHERE)
