"""The Keras half of ``keras_gated.create_model``: a registry entry built on other input
channels (pretrained weights adapted as timm's ``adapt_input_conv``), given a new head, or
cut to its stages' features (``features_only``). The registry calls it once a model is
really built, so that reading the registry starts no backend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras

from keras_gated.features import features_model
from keras_gated.models.builder import default_channels
from keras_gated.models.gated_model import FeatureInfoList, with_head
from keras_gated.models.input_adapt import copy_adapting_stem


def build_entry(entry: Any, kwargs: dict, *, in_chans: int | None = None,
                head: tuple[str, float | None] | None = None, features_only: bool = False,
                out_indices: Sequence[int] | None = None) -> keras.Model:
    """``entry.build(**kwargs)`` on ``in_chans`` input channels; then a new head
    (``head``: its pooling and dropout rate) or, with ``features_only``, one output per
    stage (``out_indices`` of them)."""
    model = _build(entry, kwargs, in_chans)
    if head is not None:
        pooling, drop_rate = head
        model = with_head(model, pooling=pooling, drop_rate=drop_rate)
    return _features_of(model, out_indices) if features_only else model


def _features_of(model: keras.Model, out_indices: Sequence[int] | None) -> keras.Model:
    """``features_only``: one output per stage of ``model``'s backbone."""
    features = features_model(model, out_indices)
    object.__setattr__(features, "feature_info", FeatureInfoList(features.feature_info))
    object.__setattr__(features, "pretrained_cfg", model.pretrained_cfg)
    return features


def _build(entry: Any, kwargs: dict, in_chans: int | None) -> keras.Model:
    """``entry.build(**kwargs)`` on ``in_chans`` input channels (None: the family's);
    pretrained weights on another channel count get their stem adapted."""
    if in_chans is None:
        return entry.build(**kwargs)
    if kwargs.get("input_tensor") is not None:
        raise ValueError("`in_chans` sets the input's channels: pass it without input_tensor.")
    shape = kwargs.pop("input_shape", None)
    if shape is not None and tuple(shape)[-1] != in_chans:
        raise ValueError(
            f"`input_shape`={tuple(shape)} has {tuple(shape)[-1]} channels but "
            f"`in_chans`={in_chans}; give only one of them."
        )
    sized = {} if shape is None else {"input_shape": tuple(shape)}
    weights = kwargs.get("weights")
    if weights is None:
        with default_channels(in_chans):
            return entry.build(**kwargs, **sized)
    loaded = entry.build(**kwargs)  # on the channels the weights were trained with
    if not sized and loaded.input_shape[-1] == in_chans:
        return loaded
    valid = getattr(entry.constructor, "valid_arguments", ())
    trained = {key: value for key, value in getattr(weights, "model_kwargs", {}).items()
               if key in valid and key not in kwargs}
    fresh_kwargs = {**trained, **kwargs, **sized, "weights": None}
    if loaded.num_classes:
        fresh_kwargs["classes"] = loaded.num_classes
    with default_channels(in_chans):
        model = entry.build(**fresh_kwargs)
    copy_adapting_stem(loaded, model)
    model.pretrained_cfg = loaded.pretrained_cfg
    model.class_names = loaded.class_names
    return model
