"""The one registry: model names (``models``), the configs of their weights (kept by
``keras_gated.weights.registered``, importable from here too), and building / listing by
name (``factory``: ``create_model``, ``list_models``).

Everything is importable from here (``from keras_gated.registry import create_model``).
"""

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
from keras_gated.registry.factory import (  # noqa: E402  (after the registries it uses)
    create_model,
    default_pretrained_tag,
    list_models,
    split_weight_id,
)

__all__ = [
    "ModelEntry",
    "add_entry",
    "cfg_source_file",
    "create_model",
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
