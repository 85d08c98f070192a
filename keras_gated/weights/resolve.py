"""A ``weights=`` value resolved once, up front, into one record.

As timm's ``build_model_with_cfg``, a load flows one way: ``resolve_weights`` reads the
weights registry once and, in one pass of ``keras_gated.weights.sources.locate``, finds
the verified file, the configuration and class names saved with it and the constructor
arguments the weights were trained with; the model is then built from the record
(``keras_gated.models.builder``) and the record loaded into it
(``keras_gated.weights.load.load_resolved``). Neither step looks anything up again.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keras_gated.weights.config import PretrainedCfg
from keras_gated.weights.registered import get_pretrained_cfg, tags_for
from keras_gated.weights.sources import HF_PREFIX, local_weights_file, locate


@dataclass(frozen=True)
class ResolvedWeights:
    """Everything building and loading need to know about one ``weights=`` value.

    Attributes:
        source: the value as given (a tag, a path or an ``hf://`` reference).
        arch: the architecture a tag was resolved for (None for files and Hub refs).
        path: the local weight file, its sha256 checked when a config registers one.
        origin: how messages name the weights (``"weights gresnet20.cifar10"``).
        model_kwargs: the constructor arguments the weights were trained with (a
            released config's ``model_kwargs``, a zoo folder's ``metrics.json``).
        saved_config: the Keras model config saved with them (None: none was saved).
        class_names: their class names (None when unknown).
        pretrained_cfg: what the built model's ``pretrained_cfg`` is.
        cfg: the released config of a tag (None for files and Hub refs).
    """

    source: str
    arch: str | None
    path: Path
    origin: str
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    saved_config: dict | None = None
    class_names: tuple[str, ...] | None = None
    pretrained_cfg: dict | None = None
    cfg: PretrainedCfg | None = None

    @property
    def caveat(self) -> str | None:
        """What the release says to keep in mind about these weights (None: nothing)."""
        return self.cfg.caveat if self.cfg is not None else None

    def __str__(self) -> str:
        return self.source


def resolve_weights(
    arch: str | None,
    weights: str | os.PathLike | ResolvedWeights | None,
    *,
    overlay: dict | None = None,
) -> ResolvedWeights | None:
    """Resolve ``weights=`` for the architecture ``arch`` into a ``ResolvedWeights``: the
    one place a ``weights=`` value is resolved, for ``create_model`` and the public
    constructors alike.

    Args:
        arch: the registry name the model is built as (``"gresnet20"``); None resolves
            only files and Hub references.
        weights: None (random weights: None is returned), a data tag, a ``.weights.h5``
            file or save folder, ``"hf://org/name[@revision]"``, or a record resolved
            already (returned as it is when resolved for ``arch`` or for no
            architecture; resolved again from its source for another one).
        overlay: fields of the tag's registered config to replace
            (``create_model(..., pretrained_cfg_overlay=...)``), and ``"file"``: a local
            weight file to load in place of the tag's (its config's arguments and class
            names still hold). Only for a released tag.

    A released config's caveat is said once, here (a UserWarning).
    """
    if isinstance(weights, ResolvedWeights):
        if weights.arch in (None, arch) and not overlay:
            return weights
        weights = weights.source
    if overlay:
        if weights is None or arch is None or str(weights) not in tags_for(arch):
            raise ValueError(
                "pretrained_cfg_overlay changes the config of released weights: pass it "
                "with pretrained=True, a tag or a weight id."
            )
        cfg, file = _overlaid_cfg(arch, str(weights), overlay)
        return _resolve(arch, weights, cfg=cfg, file=file)
    if weights is None:
        return None
    return _resolve(arch, weights)


def is_tag(weights: str | os.PathLike) -> bool:
    """Whether a ``weights=`` value can only be a data tag (resolved for an
    architecture): neither an ``hf://`` reference nor an existing weight file or folder."""
    source = os.fspath(weights)
    return not (source.startswith(HF_PREFIX) or local_weights_file(source))


def _overlaid_cfg(arch: str, tag: str, overlay: dict) -> tuple[PretrainedCfg, str | None]:
    """(the registered config of ``arch.tag`` with ``overlay``'s fields replaced, a local
    weight file from overlay key ``"file"`` or None)."""
    overlay = dict(overlay)
    file = overlay.pop("file", None)
    fields = {f.name for f in dataclasses.fields(PretrainedCfg)}
    unknown = sorted(set(overlay) - fields)
    if unknown or "weight_id" in overlay:
        bad = unknown[0] if unknown else "weight_id"
        raise ValueError(
            f"pretrained_cfg_overlay: {bad!r} cannot be overridden. Allowed keys: "
            f"{', '.join(sorted(fields - {'weight_id'}))}, and 'file' (a local weight file)."
        )
    cfg = dataclasses.replace(get_pretrained_cfg(f"{arch}.{tag}"), **overlay)
    return cfg, None if file is None else os.fspath(file)


def _resolve(
    arch: str | None,
    weights: str | os.PathLike,
    *,
    cfg: PretrainedCfg | None = None,
    file: str | os.PathLike | None = None,
) -> ResolvedWeights:
    """``resolve_weights`` of a value not resolved yet; ``cfg``: the config to use for
    the tag instead of the registered one, ``file``: a local file to load in its place."""
    source = os.fspath(weights) if isinstance(weights, (str, os.PathLike)) else weights
    found = locate(arch, source, cfg, None if file is None else os.fspath(file), stacklevel=5)
    if found.ref.cfg is None:  # a file, a save folder or an hf:// reference
        return ResolvedWeights(
            source, None, found.path, str(found.ref.hub or found.path),
            model_kwargs=found.trained_with, saved_config=found.saved_config,
            class_names=found.card_class_names, pretrained_cfg={"file": source},
        )
    cfg = found.ref.cfg
    pretrained_cfg = dataclasses.asdict(cfg)
    if file is not None:
        pretrained_cfg["file"] = os.fspath(file)
    return ResolvedWeights(
        source, arch, found.path,
        origin=f"weights {cfg.weight_id}" if file is None else str(found.path),
        model_kwargs=dict(cfg.model_kwargs), saved_config=found.saved_config,
        class_names=tuple(cfg.class_names) or found.card_class_names,
        pretrained_cfg=pretrained_cfg, cfg=cfg,
    )
