"""Weights from the reference implementations: PyTorch state dicts into keras-gated models.

Each family declares the layouts its models take (``FamilySpec.converters``, the key
maps in the family's folder, ``keras_gated/models/<family>/convert.py``); this module
reads a source, checks it against the target key by key and assigns it. The built-in
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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import keras
import numpy as np

from keras_gated.files import check_new_folder, check_outside_zoo, new_output_folder
from keras_gated.layers.block import Block, block_stages
from keras_gated.registry import create_model, get_model_entry

if TYPE_CHECKING:
    from keras_gated.models.family_spec import Converter

DEFAULT_BN_EPSILON = 1e-5
IGNORED_SUFFIXES = ("num_batches_tracked",)


class ConversionError(ValueError):
    """A state dict does not fit the target model; the message names the key."""


@dataclass(frozen=True)
class Target:
    """One Keras variable a source key is written to, and how the array is laid out."""

    variable: Any
    transform: Callable[[np.ndarray], np.ndarray]


def same_layout(array: np.ndarray) -> np.ndarray:
    return array


def conv_layout(array: np.ndarray) -> np.ndarray:
    return np.transpose(array, (2, 3, 1, 0))  # OIHW -> HWIO


def dense_layout(array: np.ndarray) -> np.ndarray:
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
            source = _safetensors_load(path)
        else:
            try:
                import torch
            except ImportError as error:
                raise ImportError(
                    f"Reading {path.name} needs PyTorch (pip install 'keras-gated[torch]'); "
                    "a .safetensors copy of the state dict loads without it."
                ) from error
            loaded = _torch_load(torch, path)
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


def _torch_load(torch: Any, path: Path) -> Any:
    """``torch.load`` of tensors and plain containers only: a file that pickles other
    objects is refused (unpickling them could run code), with what to do instead."""
    import pickle

    try:
        return torch.load(str(path), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        if "Unsupported global" in str(error):  # torch refused an object, not the bytes
            raise ConversionError(
                f"{path} pickles objects other than tensors, which keras-gated does not load "
                "(unpickling them could run code): save the weights alone, with "
                "torch.save(model.state_dict(), ...) or as a .safetensors file, and convert "
                "that."
            ) from None
        raise _unreadable(path, "PyTorch") from None
    except (RuntimeError, EOFError, ValueError):
        raise _unreadable(path, "PyTorch") from None


def _unreadable(path: Path, kind: str) -> ConversionError:
    return ConversionError(
        f"{path} cannot be read as a {kind} file (truncated or damaged): pass an intact "
        ".pth, .pt or .safetensors state dict."
    )


def _safetensors_load(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a ``.safetensors`` file; a damaged file is refused with its name."""
    from safetensors.numpy import load_file

    try:
        return load_file(str(path))
    except Exception as error:  # safetensors raises its own SafetensorError (no base class)
        if isinstance(error, OSError):
            raise
        raise _unreadable(path, "safetensors") from None


def check_tensor(key: str, array: np.ndarray, origin: str) -> None:
    """Refuse a source tensor that is not floating point or holds NaN or infinity."""
    if array.dtype.kind != "f":
        raise ConversionError(
            f"Tensor {key!r} of {origin} has dtype {array.dtype}, not a float type: pass "
            "the float weights of the network (a quantised or integer copy does not convert)."
        )
    if not np.isfinite(array).all():
        raise ConversionError(
            f"Tensor {key!r} of {origin} holds NaN or infinite values: pass intact weights "
            "(a training run that diverged, or a damaged file, gives these)."
        )


# -- building blocks of the families' key maps ----------------------------------------
def bn_targets(prefix: str, layer) -> Iterator[tuple[str, Target]]:
    """``prefix.{weight,bias,running_mean,running_var}`` of a batch norm."""
    for key, variable in zip(("weight", "bias", "running_mean", "running_var"),
                             (layer.gamma, layer.beta, layer.moving_mean, layer.moving_variance)):
        yield f"{prefix}.{key}", Target(variable, same_layout)


def conv_kernel_target(key: str, layer) -> Iterator[tuple[str, Target]]:
    """A bias-free convolution's kernel (OIHW in the source)."""
    if layer.use_bias:
        raise ConversionError(
            f"{layer.path} has a bias, which no reference layout has (the reference nets "
            "all use batch norm): convert into a net built with batch_norm=True."
        )
    yield key, Target(layer.kernel, conv_layout)


def head_targets(prefix: str, model: keras.Model) -> Iterator[tuple[str, Target]]:
    """``prefix.{weight,bias}`` of the classifier (nothing for a net without its top)."""
    dense = get_layer(model, "predictions", required=False)
    if dense is not None:
        yield f"{prefix}.weight", Target(dense.kernel, dense_layout)
        yield f"{prefix}.bias", Target(dense.bias, same_layout)


def get_layer(model: keras.Model, name: str, required: bool = True):
    """``model``'s layer ``name``; a ConversionError (or None) when it has none."""
    try:
        return model.get_layer(name)
    except ValueError:
        if required:
            raise ConversionError(f"The target model has no layer {name!r}; is it the right architecture?") from None
        return None


def blocks_by_stage(model: keras.Model) -> list[tuple[int, int, Block]]:
    """(stage, position in the stage from 1, block) of every block that has a stage
    (``keras_gated.layers.block.block_stages``)."""
    found, count = [], {}
    for name, stage in block_stages(model.layers).items():
        count[stage] = count.get(stage, 0) + 1
        found.append((stage, count[stage], model.get_layer(name)))
    return sorted(found, key=lambda item: item[:2])


def source_layouts() -> dict[str, Converter]:
    """Every source layout the families declare, by name."""
    # Imported here: the families' key maps import this module's building blocks.
    from keras_gated.models.family_spec import converters

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
        check_outside_zoo(out)
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
    check_outside_zoo(out)
    # A new or empty folder (never a link), claimed while it is written, renamed into place.
    with new_output_folder(out) as staging:
        keras.saving.save_model(model, staging / "model", zipped=False)
        for item in (staging / "model").iterdir():
            os.replace(item, staging / item.name)
        (staging / "model").rmdir()
    return out
