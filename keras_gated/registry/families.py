"""A family's one declaration, ``Family``, and what the rest of the package reads of it.

A family is one folder, ``keras_gated/models/<family>/``, whose ``__init__.py`` declares
it once with ``declare(Family(...))``: its public constructors, the registry names they
build (``Models``: one per registry family, e.g. the ungated and the gated nets), its
default training recipe, the data file of its released-weight configs, its papers and
what gating, feature extraction and conversion need to know. ``declare`` registers the
models, the data file and the declaration; the public API (``keras_gated.models``'s
names, ``keras_gated.__all__``), ``keras_gated/catalog.json`` and the model table of
``docs/models.md`` are derived from the declarations (``python -m
keras_gated.models.generate`` writes the files).

Gating (``keras_gated.gating``), citations (``keras_gated.release.citations``),
conversion (``keras_gated.convert``), feature extraction (``keras_gated.features``) and
the analyses read the declarations, or ask the blocks themselves
(``keras_gated.layers.Block``), instead of keeping tables of names.

This module imports only the registry (which imports no Keras), so that anything can
read the declarations; ``specs()`` imports ``keras_gated.models`` (every built-in family)
on first use.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keras_gated.registry.models import ModelEntry, register_entries, unregister_family
from keras_gated.weights.registered import register_cfg_file


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
class Models:
    """The registry names one constructor builds: ``constructor(**config)`` for each config,
    registered as ``arch_name(**config)``.

    Attributes:
        family: the registry family (``"gresnet"``), shown by ``keras-gated info``; a
            folder with ungated and gated nets declares one ``Models`` for each.
        constructor: the public constructor the configs are passed to.
        arch_name: ``arch_name(**config)`` is the registered name. The family's builder
            names its models with the same function (``build_application(arch=...)``),
            so a built model, its registry entry and its weight ids (``name.tag``)
            always agree.
        configs: the constructor arguments of each registered model.
        description: one line per model; a string is formatted with the config
            (``"Gated ResNet-{depth}"``), a function is called with it.
        default_recipe: the recipe ``python -m training.train`` uses without
            ``--recipe``; None: the family's.
        slow: True (or a function of the config returning True) for models too heavy
            to build in the default test run; the tests over ``list_models()`` mark them
            slow.
        variant_suffix: a regular expression for what ``arch_name`` adds to the name when
            the constructor is called with arguments beyond a config (the FC nets: another
            width, ``_w100``; pre-activation blocks, ``_preact``); "" where it adds none.
            A saved model named so is evaluated as the registered model.
    """

    family: str
    constructor: Callable[..., Any]
    arch_name: Callable[..., str]
    configs: Sequence[Mapping[str, Any]] = ({},)
    description: str | Callable[..., str] = ""
    default_recipe: str | None = None
    slow: bool | Callable[..., bool] = False
    variant_suffix: str = ""


@dataclass(frozen=True)
class Family:
    """A family's one declaration (its folder's ``__init__.py``: ``declare(Family(...))``).

    Attributes:
        name: the family's folder (``"preact_resnet"``).
        constructors: its public constructors, exported as ``keras_gated.<name>`` and
            ``keras_gated.models.<name>`` under their ``__name__``.
        models: the registry names it declares, one ``Models`` per registry family.
        default_recipe: the recipe of ``keras_gated.training.recipes`` that trains its models
            without ``--recipe`` (a ``Models`` may name its own).
        released: the data file of its released-weight configs (``<family>.json`` in
            the folder, written by ``python -m training.release --register``), or None.
        register: registers models the declaration cannot list (the compressed nets,
            read from their own data file), called by ``declare`` after ``models``.
        registry_family_names: the registry families ``register`` fills (those of
            ``models`` are known already).
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
    constructors: tuple[Callable[..., Any], ...] = ()
    models: tuple[Models, ...] = ()
    default_recipe: str | None = None
    released: Path | None = None
    register: Callable[[], Any] | None = None
    registry_family_names: tuple[str, ...] = ()
    twins: tuple[tuple[str, str], ...] = ()
    citations: tuple[tuple[str, tuple[str, ...]], ...] = ()
    papers: Mapping[str, str] = field(default_factory=dict)
    residual_merge: Callable[[Any], bool] | None = None
    stem_feature: str | None = None
    final_feature: str | None = None
    converters: tuple[Converter, ...] = ()
    parameter_counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def registry_families(self) -> tuple[str, ...]:
        """The registry families it declares (``("preact_resnet", "gresnet")``)."""
        names = [m.family for m in self.models] + list(self.registry_family_names)
        return tuple(dict.fromkeys(names))

    @property
    def public_names(self) -> list[str]:
        """The names its public constructors are exported under."""
        return [constructor.__name__ for constructor in self.constructors]


# The declaration was called FamilySpec when it held only what other modules read.
FamilySpec = Family

_SPECS: dict[str, Family] = {}
BUILT_IN_FAMILIES = "keras_gated.models"


def declare(family: Family) -> Family:
    """Make ``family`` known: register its models and its released-weight configs, and
    its declaration (which gating, citations, conversion and features read). A
    family's ``__init__.py`` calls this once; returns ``family``."""
    known = _SPECS.get(family.name)
    if known is not None:
        if known == family:
            return family
        raise ValueError(f"A family named {family.name!r} is already declared.")
    for models in family.models:
        register_entries(_entries(models, family.default_recipe))
    if family.released is not None and Path(family.released).is_file():
        register_cfg_file(Path(family.released))
    _SPECS[family.name] = family
    if family.register is not None:
        family.register()
    return family


def _entries(models: Models, default_recipe: str | None) -> list[ModelEntry]:
    """The registry entries of ``models``: one per config."""
    entries = []
    for config in models.configs:
        config = dict(config)
        description = models.description
        text = description(**config) if callable(description) else description.format(**config)
        slow = models.slow(**config) if callable(models.slow) else models.slow
        entries.append(ModelEntry.of(
            models.arch_name(**config), models.constructor, config, family=models.family,
            description=text, default_recipe=models.default_recipe or default_recipe,
            slow=bool(slow), variant_suffix=models.variant_suffix,
        ))
    return entries


def undeclare(name: str) -> Family:
    """Forget the family ``name`` and unregister its models (tests that declare
    throw-away families)."""
    family = _SPECS.pop(name)
    for registry_family in family.registry_families:
        unregister_family(registry_family)
    return family


def declared() -> list[Family]:
    """The families declared so far, in declaration order (imports nothing)."""
    return list(_SPECS.values())


def public_constructors() -> dict[str, Callable[..., Any]]:
    """Public name -> constructor, over every declared family (imports them)."""
    return {name: constructor for family in specs()
            for name, constructor in zip(family.public_names, family.constructors)}


def specs() -> list[Family]:
    """Every declared family, the built-in ones included, in declaration order."""
    # By name: the families import this module, so it cannot import them.
    importlib.import_module(BUILT_IN_FAMILIES)
    return list(_SPECS.values())


def get_spec(name: str) -> Family:
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
