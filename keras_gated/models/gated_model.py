"""The model class every keras-gated constructor returns, and its head.

``GatedModel`` is a Keras functional model (with the fast training path of
``FastPathModel``, ``fast_path_model.py``) that also speaks timm's model vocabulary:

* ``forward_features(x)``: the last feature map, before global pooling;
* ``forward_head(x, pre_logits=False)``: pooling and head on a feature map
  (``pre_logits=True``: the pooled features); ``forward_head(forward_features(x))``
  equals ``model(x)``;
* ``reset_classifier(num_classes)``: a **new** model on the same backbone layers (weights
  shared, not copied) with a fresh ``num_classes`` head; 0 gives the pooled features.
  Keras graphs are immutable, so use ``model = model.reset_classifier(5)``;
* ``get_classifier()``: the ``predictions`` layer (None without a head);
* ``feature_info``: one entry per stage (``module``, ``num_chs``, ``reduction``), a list
  with timm's ``.channels()`` / ``.reduction()`` / ``.module_name()``;
* ``with_head(model, pooling=, drop_rate=)``: the same model with its head's global
  pooling (``"max"``) or dropout before the classifier changed (timm's ``global_pool``
  and ``drop_rate``);
* ``pretrained_cfg``, ``num_classes``, ``num_features`` and ``class_names``;
* ``export(path, format="onnx")``: Keras's export of a graph that takes raw pixels only
  (the preprocessing statistics baked in as constants).

What rebuilds them (the feature layer's name, the head's recipe, the class names and the
pretrained config) is part of the model's config under ``"keras_gated"``, so a model
reloaded by ``keras.saving.load_model`` has every one of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import keras

# The module, not its names: keras_gated.features reads the families' specs, so importing
# it first imports the families, and so this module, before it has defined its names.
from keras_gated import features
from keras_gated.export import check_onnx_converter, prepared_for_export
from keras_gated.models.fast_path_model import FastPathModel

PACKAGE = "keras_gated"  # the package Keras registers the classes under
HEAD = "predictions"


@dataclass(frozen=True)
class HeadSpec:
    """How a family pools its features and classifies them (kept for ``reset_classifier``)."""

    spatial: bool  # False: the features are already a vector (fully-connected nets)
    classifier_activation: Any = "softmax"
    head_dropout: float = 0.0
    head_initializer: Any = "glorot_uniform"

    def pooling_layer(self, pooling: str = "avg") -> keras.layers.Layer:
        """A fresh ``avg_pool`` / ``max_pool`` layer (an identity for vectors)."""
        name = f"{pooling}_pool"
        if not self.spatial:
            return keras.layers.Identity(name=name)
        if pooling == "max":
            return keras.layers.GlobalMaxPooling2D(name=name)
        return keras.layers.GlobalAveragePooling2D(name=name)

    def classifier(self, classes: int) -> keras.layers.Layer:
        """A fresh ``predictions`` head. It computes in float32, softmax included, also
        under a mixed-precision policy (as keras-hub's heads), so probabilities sum to 1."""
        return keras.layers.Dense(
            classes,
            activation=self.classifier_activation,
            kernel_initializer=self.head_initializer,
            dtype="float32",
            name=HEAD,
        )

    def to_config(self) -> dict:
        return {
            "spatial": self.spatial,
            "classifier_activation": keras.activations.serialize(
                keras.activations.get(self.classifier_activation)),
            "head_dropout": self.head_dropout,
            "head_initializer": keras.initializers.serialize(
                keras.initializers.get(self.head_initializer)),
        }

    @classmethod
    def from_config(cls, config: dict) -> HeadSpec:
        return cls(
            spatial=config["spatial"],
            classifier_activation=keras.activations.deserialize(config["classifier_activation"]),
            head_dropout=config["head_dropout"],
            head_initializer=keras.initializers.deserialize(config["head_initializer"]),
        )


class FeatureInfoList(list):
    """``model.feature_info``: a list of ``{"module", "num_chs", "reduction"}`` dicts with
    timm's accessors (each takes an optional index or list of indices)."""

    def _get(self, key: str, idx: int | Sequence[int] | None) -> Any:
        if idx is None:
            return [info[key] for info in self]
        if isinstance(idx, int):
            return self[idx][key]
        return [self[i][key] for i in idx]

    def channels(self, idx: int | Sequence[int] | None = None) -> Any:
        return self._get("num_chs", idx)

    def reduction(self, idx: int | Sequence[int] | None = None) -> Any:
        return self._get("reduction", idx)

    def module_name(self, idx: int | Sequence[int] | None = None) -> Any:
        return self._get("module", idx)


@dataclass(frozen=True)
class GatedInfo:
    """What a ``GatedModel`` knows beyond its graph (saved in its config)."""

    feature_layer: str  # the layer whose output is the last feature map
    head: HeadSpec
    num_classes: int  # the size of the head, 0 without one
    pretrained_cfg: dict | None = None

    def to_config(self, class_names: Sequence[str] | None) -> dict:
        return {
            "num_classes": self.num_classes,
            "pretrained_cfg": self.pretrained_cfg,
            "class_names": list(class_names) if class_names else None,
            "feature_layer": self.feature_layer,
            "head": self.head.to_config(),
        }

    @classmethod
    def from_config(cls, config: dict) -> GatedInfo:
        return cls(config["feature_layer"], HeadSpec.from_config(config["head"]),
                   config["num_classes"], config.get("pretrained_cfg"))


class _Cache:
    """Models derived on first use (kept out of Keras's attribute tracking, which would
    make them sub-layers)."""

    def __init__(self) -> None:
        self.forward_features: keras.Model | None = None


@keras.saving.register_keras_serializable(package=PACKAGE)
class GatedModel(FastPathModel):
    """A keras-gated model: a functional model with timm's conveniences (module docs).

    Built by ``assemble`` (every constructor goes through it); ``keras.saving.load_model``
    rebuilds one, conveniences included, from its config.
    """

    _gated: GatedInfo | None = None
    class_names: tuple[str, ...] | None = None

    # ------------------------------------------------------------------ saving
    def get_config(self) -> dict:
        config = super().get_config()
        if self._gated is not None:
            config["keras_gated"] = self._gated.to_config(self.class_names)
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> GatedModel:
        config = dict(config)
        extras = config.pop("keras_gated", None)
        model = super().from_config(config, custom_objects)
        if extras is not None:
            model.set_gated_info(GatedInfo.from_config(extras))
            names = extras.get("class_names")
            model.class_names = None if names is None else tuple(names)
        return model

    def set_gated_info(self, info: GatedInfo) -> None:
        """Record what the timm conveniences need (the builder does, and ``from_config``)."""
        self.get_layer(info.feature_layer)  # a ValueError if the graph lacks it
        self._gated = info
        self._cache = _Cache()

    def _info(self) -> GatedInfo:
        if self._gated is None:
            raise ValueError(
                f"{self.name} was not built by a keras-gated constructor: it has no "
                "recorded feature map or head."
            )
        return self._gated

    # ------------------------------------------------------------ properties
    @property
    def pretrained_cfg(self) -> dict | None:
        """The config dict of the weights (None for random weights)."""
        return None if self._gated is None else self._gated.pretrained_cfg

    @pretrained_cfg.setter
    def pretrained_cfg(self, cfg: dict | None) -> None:
        self._gated = dataclasses.replace(self._info(), pretrained_cfg=cfg)

    @property
    def num_classes(self) -> int:
        """The size of the head (0 without one)."""
        return self._info().num_classes

    @property
    def num_features(self) -> int:
        """The channels of the last feature map (the pooled vector's size)."""
        return int(self._feature_map().shape[-1])

    @property
    def feature_info(self) -> FeatureInfoList:
        """One entry per stage (timm's ``feature_info``); a fully-connected net has one,
        its feature vector (reduction 1)."""
        info = self._info()
        if info.head.spatial:
            return FeatureInfoList(entry.to_dict() for entry in features.feature_info(self))
        return FeatureInfoList(
            [{"module": info.feature_layer, "num_chs": self.num_features, "reduction": 1}]
        )

    def _feature_map(self) -> Any:
        return self.get_layer(self._info().feature_layer).output

    # --------------------------------------------------------------- methods
    def forward_features(self, x: Any, training: bool | None = False) -> Any:
        """The last feature map of ``x`` (raw pixels), before global pooling."""
        feature_map = self._feature_map()
        if self._cache.forward_features is None:
            self._cache.forward_features = keras.Model(
                self._inputs_arg(), feature_map, name=f"{self.name}_forward_features"
            )
        return self._cache.forward_features(x, training=training)

    def forward_head(self, x: Any, pre_logits: bool = False, training: bool | None = False) -> Any:
        """Global pooling and the head on a feature map; ``pre_logits``: pooled only."""
        names = {layer.name for layer in self.layers}
        pooling = self._head_pooling()
        pool_name = f"{pooling}_pool"
        pool = (self.get_layer(pool_name) if pool_name in names
                else self._info().head.pooling_layer(pooling))
        x = pool(x)
        if "head_dropout" in names:
            x = self.get_layer("head_dropout")(x, training=training)
        if pre_logits or HEAD not in names:
            return x
        return self.get_layer(HEAD)(x)

    def export(self, filepath: Any, format: str = "tf_saved_model", verbose: Any = None,
               input_signature: Any = None, **kwargs: Any) -> Any:
        """Keras's ``Model.export`` (``format="onnx"``, ``"tf_saved_model"``,
        ``"litert"``, ...) of a copy whose preprocessing statistics are constants, so the
        exported graph takes raw pixels only (converters such as tf2onnx would make the
        statistics graph inputs); as ``keras-gated export``."""
        check_onnx_converter(self, format)
        prepared = prepared_for_export(self)
        return super(GatedModel, prepared).export(
            filepath, format=format, verbose=verbose, input_signature=input_signature, **kwargs
        )

    def get_classifier(self) -> keras.layers.Layer | None:
        """The ``predictions`` layer (None without a head)."""
        return self.get_layer(HEAD) if any(layer.name == HEAD for layer in self.layers) else None

    def reset_classifier(self, num_classes: int) -> GatedModel:
        """A new model: this backbone (shared layers) with a fresh ``num_classes`` head,
        or the pooled features for 0."""
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 0:
            raise ValueError(f"`num_classes` must be an integer >= 0, got {num_classes!r}.")
        info = self._info()
        pooling = self._head_pooling()
        return assemble(
            self._inputs_arg(), self._feature_map(), info.head,
            include_top=num_classes > 0, pooling=pooling, classes=num_classes, name=self.name,
            pretrained_cfg=info.pretrained_cfg, head_pooling=pooling,
        )

    def _head_pooling(self) -> str:
        """The global pooling of the head: ``"max"`` when the model has a ``max_pool``
        layer and no ``avg_pool`` one, else ``"avg"``."""
        names = {layer.name for layer in self.layers}
        return "max" if "max_pool" in names and "avg_pool" not in names else "avg"

    def _inputs_arg(self) -> Any:
        return self.inputs[0] if len(self.inputs) == 1 else self.inputs


def class_names_of(
    include_top: bool, classes: int, weights_class_names: Sequence[str] | None
) -> tuple[str, ...] | None:
    """The class names of a built model: the weights' when the head is theirs, generic
    ``class<i>`` for a new head, None without a head."""
    if not include_top:
        return None
    if weights_class_names and len(weights_class_names) == classes:
        return tuple(weights_class_names)
    return tuple(f"class{i}" for i in range(classes))


def assemble(
    inputs: Any,
    feature_map: Any,
    head: HeadSpec,
    *,
    include_top: bool,
    pooling: str | None,
    classes: int,
    name: str,
    pretrained_cfg: dict | None = None,
    class_names: Sequence[str] | None = None,
    head_pooling: str = "avg",
    classifier: keras.layers.Layer | None = None,
) -> GatedModel:
    """The model from ``inputs`` to ``feature_map`` followed by the requested top:
    ``avg_pool`` (``head_pooling="max"``: ``max_pool``) [+ ``head_dropout``] +
    ``predictions`` with ``include_top``, else the feature map or its ``pooling``
    (``"avg"`` / ``"max"``). ``classifier``: an existing ``predictions`` layer to reuse
    (its weights kept) instead of a fresh one."""
    x = feature_map
    if include_top:
        x = head.pooling_layer(head_pooling)(x)
        if head.head_dropout:
            x = keras.layers.Dropout(head.head_dropout, name="head_dropout")(x)
        x = (classifier or head.classifier(classes))(x)
    elif pooling is not None:
        x = head.pooling_layer(pooling)(x)
    model = GatedModel(inputs, x, name=name)
    model.set_gated_info(GatedInfo(
        feature_layer=feature_map._keras_history[0].name,
        head=head,
        num_classes=classes if include_top else 0,
        pretrained_cfg=pretrained_cfg,
    ))
    model.class_names = class_names_of(include_top, classes, class_names)
    return model


def with_head(model: GatedModel, *, pooling: str = "avg",
              drop_rate: float | None = None) -> GatedModel:
    """A new model on ``model``'s layers (its head's weights kept) whose head pools with
    ``pooling`` (``"avg"`` / ``"max"``) and, with ``drop_rate``, applies that dropout
    before the classifier (timm's ``global_pool`` and ``drop_rate``)."""
    if pooling not in ("avg", "max"):
        raise ValueError(f"A head pools with 'avg' or 'max', got {pooling!r}.")
    info = model._info()
    head = info.head
    if drop_rate is not None:
        if not 0.0 <= drop_rate < 1.0:
            raise ValueError(f"`drop_rate` must be in [0, 1), got {drop_rate!r}.")
        head = dataclasses.replace(head, head_dropout=float(drop_rate))
    return assemble(
        model._inputs_arg(), model._feature_map(), head,
        include_top=True, pooling=None, classes=info.num_classes, name=model.name,
        pretrained_cfg=info.pretrained_cfg, class_names=model.class_names,
        head_pooling=pooling, classifier=model.get_classifier(),
    )
