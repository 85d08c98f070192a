"""Building registered models by name (timm's ``create_model``).

    >>> import keras_gated
    >>> model = keras_gated.create_model("gwrn_16_2", classes=100)
    >>> model = keras_gated.create_model("gresnet20.cifar10")   # name.tag = weight id
    >>> fresh = keras_gated.create_model("gresnet20.cifar10", pretrained=False)  # random weights
    >>> model = keras_gated.create_model("gresnet20", pretrained=True, num_classes=5)
    >>> backbone = keras_gated.create_model("gresnet20", features_only=True, out_indices=(1, 2))

A name identifies an architecture (``gresnet20``); a *weight id* ``name.tag`` adds the
tag of the data its weights were trained on (``gresnet20.cifar10``). The names and their
listing are the registry's (``keras_gated.registry``, which imports no Keras); building
them is here, above the families that register them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras

from keras_gated.models.entry_build import build_entry
from keras_gated.registry.models import get_model_entry
from keras_gated.registry.names import default_pretrained_tag
from keras_gated.weights.config import split_weight_id
from keras_gated.weights.registered import get_pretrained_cfg
from keras_gated.weights.resolve import resolve_weights


def create_model(
    name: str,
    pretrained: bool | str | None = None,
    num_classes: int | None = None,
    features_only: bool = False,
    out_indices: Sequence[int] | None = None,
    pretrained_cfg_overlay: dict | None = None,
    in_chans: int | None = None,
    global_pool: str | None = None,
    drop_rate: float | None = None,
    **kwargs: Any,
) -> keras.Model:
    """Build a registered model by name; ``name.tag`` also loads the tag's weights.

    Keyword arguments override the registered ones (``classes=100``,
    ``include_top=False``, ``weights="cifar10"``, ...). timm's vocabulary works too:

    Args:
        name: a registered name (``"gresnet20"``) or a weight id (``"gresnet20.cifar10"``).
        pretrained: True loads the default released weights of ``name`` (the first of
            ``keras_gated.weights.tags_for(name)``) or those of the weight id
            ``name.tag``; a string loads that tag. False (as timm): fresh random weights,
            also for a weight id, which then gives only its configuration (the
            constructor arguments the weights were trained with, their head size and
            input shape). None (default): a weight id loads its weights, a bare name is
            random unless ``weights=`` says otherwise.
        num_classes: the size of the head (an alias of ``classes``): a new head when it
            differs from the weights'. 0 gives the pooled features (no head).
        features_only: return ``keras_gated.features.features_model`` of the backbone
            (``include_top=False``): one output per stage, described by
            ``model.feature_info``. Convolutional families only.
        out_indices: with ``features_only``, which feature maps (default: all).
        pretrained_cfg_overlay: fields of the pretrained config to override (e.g.
            ``{"hf_hub_id": ..., "revision": ..., "sha256": ...}`` for a fork; a sharded
            release's fork also overrides ``shards``), or
            ``{"file": path}`` to load a local weight file in place of the released one.
        in_chans: the number of input channels (default: the family's, 3 for images).
            Pretrained weights are adapted as timm's ``adapt_input_conv`` does: for 1
            channel the stem kernel is summed over its input channels, for more it is
            repeated and rescaled (``keras_gated.models.input_adapt``).
        global_pool: the global pooling before the head: ``"avg"`` (default) or
            ``"max"``; without a head (``num_classes=0``) also ``""``: the unpooled
            feature map.
        drop_rate: dropout before the classifier (replacing a recipe's own).

    Every model has ``pretrained_cfg``, ``num_classes``, ``num_features``,
    ``get_classifier``, ``reset_classifier``, ``forward_features``, ``forward_head`` and
    ``feature_info`` with ``channels()`` / ``reduction()``, also with ``features_only`` (see
    ``keras_gated.models.gated_model.GatedModel``). A ``weights=`` value is resolved
    once, here (``keras_gated.weights.resolve``), then built from and loaded.
    """
    arch, tag = _split_name(name)
    entry = get_model_entry(arch)
    if pretrained is False and tag is not None:
        kwargs = _fresh_from_weight_id(entry, arch, tag, num_classes, kwargs)
        tag = None  # the weight id gives its configuration only
    weights = _requested_weights(name, arch, tag, pretrained, kwargs.get("weights"))
    if weights is not None:
        kwargs["weights"] = weights
    _set_head_size(kwargs, num_classes)
    has_head = not features_only and num_classes != 0 and kwargs.get("include_top", True)
    head_pooling = _head_pooling(global_pool, has_head)
    _set_backbone_options(kwargs, global_pool, has_head, features_only, out_indices)

    # Resolved once, here; the constructor and the builder take the record as it is.
    resolved = resolve_weights(arch, weights, overlay=pretrained_cfg_overlay)
    if resolved is not None:
        kwargs["weights"] = resolved
    new_head = has_head and (head_pooling != "avg" or drop_rate is not None)
    return build_entry(entry, kwargs, in_chans=in_chans,
                       head=(head_pooling, drop_rate) if new_head else None,
                       features_only=features_only, out_indices=out_indices)


def _split_name(name: str) -> tuple[str, str | None]:
    """``(architecture, tag)`` of a registered name or weight id (checked)."""
    arch, tag = split_weight_id(name)
    if not isinstance(name, str) or name.endswith(".") or not arch:
        raise ValueError(
            f"Invalid model name {name!r}: give a registered name ('gresnet20') or a "
            "weight id 'name.tag' ('gresnet20.cifar10'), with both parts non-empty."
        )
    return arch, tag


def _fresh_from_weight_id(
    entry: Any, arch: str, tag: str, num_classes: int | None, kwargs: dict
) -> dict:
    """``kwargs`` over the configuration of the weight id ``arch.tag`` (its weights not
    loaded: ``pretrained=False``); ``num_classes`` replaces the weights' head size."""
    config = configuration_of(entry, f"{arch}.{tag}")
    if num_classes is not None:
        config.pop("classes", None)
    return {**config, **kwargs}


def _requested_weights(
    name: str, arch: str, tag: str | None, pretrained: bool | str | None, weights: Any
) -> Any:
    """The one weights value the weight id's tag, ``weights=`` and ``pretrained`` name
    (None: random weights); a ValueError when they name different ones."""
    requested = {"name": tag, "weights": weights}
    if pretrained is True:
        requested["pretrained"] = tag or weights or default_pretrained_tag(arch)
    elif isinstance(pretrained, str) and pretrained:
        requested["pretrained"] = pretrained
    elif pretrained not in (False, None):
        raise ValueError(f"`pretrained` must be True, False or a tag, got {pretrained!r}.")
    given = {source: value for source, value in requested.items() if value is not None}
    if len(set(map(str, given.values()))) > 1:
        raise ValueError(
            f"create_model({name!r}) names different weights: "
            + ", ".join(f"{source} -> {value!r}" for source, value in given.items())
            + "; give only one."
        )
    return next(iter(given.values()), None)


def _set_head_size(kwargs: dict, num_classes: int | None) -> None:
    """timm's ``num_classes`` as the constructor's ``classes`` (0: no head, pooled)."""
    if num_classes is None:
        return
    if kwargs.get("classes", num_classes) != num_classes:
        raise ValueError(
            f"`num_classes`={num_classes!r} and `classes`={kwargs['classes']!r} differ: "
            "`num_classes` is an alias of `classes`; give only one."
        )
    if num_classes == 0:
        kwargs["include_top"] = False
        kwargs.setdefault("pooling", "avg")
    else:
        kwargs["classes"] = num_classes


def _set_backbone_options(
    kwargs: dict,
    global_pool: str | None,
    has_head: bool,
    features_only: bool,
    out_indices: Sequence[int] | None,
) -> None:
    """The constructor arguments of a model without a head: its pooling, or none for
    ``features_only`` (checked against the arguments given with it)."""
    if global_pool is not None and not has_head and not features_only:
        kwargs["pooling"] = global_pool or None
    if out_indices is not None and not features_only:
        raise ValueError("`out_indices` selects feature maps: pass it with features_only=True.")
    if features_only:
        if kwargs.get("include_top") or kwargs.get("pooling"):
            raise ValueError(
                "features_only=True returns the feature maps: do not pass include_top=True "
                "or pooling with it."
            )
        kwargs["include_top"] = False


def _head_pooling(global_pool: str | None, has_head: bool) -> str:
    """The head's pooling for timm's ``global_pool`` (checked)."""
    if global_pool not in (None, "avg", "max", ""):
        raise ValueError(
            f"Invalid `global_pool`={global_pool!r}. Allowed values: 'avg', 'max', and "
            "'' (no pooling, without a head)."
        )
    if global_pool == "" and has_head:
        raise ValueError(
            "global_pool='' leaves the feature map unpooled: pass num_classes=0 with it "
            "(a classifier needs pooled features)."
        )
    return global_pool or "avg"


def configuration_of(entry: Any, weight_id: str) -> dict[str, Any]:
    """The constructor arguments that build ``weight_id``'s network with fresh weights:
    the arguments its weights were trained with, their head size and input shape
    (those ``entry``'s constructor accepts)."""
    cfg = get_pretrained_cfg(weight_id)
    wanted = {**cfg.model_kwargs, "classes": cfg.classes, "input_shape": tuple(cfg.input_shape)}
    valid = getattr(entry.constructor, "valid_arguments", None)
    return {key: value for key, value in wanted.items() if valid is None or key in valid}

