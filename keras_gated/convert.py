"""Weights from the reference implementations: PyTorch state dicts into keras-gated models.

Three source layouts, each the parameter names of the code a family follows:

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
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keras
import numpy as np

SOURCES = ("torchvision", "wrn", "fbresnet")
DEFAULT_BN_EPSILON = 1e-5
IGNORED_SUFFIXES = ("num_batches_tracked",)

# Which registry families each source layout can feed.
SOURCE_ARCHS = {
    "torchvision": ("resnet50", "gresnet50"),
    "wrn": ("wrn_", "gwrn_"),
    "fbresnet": ("preactresnet", "gresnet"),
}


class ConversionError(ValueError):
    """A state dict does not fit the target model; the message names the key."""


@dataclass(frozen=True)
class Target:
    """One Keras variable a source key is written to, and how the array is laid out."""

    variable: Any
    transform: Callable[[np.ndarray], np.ndarray]


def _same(array: np.ndarray) -> np.ndarray:
    return array


def _conv(array: np.ndarray) -> np.ndarray:
    return np.transpose(array, (2, 3, 1, 0))  # OIHW -> HWIO


def _dense(array: np.ndarray) -> np.ndarray:
    return np.transpose(array)  # (out, in) -> (in, out)


# -- reading a source -----------------------------------------------------------------
def _to_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _module_bn_epsilon(module: Any) -> float | None:
    eps = {float(m.eps) for m in module.modules() if hasattr(m, "eps") and hasattr(m, "running_var")}
    if len(eps) > 1:
        raise ConversionError(f"The source's batch norms use several epsilons {sorted(eps)}; expected one.")
    return eps.pop() if eps else None


def read_source(source: str | os.PathLike | Mapping[str, Any] | Any) -> tuple[dict[str, np.ndarray], float]:
    """(state dict as NumPy arrays, BN epsilon) of a file, a dict of arrays or a torch module."""
    epsilon = DEFAULT_BN_EPSILON
    if hasattr(source, "state_dict") and callable(source.state_dict):
        epsilon = _module_bn_epsilon(source) or epsilon
        source = source.state_dict()
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"No state-dict file at {path}: pass a .pth, .pt or .safetensors file.")
        if path.suffix == ".safetensors":
            from safetensors.numpy import load_file

            source = load_file(str(path))
        else:
            try:
                import torch
            except ImportError as error:
                raise ImportError(
                    f"Reading {path.name} needs PyTorch (pip install 'keras-gated[torch]'); "
                    "a .safetensors copy of the state dict loads without it."
                ) from error
            loaded = torch.load(str(path), map_location="cpu", weights_only=True)
            if isinstance(loaded, Mapping) and "state_dict" in loaded and isinstance(loaded["state_dict"], Mapping):
                loaded = loaded["state_dict"]  # a training checkpoint that wraps the weights
            source = loaded
    if not isinstance(source, Mapping):
        raise ConversionError(
            f"Expected a state dict (a mapping of names to arrays), got {type(source).__name__}."
        )
    arrays = {}
    for key, value in source.items():
        name = key[len("module."):] if key.startswith("module.") else key  # DataParallel prefix
        arrays[name] = _to_numpy(value)
    return arrays, epsilon


# -- key maps: source key -> (Keras variable, layout transform) ------------------------
def _bn(prefix: str, layer) -> Iterator[tuple[str, Target]]:
    for key, variable in zip(("weight", "bias", "running_mean", "running_var"),
                             (layer.gamma, layer.beta, layer.moving_mean, layer.moving_variance)):
        yield f"{prefix}.{key}", Target(variable, _same)


def _conv_kernel(key: str, layer) -> Iterator[tuple[str, Target]]:
    if layer.use_bias:
        raise ConversionError(
            f"{layer.path} has a bias, which no reference layout has (the reference nets "
            "all use batch norm): convert into a net built with batch_norm=True."
        )
    yield key, Target(layer.kernel, _conv)


def _head(prefix: str, model: keras.Model) -> Iterator[tuple[str, Target]]:
    dense = _layer(model, "predictions", required=False)
    if dense is not None:
        yield f"{prefix}.weight", Target(dense.kernel, _dense)
        yield f"{prefix}.bias", Target(dense.bias, _same)


def _layer(model: keras.Model, name: str, required: bool = True):
    try:
        return model.get_layer(name)
    except ValueError:
        if required:
            raise ConversionError(f"The target model has no layer {name!r}; is it the right architecture?") from None
        return None


def _units(model: keras.Model, prefix: str = "stage") -> list[tuple[int, int, Any]]:
    """(stage, unit, layer) of every ``stage{s}_unit{u}`` block, in order."""
    found = []
    for layer in model.layers:
        if layer.name.startswith(prefix) and "_unit" in layer.name:
            stage, unit = layer.name[len(prefix):].split("_unit")
            found.append((int(stage), int(unit), layer))
    return sorted(found, key=lambda item: item[:2])


def torchvision_keys(model: keras.Model) -> Iterator[tuple[str, Target]]:
    """torchvision / timm ``resnet50`` names of ``ResNet50`` / ``GResNet50``."""
    yield from _conv_kernel("conv1.weight", _layer(model, "stem_conv"))
    yield from _bn("bn1", _layer(model, "stem_bn"))
    for layer in model.layers:
        if not layer.name.startswith("conv") or "_block" not in layer.name:
            continue
        stage, block = layer.name[len("conv"):].split("_block")
        prefix = f"layer{int(stage) - 1}.{int(block) - 1}"
        for i, (conv, bn) in enumerate(zip(layer.convs, layer.norms), start=1):
            yield f"{prefix}.conv{i}.weight", Target(conv.kernel, _conv)
            yield from _bn(f"{prefix}.bn{i}", bn)
        if layer.projection is not None:
            yield f"{prefix}.downsample.0.weight", Target(layer.projection.kernel, _conv)
            yield from _bn(f"{prefix}.downsample.1", layer.projection_bn)
    yield from _head("fc", model)


def wrn_keys(model: keras.Model) -> Iterator[tuple[str, Target]]:
    """The WRN authors' functional names of ``WideResNet`` / ``GWideResNet``."""
    yield from _conv_kernel("conv0", _layer(model, "stem_conv"))
    for stage, unit, layer in _units(model):
        prefix = f"group{stage - 1}.block{unit - 1}"
        for i, (conv, bn) in enumerate(zip(layer.convs, layer.norms)):
            yield from _bn(f"{prefix}.bn{i}", bn)
            yield from _conv_kernel(f"{prefix}.conv{i}", conv)
        if layer.projection is not None:
            yield from _conv_kernel(f"{prefix}.convdim", layer.projection)
    yield from _bn("bn", _layer(model, "final_bn"))
    yield from _head("fc", model)


def fbresnet_keys(model: keras.Model) -> Iterator[tuple[str, Target]]:
    """Torch7 ``nn.Sequential`` index paths of ``PreActResNet`` / ``GResNet``.

    A unit that shares its pre-activation is ``Sequential(BN, ReLU, ConcatTable(branch,
    shortcut), CAddTable)`` with branch ``(conv, BN, ReLU, conv[, BN, ReLU, conv])`` and a
    projection shortcut ``Sequential(conv)``; any other unit is ``Sequential(ConcatTable(
    branch, Identity), CAddTable)`` with branch ``(BN, ReLU, conv, BN, ReLU, conv, ...)``.
    """
    yield from _conv_kernel("0.weight", _layer(model, "stem_conv"))
    units = _units(model)
    for stage, unit, layer in units:
        prefix = f"{stage}.{unit - 1}"
        shared = layer.changes_shape or layer.share_preactivation
        if shared:
            yield from _bn(f"{prefix}.0", layer.norms[0])
            branch = f"{prefix}.2.0"
            steps = []  # conv, BN, ReLU, conv, ...
            for i, conv in enumerate(layer.convs):
                if i:
                    steps += [("bn", layer.norms[i]), ("relu", None)]
                steps.append(("conv", conv))
        else:
            branch = f"{prefix}.0.0"
            steps = []
            for i, conv in enumerate(layer.convs):
                steps += [("bn", layer.norms[i]), ("relu", None), ("conv", conv)]
        for index, (kind, part) in enumerate(steps):
            if kind == "conv":
                yield f"{branch}.{index}.weight", Target(part.kernel, _conv)
            elif kind == "bn":
                yield from _bn(f"{branch}.{index}", part)
        if layer.projection is not None:
            yield f"{prefix}.2.1.0.weight", Target(layer.projection.kernel, _conv)
    last_stage = units[-1][0] if units else 3
    yield from _bn(f"{last_stage + 1}", _layer(model, "final_bn"))
    yield from _head(f"{last_stage + 5}", model)


KEY_MAPS: dict[str, Callable[[keras.Model], Iterator[tuple[str, Target]]]] = {
    "torchvision": torchvision_keys,
    "wrn": wrn_keys,
    "fbresnet": fbresnet_keys,
}


def _check_source(source: str) -> str:
    if source not in SOURCES:
        raise ConversionError(f"Unknown source layout {source!r}; choose one of {', '.join(SOURCES)}.")
    return source


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
    return _load_arrays(model, arrays, epsilon, source)


def _load_arrays(model: keras.Model, arrays: Mapping[str, np.ndarray], epsilon: float, source: str) -> keras.Model:
    plan: dict[str, Target] = {}
    for key, target in KEY_MAPS[_check_source(source)](model):
        if key in plan:  # a bug in a key map, never the user's
            raise AssertionError(f"key {key!r} is mapped twice")
        plan[key] = target
    unknown = [k for k in arrays if k not in plan and not k.endswith(IGNORED_SUFFIXES)]
    if unknown:
        raise ConversionError(
            f"Unknown key {unknown[0]!r} in the {source} state dict "
            f"({len(unknown)} unknown in all): it has no counterpart in {model.name}. "
            "Check the architecture (depth, width, shortcut type) and the source layout."
        )
    missing = [k for k in plan if k not in arrays]
    if missing:
        raise ConversionError(
            f"Missing key {missing[0]!r} in the {source} state dict ({len(missing)} missing "
            f"in all): {model.name} needs it."
        )
    converted = {}
    for key, target in plan.items():
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


def infer_shortcut(arrays: Mapping[str, np.ndarray]) -> str:
    """fbresnet layout: ``"projection"`` if stage 2's first unit has a 1×1 shortcut conv."""
    return "projection" if "2.0.2.1.0.weight" in arrays else "zeropad"


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
    from keras_gated.registry import create_model, get_model_entry

    _check_source(source)
    get_model_entry(arch)  # an unknown name fails here, with the registry's message
    if not arch.startswith(SOURCE_ARCHS[source]):
        raise ConversionError(
            f"The {source} layout feeds {', '.join(a + '*' for a in SOURCE_ARCHS[source])} "
            f"models, not {arch!r}."
        )
    arrays, epsilon = read_source(state_dict)
    head = {"torchvision": "fc.bias", "wrn": "fc.bias"}.get(source)
    if source == "fbresnet":
        model_kwargs.setdefault("shortcut", infer_shortcut(arrays))
        bias_keys = [k for k in arrays if k.count(".") == 1 and k.endswith(".bias") and arrays[k].ndim == 1]
        head = max(bias_keys, key=lambda k: int(k.split(".")[0]), default=None)
    if head in arrays:
        model_kwargs.setdefault("classes", int(arrays[head].shape[0]))
    model = create_model(arch, **model_kwargs)
    _load_arrays(model, arrays, epsilon, source)
    if out is not None:
        save_folder(model, out)
    return model


def save_folder(model: keras.Model, out: str | os.PathLike) -> Path:
    """Write ``model`` as a Keras save folder (config.json, metadata.json, model.weights.h5).

    The folder appears whole or not at all: it is written next to ``out`` and renamed.
    """
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} exists and is not empty: choose a new --out folder.")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        keras.saving.save_model(model, staging / "model", zipped=False)
        if out.exists():
            out.rmdir()
        os.replace(staging / "model", out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out
