"""Weights from the reference implementations: PyTorch state dicts into keras-gated models.

Each family declares the layouts its models take (``Family.converters``, the key
maps in the family's folder, ``keras_gated/models/<family>/convert.py``, written with
``keras_gated.state_dicts``); this module reads a source, checks it against the target
key by key and assigns it. The built-in
layouts, each the parameter names of the code a family follows:

* ``"torchvision"``: torchvision's (and timm's) ``resnet50`` — ``conv1``, ``bn1``,
  ``layer1.0.conv1`` … ``layer4.2.bn3``, ``layerN.0.downsample.{0,1}``, ``fc`` —
  into ``ResNet50`` or ``GResNet50``.
* ``"wrn"``: the functional parameter dict of the Wide ResNet authors' PyTorch code —
  ``conv0``, ``group0.block0.{bn0,conv0,bn1,conv1,convdim}``, ``bn``, ``fc`` — into
  ``WideResNet(n, widen_factor)`` or ``GWideResNet(n, widen_factor)``.
* ``"fbresnet"``: a Torch7 pre-activation CIFAR ResNet (fb.resnet.torch's
  ``preresnet.lua`` for basic units, He's ``resnet-pre-act.lua`` for bottleneck units)
  with its ``nn.Sequential`` tree flattened into index paths, as a PyTorch state dict
  of that tree names it: ``0.weight`` (stem), ``1.0.0.weight`` (stage 1, unit 1, its
  shared BN), ``1.0.2.0.0.weight`` (that unit's first convolution), ``1.1.0.0.0.weight``
  (unit 2's BN), ``4.*`` (final BN), ``8.{weight,bias}`` (the classifier) — into
  ``PreActResNet(depth)`` or ``GResNet(depth)``.

Every source key is consumed exactly once (BN ``num_batches_tracked`` counters carry no
weight and are consumed without a Keras counterpart); a missing, unknown or mis-shaped
key is an error that names it, raised before any weight is assigned. Convolutions go from
OIHW to HWIO, dense layers from (out, in) to (in, out). A gate's k is not part of any
source: it stays at its start value (1, so g(k) = 1 and a gated target computes what the
source computes). BN epsilon comes from the source when it is a module; a state dict
carries none, and every one of these codes uses 1e-5.

torch is needed only to read ``.pth``/``.pt`` files; ``.safetensors`` files and in-memory
dicts of arrays load without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import keras
import numpy as np

from keras_gated.files import check_new_folder, new_output_folder
from keras_gated.models.factory import create_model
from keras_gated.registry import get_model_entry
from keras_gated.registry.families import Converter, converters
from keras_gated.state_dicts import (  # noqa: F401  (ConversionError is this module's error too)
    IGNORED_SUFFIXES,
    ConversionError,
    Target,
    check_tensor,
    read_source,
)


def source_layouts() -> dict[str, Converter]:
    """Every source layout the families declare, by name."""
    return converters()


def _converter(source: str) -> Converter:
    layouts = source_layouts()
    if source not in layouts:
        raise ConversionError(f"Unknown source layout {source!r}; choose one of {', '.join(layouts)}.")
    return layouts[source]


def __getattr__(name: str):
    """The tables this module kept before the families declared their layouts."""
    tables = {
        "SOURCES": lambda: tuple(source_layouts()),
        "SOURCE_ARCHS": lambda: {s: c.archs for s, c in source_layouts().items()},
        "KEY_MAPS": lambda: {s: c.keys for s, c in source_layouts().items()},
        **{f"{s}_keys": (lambda s=s: source_layouts()[s].keys)
           for s in ("torchvision", "wrn", "fbresnet")},
    }
    if name not in tables:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _WARNED:
        import warnings

        _WARNED.add(name)
        warnings.warn(
            f"keras_gated.convert.{name} is deprecated: the families declare their layouts "
            "(keras_gated.convert.source_layouts()).", DeprecationWarning, stacklevel=2)
    return tables[name]()


_WARNED: set[str] = set()


# -- loading ---------------------------------------------------------------------------
def load_state_dict(
    model: keras.Model,
    state_dict: str | os.PathLike | Mapping[str, Any] | Any,
    source: str,
) -> keras.Model:
    """Copy a reference implementation's weights into ``model`` (built by keras-gated).

    Strict: every key of the source fills exactly one variable and every variable of the
    target that the source layout has is filled. Nothing is assigned unless all keys fit.

    Args:
        model: a keras-gated model of the family the layout feeds.
        state_dict: a ``.pth``/``.pt``/``.safetensors`` path, a mapping of names to
            arrays (NumPy or torch), or a torch module.
        source: ``"torchvision"``, ``"wrn"`` or ``"fbresnet"``.
    """
    arrays, epsilon = read_source(state_dict)
    return _load_arrays(model, arrays, epsilon, source, _origin(state_dict, source))


def _origin(state_dict: Any, source: str) -> str:
    """How messages name the source: its file, else its layout."""
    if isinstance(state_dict, (str, os.PathLike)):
        return f"the {source} state dict {state_dict}"
    return f"the {source} state dict"


def _load_arrays(model: keras.Model, arrays: Mapping[str, np.ndarray], epsilon: float,
                 source: str, origin: str | None = None) -> keras.Model:
    origin = origin or f"the {source} state dict"
    plan: dict[str, Target] = {}
    for key, target in _converter(source).keys(model):
        if key in plan:  # a bug in a key map, never the user's
            raise AssertionError(f"key {key!r} is mapped twice")
        plan[key] = target
    unknown = [k for k in arrays if k not in plan and not k.endswith(IGNORED_SUFFIXES)]
    if unknown:
        raise ConversionError(
            f"Unknown key {unknown[0]!r} in {origin} "
            f"({len(unknown)} unknown in all), which has no counterpart in {model.name}: "
            "check the architecture (depth, width, shortcut type) and the source layout."
        )
    missing = [k for k in plan if k not in arrays]
    if missing:
        raise ConversionError(
            f"Missing key {missing[0]!r} in {origin} ({len(missing)} missing "
            f"in all): {model.name} needs it."
        )
    converted = {}
    for key, target in plan.items():
        check_tensor(key, arrays[key], origin)
        value = target.transform(arrays[key])
        expected = tuple(target.variable.shape)
        if tuple(value.shape) != expected:
            raise ConversionError(
                f"Key {key!r} has shape {tuple(arrays[key].shape)}, which gives "
                f"{tuple(value.shape)} but {target.variable.path} needs {expected}."
            )
        converted[key] = value
    for key, target in plan.items():
        target.variable.assign(converted[key].astype(target.variable.dtype))
    for layer in _all_layers(model):
        if isinstance(layer, keras.layers.BatchNormalization):
            layer.epsilon = epsilon
    return model


def _all_layers(model: keras.Model) -> Iterator[keras.layers.Layer]:
    for layer in model._flatten_layers(include_self=False, recursive=True):
        yield layer


def convert(
    arch: str,
    state_dict: str | os.PathLike | Mapping[str, Any] | Any,
    source: str,
    *,
    out: str | os.PathLike | None = None,
    **model_kwargs: Any,
) -> keras.Model:
    """Build registry model ``arch`` and load a reference state dict into it.

    ``convert("resnet50", "resnet50.pth", "torchvision")``,
    ``convert("wrn_16_2", params, "wrn")``, ``convert("preactresnet110", sd, "fbresnet")``.
    Gated targets (``gresnet50``, ``gwrn_…``, ``gresnet…``) take the ungated weights with
    every k = 1. The classifier size comes from the source; for ``fbresnet`` the shortcut
    type (projection or zero-pad) too. With ``out``, the model is written as a Keras save
    folder that ``weights=out`` loads; nothing is written if the conversion fails.
    """
    layout = _converter(source)
    get_model_entry(arch)  # an unknown name fails here, with the registry's message
    if out is not None:  # before any work: a new or empty folder outside the zoo
        check_new_folder(out)
    if not arch.startswith(layout.archs):
        raise ConversionError(
            f"The {source} layout feeds {', '.join(a + '*' for a in layout.archs)} "
            f"models, not {arch!r}."
        )
    arrays, epsilon = read_source(state_dict)
    if layout.model_kwargs is not None:
        for key, value in layout.model_kwargs(arrays).items():
            model_kwargs.setdefault(key, value)
    model = create_model(arch, **model_kwargs)
    _load_arrays(model, arrays, epsilon, source, _origin(state_dict, source))
    if out is not None:
        save_folder(model, out)
    return model


def save_folder(model: keras.Model, out: str | os.PathLike) -> Path:
    """Write ``model`` as a Keras save folder (config.json, metadata.json, model.weights.h5).

    The folder appears whole or not at all: it is written next to ``out`` and renamed
    (``keras_gated.files.new_output_folder``); an ``out`` that holds files or is a link is
    refused (``ValueError``).
    """
    out = Path(out)
    # A new or empty folder outside the zoo (never a link), claimed while it is written,
    # renamed into place.
    with new_output_folder(out) as staging:
        keras.saving.save_model(model, staging / "model", zipped=False)
        for item in (staging / "model").iterdir():
            os.replace(item, staging / item.name)
        (staging / "model").rmdir()
    return out
