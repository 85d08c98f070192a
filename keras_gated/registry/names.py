"""Registered names: listing them (timm's ``list_models``) and the tag that
``pretrained=True`` loads. Imports no Keras (``keras-gated list`` starts no backend).

    >>> import keras_gated
    >>> keras_gated.list_models("gresnet[0-9]*")
    ['gresnet1001', 'gresnet110', 'gresnet164', 'gresnet20', ...]
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence

from keras_gated.registry.models import model_names
from keras_gated.weights.registered import list_pretrained, tags_for


def _natural_key(name: str):
    """Sort ``gresnet20`` before ``gresnet110`` (numbers compared as numbers)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


Patterns = str | Sequence[str] | None


def _as_patterns(patterns: Patterns) -> list[str]:
    """A pattern or a list of them as a list (empty for None)."""
    if patterns is None:
        return []
    return [patterns] if isinstance(patterns, str) else list(patterns)


def list_models(
    filter: Patterns = None,  # noqa: A002 - timm's argument name
    pretrained: bool = False,
    exclude_filters: Patterns = None,
) -> list[str]:
    """Registered model names matching ``filter`` (all when None), timm-style.

    Args:
        filter: an fnmatch pattern (``"gresnet*"``) or a list of them: a name matching
            any of them is kept. Also accepted by position, as before.
        pretrained: list the weight ids (``name.tag``) of released weights instead.
        exclude_filters: a pattern or a list of them: names matching any are dropped.
    """
    if pretrained:
        names = list_pretrained()
    else:
        names = model_names()
    include = _as_patterns(filter)
    if include:
        names = [n for n in names if any(fnmatch.fnmatch(n, p) for p in include)]
    exclude = _as_patterns(exclude_filters)
    names = [n for n in names if not any(fnmatch.fnmatch(n, p) for p in exclude)]
    return sorted(names, key=_natural_key)


def default_pretrained_tag(arch: str) -> str:
    """The tag ``pretrained=True`` loads: the first released tag of ``arch``."""
    tags = tags_for(arch)
    if not tags:
        released = ", ".join(list_pretrained()) or "none yet"
        raise ValueError(
            f"pretrained=True: no weights are released for {arch!r}. Released weight ids: "
            f"{released}."
        )
    return tags[0]
