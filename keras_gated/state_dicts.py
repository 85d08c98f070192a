"""Reference state dicts: reading them (``.pth``/``.pt`` with torch, ``.safetensors``,
in-memory dicts of arrays, torch modules) and the pieces a family's key map is written
with (``keras_gated/models/<family>/convert.py``): ``Target`` (a Keras variable and the
layout change into it: OIHW -> HWIO for convolutions, (out, in) -> (in, out) for dense
layers), the BN and head targets, and the model's blocks by stage.

``keras_gated.convert`` checks a source against a key map and assigns it; this module
needs no model registry, so that the families' key maps can import it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keras
import numpy as np

from keras_gated.layers.block import Block, block_stages

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
