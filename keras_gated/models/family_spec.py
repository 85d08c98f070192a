"""What a family declares about itself, read by the rest of the package.

A family is one folder, ``keras_gated/models/<family>/``: its constructors (which
register their names), its released-weight configs (JSON beside the constructors'
module), the converter from its reference implementation, and a ``FamilySpec``
registered by its ``spec.py``. Gating (``keras_gated.gating``), citations
(``keras_gated.release.citations``), conversion (``keras_gated.convert``), feature
extraction (``keras_gated.features``) and the analyses read these specs, or ask the
blocks themselves (``keras_gated.layers.Block``), instead of keeping tables of names.

This module imports nothing from the package, so that anything can read the specs;
``specs()`` imports ``keras_gated.models`` (every built-in family) on first use.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Converter:
    """Weights of a reference implementation into the family's models.

    Attributes:
        source: the layout's name (``convert(..., source=...)``), e.g. ``"torchvision"``.
        archs: prefixes of the registry names the layout feeds (``("resnet50",
            "gresnet50")``).
        keys: ``keys(model)`` yields ``(source key, keras_gated.convert.Target)`` for
            every variable the source fills.
        model_kwargs: ``model_kwargs(arrays)`` gives the architecture arguments the state
            dict decides (``classes``, a shortcut type); the caller's arguments win.
        description: one line for the command line's help.
    """

    source: str
    archs: tuple[str, ...]
    keys: Callable[[Any], Iterator[tuple[str, Any]]]
    model_kwargs: Callable[[Mapping[str, Any]], dict] | None = None
    description: str = ""


@dataclass(frozen=True)
class FamilySpec:
    """A family's declaration.

    Attributes:
        name: the family's folder (``"preact_resnet"``).
        registry_families: the ``register_family`` names it registers
            (``("preact_resnet", "gresnet")``).
        twins: ``(ungated prefix, gated prefix)`` of registry names: ``gate()`` names the
            gated twin of ``preactresnet20`` ``gresnet20``.
        citations: ``(fnmatch pattern of registry names, BibTeX keys)``; where patterns
            of several families match a name, the most specific (longest) one applies.
        papers: BibTeX entries of keys that ``keras_gated.release.citations.PAPERS``
            does not hold yet.
        residual_merge: for nets whose residual blocks end in a plain ``Add`` merge
            (``Add([branch, shortcut])``, the fully-connected ResNets), whether a layer is
            such a merge; ``gate()`` turns it into a Residual Gate.
        stem_feature, final_feature: the layer whose output is the stem's feature map
            (reduction 2 on ImageNet), and the layer that replaces the last stage's
            block as its feature (the final BN-ReLU of pre-activation nets), if any.
        converters: the reference layouts whose weights the family's models take.
        parameter_counts: registry name -> trainable parameters (10 classes; 1000 for
            ImageNet), from the paper or a closed form (never read off a built model);
            ``tests/models/test_parameter_counts.py`` checks them.
    """

    name: str
    registry_families: tuple[str, ...] = ()
    twins: tuple[tuple[str, str], ...] = ()
    citations: tuple[tuple[str, tuple[str, ...]], ...] = ()
    papers: Mapping[str, str] = field(default_factory=dict)
    residual_merge: Callable[[Any], bool] | None = None
    stem_feature: str | None = None
    final_feature: str | None = None
    converters: tuple[Converter, ...] = ()
    parameter_counts: Mapping[str, int] = field(default_factory=dict)


_SPECS: dict[str, FamilySpec] = {}
BUILT_IN_FAMILIES = "keras_gated.models"


def register_spec(spec: FamilySpec) -> FamilySpec:
    """Make ``spec`` known (a family's ``spec.py`` calls this); returns it."""
    if spec.name in _SPECS and _SPECS[spec.name] != spec:
        raise ValueError(f"A family named {spec.name!r} is already declared.")
    _SPECS[spec.name] = spec
    return spec


def unregister_spec(name: str) -> FamilySpec:
    """Forget the family ``name`` (tests that declare throw-away families)."""
    return _SPECS.pop(name)


def specs() -> list[FamilySpec]:
    """Every declared family, the built-in ones included, in declaration order."""
    # By name: the families import this module, so it cannot import them.
    importlib.import_module(BUILT_IN_FAMILIES)
    return list(_SPECS.values())


def get_spec(name: str) -> FamilySpec:
    """The spec of the family folder ``name``."""
    for spec in specs():
        if spec.name == name:
            return spec
    raise ValueError(f"No family {name!r}; declared: {', '.join(s.name for s in specs())}.")


def _specificity(pattern: str) -> int:
    return len(pattern) - sum(pattern.count(c) for c in "*?[]")


def citation_keys(arch: str) -> list[str]:
    """The BibTeX keys the families declare for ``arch`` (most specific pattern)."""
    matches = [(pattern, keys) for spec in specs() for pattern, keys in spec.citations
               if fnmatch.fnmatch(arch, pattern)]
    if not matches:
        return []
    return list(max(matches, key=lambda match: _specificity(match[0]))[1])


def papers() -> dict[str, str]:
    """BibTeX entries the families add, by key."""
    return {key: entry for spec in specs() for key, entry in spec.papers.items()}


def twin_name(name: str) -> str:
    """The gated twin's name of ``name``: the longest declared ungated prefix replaced by
    its gated one (``preactresnet20`` -> ``gresnet20``); else ``name_gated``."""
    matches = [(plain, gated) for spec in specs() for plain, gated in spec.twins
               if name.startswith(plain)]
    if not matches:
        return f"{name}_gated"
    plain, gated = max(matches, key=lambda twin: len(twin[0]))
    return gated + name[len(plain):]


def is_residual_merge(layer: Any) -> bool:
    """Whether a family declares ``layer`` a residual ``Add`` merge (``gate()`` gates it)."""
    return any(spec.residual_merge is not None and spec.residual_merge(layer)
               for spec in specs())


def converters() -> dict[str, Converter]:
    """Source layout name -> its converter, over every family."""
    return {c.source: c for spec in specs() for c in spec.converters}


def feature_layer_names() -> tuple[set[str], set[str]]:
    """(stem feature layer names, final feature layer names) the families declare."""
    every = specs()
    return ({s.stem_feature for s in every if s.stem_feature},
            {s.final_feature for s in every if s.final_feature})


def parameter_counts() -> dict[str, int]:
    """Registry name -> trainable parameters, as the families declare them."""
    return {name: count for spec in specs() for name, count in spec.parameter_counts.items()}
