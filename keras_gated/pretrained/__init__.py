"""Pretrained weights: configs, where their files come from, and loading them.

One job per module:

* ``config``: ``PretrainedCfg``, the data of one weight (released or planned);
* ``registry``: every config, read from the families' JSON data files;
* ``planned``: what asking for planned weights says (command, recipe, compute);
* ``sources``: a ``weights=`` value resolved to a verified local file (Hugging Face
  cache -> ``zoo/`` or the wheel's bundled copy -> Hub, sha256 checked);
* ``load``: that file loaded into a model (strict, head adaptation, configuration check);
* ``zoo_folder``: the folder and model card a release is published as;
* ``hub``: publishing to and pulling from the Hub;
* ``listing``: the markdown tables of the zoo.
"""

from keras_gated.pretrained.config import (
    HUB_ORG,
    WEIGHTS_FILE,
    PlannedWeightsError,
    PretrainedCfg,
    TrainingPlan,
    split_weight_id,
)
from keras_gated.pretrained.registry import (
    find_pretrained_cfg,
    get_pretrained_cfg,
    list_pretrained,
    pretrained_cfgs_overlay,
    register_cfg_file,
    register_pretrained,
    tags_for,
    unregister_pretrained,
)
from keras_gated.pretrained.sources import (
    ChecksumError,
    WeightsNotFoundError,
    sha256_of,
    zoo_dir,
)


def __getattr__(name: str):
    """``save_zoo_folder`` imports Keras: loaded on first use, so that reading configs
    (``keras-gated list``) does not start a backend."""
    if name == "save_zoo_folder":
        from keras_gated.pretrained.zoo_folder import save_zoo_folder

        return save_zoo_folder
    raise AttributeError(f"module 'keras_gated.pretrained' has no attribute {name!r}")


__all__ = [
    "HUB_ORG",
    "WEIGHTS_FILE",
    "ChecksumError",
    "PlannedWeightsError",
    "PretrainedCfg",
    "TrainingPlan",
    "WeightsNotFoundError",
    "find_pretrained_cfg",
    "get_pretrained_cfg",
    "list_pretrained",
    "pretrained_cfgs_overlay",
    "register_cfg_file",
    "register_pretrained",
    "save_zoo_folder",
    "sha256_of",
    "split_weight_id",
    "tags_for",
    "unregister_pretrained",
    "zoo_dir",
]
