"""Pretrained weights: the per-weight configs and the ``weights=`` argument.

``weights=`` on every constructor accepts:

* ``None``: random initialisation;
* a local ``.weights.h5`` file or a Keras save folder (``config.json`` +
  ``model.weights.h5``);
* a data tag (``"cifar10"``) for which a weight id ``name.tag`` is released.

Released weights are listed by ``list_pretrained()``; none are registered yet, and a
tag that is not released is an error that lists the tags that exist.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import keras

WEIGHTS_FILE = "model.weights.h5"


@dataclass(frozen=True)
class PretrainedCfg:
    """Everything known about one released weight (keyed by weight id ``name.tag``)."""

    weight_id: str
    dataset: str
    classes: int
    class_names: tuple[str, ...]
    input_shape: tuple[int, ...]
    preprocessing: str
    hf_hub_id: str
    file_name: str = WEIGHTS_FILE
    sha256: str | None = None
    revision: str | None = None  # None until published: the sha256 is the pin
    metrics: dict = field(default_factory=dict)
    license: str = "apache-2.0"
    recipe: str = ""
    command: str = ""

    @property
    def arch(self) -> str:
        return self.weight_id.partition(".")[0]

    @property
    def tag(self) -> str:
        return self.weight_id.partition(".")[2]


_PRETRAINED: dict[str, PretrainedCfg] = {}


def register_pretrained(cfg: PretrainedCfg) -> None:
    if cfg.weight_id in _PRETRAINED:
        raise ValueError(f"Weights {cfg.weight_id!r} are already registered.")
    _PRETRAINED[cfg.weight_id] = cfg


def list_pretrained() -> list[str]:
    """The weight ids (``name.tag``) of every released weight."""
    return list(_PRETRAINED)


def get_pretrained_cfg(weight_id: str) -> PretrainedCfg:
    """The config of a released weight, e.g. ``get_pretrained_cfg("gresnet20.cifar10")``."""
    if weight_id not in _PRETRAINED:
        released = ", ".join(sorted(_PRETRAINED)) or "none yet"
        raise ValueError(f"No released weights {weight_id!r}. Released: {released}.")
    return _PRETRAINED[weight_id]


def tags_for(arch: str) -> list[str]:
    return sorted(cfg.tag for cfg in _PRETRAINED.values() if cfg.arch == arch)


def _local_weights_file(weights: str) -> Path | None:
    path = Path(os.path.expanduser(weights))
    if path.is_dir() and (path / WEIGHTS_FILE).is_file():
        return path / WEIGHTS_FILE
    if path.is_file() and path.name.endswith(".weights.h5"):
        return path
    return None


def validate_weights(arch: str, weights: str | None) -> None:
    """Check ``weights=`` before a model is built; a ValueError says what is accepted."""
    if weights is None:
        return
    if not isinstance(weights, (str, os.PathLike)):
        raise ValueError(
            f"`weights` must be None, a data tag, or a path; got {type(weights).__name__}."
        )
    weights = str(weights)
    if _local_weights_file(weights) is not None:
        return
    if f"{arch}.{weights}" in _PRETRAINED:
        return
    tags = tags_for(arch)
    if os.sep in weights or weights.endswith(".h5") or weights.endswith(".keras"):
        raise ValueError(
            f"`weights`={weights!r} is not a `.weights.h5` file or a Keras save folder "
            "(with model.weights.h5) that exists."
        )
    available = (
        f"Released tags for {arch!r}: {', '.join(tags)}."
        if tags
        else f"No weights are released for {arch!r} yet; use weights=None, or a local "
        "`.weights.h5` file or save folder."
    )
    raise ValueError(f"Unknown `weights`={weights!r} for {arch!r}. {available}")


def load_pretrained(
    model: keras.Model, *, arch: str, weights: str, include_top: bool, classes: int
) -> None:
    """Load ``weights`` (already checked by ``validate_weights``) into ``model``."""
    path = _local_weights_file(str(weights))
    if path is None:
        raise ValueError(
            f"Weights {arch}.{weights} are registered but cannot be resolved here."
        )
    model.load_weights(path)
