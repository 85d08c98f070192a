"""Former home of the applications builder, split by job into
``keras_gated.models.builder`` (inputs, preprocessing, building, loading),
``keras_gated.models.constructor`` (constructor signatures and calls) and
``keras_gated.models.gated_model`` (the model class and its head).

Importing it from here warns once (DeprecationWarning) and gives the same objects.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from typing import Any

import keras

from keras_gated.models.builder import (  # noqa: F401
    CIFAR_INPUT,
    CIFAR_MEAN,
    CIFAR_STD,
    IMAGENET_INPUT,
    IMAGENET_MEAN,
    IMAGENET_STD,
    MNIST_FC_INPUT,
    POOLING_CHOICES,
    InputSpec,
    build_application,
    check_data_format,
    preprocessing_layer,
    resolve_input_shape,
    validate_classes,
    validate_classifier_activation,
    validate_pooling,
)
from keras_gated.models.constructor import (  # noqa: F401
    APPLICATION_ARGUMENTS,
    APPLICATION_DOC,
    FORWARDED_DEFAULTS,
    ConstructorArgumentError,
    ConstructorCall,
    arguments_of,
    current_call,
    defaults_of,
    public_constructor,
    public_signature,
    renamed_arguments,
)
from keras_gated.models.gated_model import (  # noqa: F401
    GatedInfo,
    GatedModel,
    HeadSpec,
    assemble,
    class_names_of,
)
from keras_gated.pretrained.load import load_pretrained  # noqa: F401
from keras_gated.pretrained.sources import released_cfg, validate_weights  # noqa: F401

warnings.warn(
    "keras_gated.models.application is split into keras_gated.models.builder, "
    "keras_gated.models.constructor and keras_gated.models.gated_model; import from "
    "those.",
    DeprecationWarning,
    stacklevel=2,
)


def pretrained_cfg_of(arch: str, weights: Any) -> dict | None:
    """The config dict of ``weights`` for ``arch`` (now ``ResolvedWeights.pretrained_cfg``)."""
    if weights is None:
        return None
    weights = os.fspath(weights)
    cfg = released_cfg(arch, weights)
    return {"file": weights} if cfg is None else dataclasses.asdict(cfg)


def attach_timm_api(
    model: GatedModel,
    feature_map: Any,
    head: HeadSpec,
    *,
    num_classes: int,
    pretrained_cfg: dict | None,
) -> keras.Model:
    """Record on a ``GatedModel`` what its timm methods need (they are its own now)."""
    model.set_gated_info(GatedInfo(feature_map._keras_history[0].name, head, num_classes,
                                   pretrained_cfg))
    return model
