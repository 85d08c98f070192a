"""The public API of ``keras_gated`` (re-exported by the package)."""

from keras_gated import layers, models
from keras_gated.gates import gate_values, gated_blocks, remove_block, set_gate
from keras_gated.gating import gate
from keras_gated.models import *  # noqa: F403  (every family constructor)
from keras_gated.preprocessing import decode_predictions, preprocess_input
from keras_gated.pretrained import PretrainedCfg, get_pretrained_cfg, list_pretrained
from keras_gated.registry import create_model, get_model_entry, is_model, list_models

__all__ = [
    *models.__all__,
    "gate",
    "PretrainedCfg",
    "create_model",
    "decode_predictions",
    "gate_values",
    "gated_blocks",
    "get_model_entry",
    "get_pretrained_cfg",
    "is_model",
    "layers",
    "list_models",
    "list_pretrained",
    "preprocess_input",
    "remove_block",
    "set_gate",
]
