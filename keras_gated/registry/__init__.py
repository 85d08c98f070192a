"""The one registry: model names (``models``), the configs of their weights (kept by
``keras_gated.weights.registered``, importable from here too), the families'
declarations (``families``) and listing by name (``names``: ``list_models``). It imports
no Keras; building a model by name is ``keras_gated.create_model``
(``keras_gated.models.factory``), above the families that register here.

Everything listed in ``__all__`` is importable from here
(``from keras_gated.registry import list_models``).
"""

from keras_gated._moved import moved_name

from keras_gated.registry.models import (
    ModelEntry,
    add_entry,
    get_model_entry,
    is_model,
    list_model_entries,
    model_names,
    register_entries,
    register_model,
    unregister_family,
    unregister_model,
)
from keras_gated.weights.registered import (
    cfg_source_file,
    find_pretrained_cfg,
    get_pretrained_cfg,
    list_pretrained,
    pretrained_cfgs_overlay,
    read_cfg_file,
    register_cfg_file,
    register_pretrained,
    tags_for,
    unregister_pretrained,
    write_cfg,
)
from keras_gated.registry.names import default_pretrained_tag, list_models  # noqa: E402
from keras_gated.weights.config import split_weight_id  # noqa: E402

__all__ = [
    "ModelEntry",
    "add_entry",
    "cfg_source_file",
    "default_pretrained_tag",
    "find_pretrained_cfg",
    "get_model_entry",
    "get_pretrained_cfg",
    "is_model",
    "list_model_entries",
    "list_models",
    "list_pretrained",
    "model_names",
    "pretrained_cfgs_overlay",
    "read_cfg_file",
    "register_cfg_file",
    "register_entries",
    "register_model",
    "register_pretrained",
    "split_weight_id",
    "tags_for",
    "unregister_family",
    "unregister_model",
    "unregister_pretrained",
    "write_cfg",
]


def __getattr__(name: str) -> object:
    """Names that moved out of the registry (``keras_gated._moved.MOVED_NAMES``): found
    in their new module, with one DeprecationWarning."""
    return moved_name(__name__, name)
