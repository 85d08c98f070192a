"""Deprecated: the one Hub module is ``keras_gated.pretrained.hub`` (``publish``, ``pull``),
and the zoo-folder functions are in ``keras_gated.pretrained.zoo_folder``.

``keras_gated.hub.save_zoo_folder`` and the rest keep working, with one
``DeprecationWarning`` per name naming the new place.
"""

from __future__ import annotations

import importlib
import warnings

_MOVED = {
    "save_zoo_folder": "keras_gated.pretrained.zoo_folder",
    "model_card": "keras_gated.pretrained.zoo_folder",
    "check_zoo_folder": "keras_gated.pretrained.zoo_folder",
    "pretrained_cfg_from_folder": "keras_gated.pretrained.zoo_folder",
    "set_card_note": "keras_gated.pretrained.zoo_folder",
    "set_caveat": "keras_gated.pretrained.zoo_folder",
    "publish": "keras_gated.pretrained.hub",
    "pull": "keras_gated.pretrained.hub",
    "HubAuthError": "keras_gated.pretrained.hub",
    "HubDownloadError": "keras_gated.pretrained.hub",
}


def __getattr__(name: str) -> object:
    if name not in _MOVED:
        raise AttributeError(f"module 'keras_gated.hub' has no attribute {name!r}")
    module = _MOVED[name]
    warnings.warn(
        f"keras_gated.hub.{name} is deprecated: use {module}.{name}.",
        DeprecationWarning,
        stacklevel=2,
    )
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups find it directly: the warning comes once
    return value


def __dir__() -> list[str]:
    return sorted(_MOVED)
