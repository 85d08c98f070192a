"""The weights registry: every pretrained config, released and planned, read from data files.

Each family module that has weights keeps their configs in a JSON file beside it
(``keras_gated/models/preact_resnet/preact_resnet.json`` for ``preact_resnet.py``): an object whose
keys are weight ids and whose values are ``PretrainedCfg.to_dict()``. The family
registers the file when it registers its models; the file is parsed on first use.
``python -m training.release`` writes these files with ``write_cfg``; nothing executes
them.

The model registry (``keras_gated.registry.models``) also tells this module the family
of every architecture it registers (``register_architecture``), so that a planned
weight's message names its family's released weights and a load recognises weights saved
from another registered architecture, without this package looking up the model registry.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from keras_gated.weights.config import PretrainedCfg

_FILES: list[Path] = []
_CFGS: dict[str, PretrainedCfg] = {}
_PARSED: set[Path] = set()
_SOURCES: dict[str, Path] = {}  # weight id -> the data file it was read from
_FAMILIES: dict[str, str] = {}  # registered architecture -> its family


def register_cfg_file(path: str | os.PathLike) -> None:
    """Make the configs of a family's data file known (parsed on first use; a file
    registered twice is read once)."""
    path = Path(path).resolve()
    if path not in _FILES:
        _FILES.append(path)


def read_cfg_file(path: str | os.PathLike) -> list[PretrainedCfg]:
    """The configs of one data file; a malformed file is a ValueError naming it."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except ValueError as error:
        raise ValueError(f"{path} is not valid JSON ({error}); fix or regenerate it.") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold an object of weight id -> config.")
    cfgs = []
    for weight_id, entry in data.items():
        try:
            cfgs.append(PretrainedCfg.from_dict(weight_id, entry))
        except TypeError as error:
            raise ValueError(f"{path}: entry {weight_id!r}: {error}.") from None
    return cfgs


def write_cfg(cfg: PretrainedCfg, path: str | os.PathLike) -> None:
    """Add ``cfg`` to the data file ``path`` (created if new), replacing an entry of the
    same weight id; entries stay sorted by weight id. Registered configs are updated."""
    path = Path(path)
    data = json.loads(path.read_text()) if path.is_file() else {}
    data[cfg.weight_id] = cfg.to_dict()
    path.write_text(dumps_cfgs(data))
    if path.resolve() in _PARSED:
        _CFGS[cfg.weight_id] = cfg


def dumps_cfgs(data: dict) -> str:
    """A data file's text: sorted entries, indented, lists of scalars on one line."""
    text = json.dumps(dict(sorted(data.items())), indent=2, ensure_ascii=False)
    flat = re.compile(r"\[\s*\n\s*([^\[\]{}]*?)\s*\n\s*\]")
    return flat.sub(lambda m: "[" + ", ".join(re.split(r",\s*\n\s*", m.group(1))) + "]", text) + "\n"


def _registry() -> dict[str, PretrainedCfg]:
    """Every known config, the registered files parsed on first use."""
    for path in list(_FILES):
        if path not in _PARSED:
            _PARSED.add(path)
            for cfg in read_cfg_file(path):
                _CFGS.setdefault(cfg.weight_id, cfg)
                _SOURCES.setdefault(cfg.weight_id, path)
    return _CFGS


def register_pretrained(cfg: PretrainedCfg, *, overwrite: bool = False) -> None:
    """Make ``weights=cfg.tag`` resolve for ``cfg.arch`` (tests and forks may add
    configs; released ones come from the families' data files)."""
    if not isinstance(cfg, PretrainedCfg):
        raise ValueError(f"Expected a PretrainedCfg, got {type(cfg).__name__}.")
    registry = _registry()
    if cfg.weight_id in registry and not overwrite:
        raise ValueError(
            f"Weights {cfg.weight_id!r} are already registered; pass overwrite=True to "
            "replace them."
        )
    registry[cfg.weight_id] = cfg


def unregister_pretrained(weight_id: str) -> PretrainedCfg:
    """Remove a registered weight id and return its config."""
    get_pretrained_cfg(weight_id)
    return _registry().pop(weight_id)


@contextlib.contextmanager
def pretrained_cfgs_overlay(*cfgs: PretrainedCfg) -> Iterator[None]:
    """Register ``cfgs`` (replacing same-id ones) for the duration of a ``with`` block."""
    registry = _registry()
    saved = dict(registry)
    try:
        for cfg in cfgs:
            register_pretrained(cfg, overwrite=True)
        yield
    finally:
        registry.clear()
        registry.update(saved)


def list_pretrained(pattern: str | None = None, *, planned: bool = False) -> list[str]:
    """The weight ids (``name.tag``) of the released weights (with ``planned``: of the
    planned ones instead), optionally fnmatch-ed."""
    ids = sorted(w for w, cfg in _registry().items() if cfg.released != planned)
    return [i for i in ids if pattern is None or fnmatch.fnmatch(i, pattern)]


def get_pretrained_cfg(weight_id: str) -> PretrainedCfg:
    """The config of a released or planned weight, e.g. ``"gresnet20.cifar10"``."""
    registry = _registry()
    if weight_id not in registry:
        released = ", ".join(list_pretrained()) or "none yet"
        raise ValueError(f"No released weights {weight_id!r}. Released: {released}.")
    return registry[weight_id]


def find_pretrained_cfg(arch: str, tag: str) -> PretrainedCfg | None:
    """The config of ``arch.tag`` (released or planned), None if there is none."""
    return _registry().get(f"{arch}.{tag}")


def cfg_source_file(weight_id: str) -> Path | None:
    """The data file a registered config was read from (None: registered in code)."""
    _registry()
    return _SOURCES.get(weight_id)


def tags_for(arch: str) -> list[str]:
    """The data tags of the released weights of an architecture (``["cifar10"]``)."""
    return sorted(c.tag for c in _registry().values() if c.arch == arch and c.released)


def register_architecture(arch: str, family: str) -> None:
    """Record that ``arch`` is a registered architecture of ``family`` (the model
    registry calls this for each entry it adds)."""
    _FAMILIES[arch] = family


def unregister_architecture(arch: str) -> None:
    """Forget a registered architecture (its model entry was removed)."""
    _FAMILIES.pop(arch, None)


def is_architecture(name: str) -> bool:
    """Whether ``name`` is a registered architecture (a model name)."""
    return name in _FAMILIES


def family_of(arch: str) -> str:
    """The family of a registered architecture (``gresnet20`` -> ``gresnet``); a
    ValueError for a name that is not registered."""
    try:
        return _FAMILIES[arch]
    except KeyError:
        raise ValueError(
            f"Unknown model name {arch!r}: `keras_gated.list_models()` (or "
            "`keras-gated list`) shows every registered name."
        ) from None
