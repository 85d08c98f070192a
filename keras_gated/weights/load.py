"""Load weights into a model: strictly, with head adaptation and a configuration check.

Keras addresses the arrays of a weight file by layer *type and position*, not by layer
name, and ``model.load_weights`` silently ignores arrays the model has no place for
(a full model's file loads into a headless model without a word). Here:

* the file must fit an architecture exactly: same number of arrays, every shape equal
  (checked by Keras when it assigns them);
* when the model is exactly that architecture (``include_top=True`` and the same
  ``classes``), the file is loaded straight into it;
* otherwise (``include_top=False``, other ``classes``, a head-less file, or a custom
  ``input_tensor``) the file is loaded into a *reference* model of the file's own
  architecture, and every layer but the ``predictions`` head is copied into the model
  by layer name, shapes checked. The head is then freshly initialised, which is said
  once (one log line on the ``keras_gated`` logger).

Any other mismatch is a ValueError, never a silent partial load.

Same shapes do not mean the same function: a gate, a Highway variant or a shortcut type
changes what a net computes but no weight shape. ``check_configuration`` therefore
compares the configuration saved with the weights (Keras's ``config.json``) with the
model being built, layer by layer, on the keys that define the function.
"""

from __future__ import annotations

import inspect
import logging
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import keras

from keras_gated.weights.registered import find_pretrained_cfg, is_architecture
from keras_gated.weights.resolve import ResolvedWeights
from keras_gated.weights.shards import weight_files
from keras_gated.weights.sources import CONFIG_FILE

HEAD = "predictions"

logger = logging.getLogger("keras_gated")


class ConfigurationMismatchError(ValueError):
    """The weights were trained with other function-defining arguments than the model."""


class WeightsFileError(ValueError):
    """A weight file cannot be read (truncated, corrupt, or not HDF5)."""


def the_weights(origin: str, *, capital: bool = False) -> str:
    """``"the weights gresnet20.cifar10"`` / ``"the weights /path/x.weights.h5"``."""
    article = "The" if capital else "the"
    return f"{article} {origin}" if origin.startswith("weights ") else f"{article} weights {origin}"


def _open_h5(path: str | Path) -> h5py.File:
    """Open a weight file; a file h5py cannot read is a ``WeightsFileError`` naming it
    (an unreadable path, e.g. permission denied, stays the OSError it is)."""
    with open(path, "rb"):
        pass
    try:
        return h5py.File(path, "r")
    except OSError as error:
        reason = str(error).split("(", 1)[-1].rstrip(")") or str(error)
        raise WeightsFileError(
            f"The weights file {path} cannot be read ({reason}): it is truncated, "
            "corrupt or not a Keras .weights.h5 file; download or save it again."
        ) from None


def _h5_files(path: str | Path) -> Iterator[h5py.File]:
    """Each HDF5 file of a weight file, open in turn: the file itself, or the shards of a
    shard index (``keras_gated.weights.shards``); a shard that is missing or an index
    that is not one is a ``WeightsFileError``."""
    try:
        files = weight_files(path)
    except (FileNotFoundError, ValueError) as error:
        raise WeightsFileError(str(error)) from None
    for file in files:
        with _open_h5(file) as h5:
            yield h5


def _datasets(h5: h5py.File) -> list[tuple[str, h5py.Dataset]]:
    found: list[tuple[str, h5py.Dataset]] = []

    def visit(name: str, obj: object) -> None:
        if isinstance(obj, h5py.Dataset):
            found.append((name, obj))

    h5.visititems(visit)
    return found


def head_classes(path: str | Path) -> int | None:
    """The number of classes of the ``predictions`` layer stored in a Keras 3 weight file
    (Keras records each layer's name on its ``vars`` group); None if it has no head."""
    names: dict[str, str] = {}
    first_arrays: dict[str, tuple[int, ...]] = {}  # vars group -> shape of its array 0
    for h5 in _h5_files(path):
        names = _layer_names(h5, names)
        first_arrays.update((dataset.parent.name, dataset.shape)
                            for name, dataset in _datasets(h5) if name.endswith("vars/0"))
    return next((int(shape[-1]) for group, shape in first_arrays.items()
                 if names.get(group) == HEAD), None)


def _layer_names(h5: h5py.File, known: dict[str, str] | None = None) -> dict[str, str]:
    """Each variable group's layer name (Keras records it on the ``vars`` group) in one
    file, ``known`` (an earlier shard's) first: Keras writes it only where a layer's group
    is first made, so a layer whose variables continue in a later shard has its name in an
    earlier one."""
    names = dict(known or {})

    def visit(name: str, obj: object) -> None:
        if isinstance(obj, h5py.Group) and "name" in obj.attrs:
            names.setdefault(obj.name, str(obj.attrs["name"]))

    h5.visititems(visit)
    return names


def count_arrays(path: str | Path) -> int:
    """The number of model variable arrays stored in a weight file (a compiled model's
    file also holds ``optimizer/`` state, which is not counted)."""
    return sum(
        sum(1 for name, _ in _datasets(h5) if not name.startswith("optimizer/"))
        for h5 in _h5_files(path)
    )


def check_finite(path: str | Path, *, origin: str) -> None:
    """Refuse a weight file holding a NaN or infinite value (a corrupt or diverged file),
    naming the first such tensor, before any of it is loaded."""
    import numpy as np

    names: dict[str, str] = {}
    for h5 in _h5_files(path):
        names = _layer_names(h5, names)
        for name, dataset in _datasets(h5):
            if name.startswith("optimizer/"):
                continue
            if dataset.attrs.get("dtype") == "bfloat16":  # Keras's form of bfloat16 arrays
                import ml_dtypes

                value = np.asarray(dataset[()]).view(ml_dtypes.bfloat16).astype(np.float32)
            elif dataset.dtype.kind in "fc":
                value = dataset[()]
            else:
                continue
            if not np.isfinite(value).all():
                layer = names.get(dataset.parent.name)
                where = f"{name} (layer {layer!r})" if layer else name
                raise WeightsFileError(
                    f"{the_weights(origin, capital=True)} hold NaN or infinite values in "
                    f"{where} of {h5.filename}: the file is corrupt or the training diverged; "
                    "use a good copy of the weights."
                )


def load_exact(model: keras.Model, path: str | Path, *, origin: str) -> None:
    """Load a weight file that must fit ``model``'s architecture exactly."""
    stored = count_arrays(path)
    expected = len(model.weights)
    if stored != expected:
        raise ValueError(
            f"{the_weights(origin, capital=True)} do not fit {model.name!r}: the file holds "
            f"{stored} "
            f"arrays, the architecture has {expected} variables. Check the architecture "
            "arguments (depth, width, block, units, input shape) match the weights'."
        )
    try:
        model.load_weights(path)
    except ValueError as error:
        raise ValueError(
            f"{the_weights(origin, capital=True)} do not fit {model.name!r}: "
            f"{_first_mismatch(error)}; "
            "check the architecture arguments (depth, width, input channels, ...) match "
            "the weights'."
        ) from None
    except OSError as error:
        raise WeightsFileError(
            f"The weights file {path} cannot be read ({error}): it is truncated or "
            "corrupt; download or save it again."
        ) from None


# The value's shape is a tuple, or on the torch backend ``torch.Size([3, 3, 3, 16])``.
_ASSIGN_ERROR = re.compile(
    r"variable\.shape=(\([^)]*\)), Received: value\.shape=(\([^)]*\)|torch\.Size\(\[[^\]]*\]\))"
    r"(?:.*?Target variable: <Variable path=([^,]+),)?",
    re.S,
)
_TORCH_SIZE = re.compile(r"torch\.Size\(\[([^\]]*)\]\)")


def _first_mismatch(error: Exception) -> str:
    """One line for Keras's shape-mismatch error (which prints the arrays' values)."""
    found = _ASSIGN_ERROR.search(str(error))
    if found:
        model_shape, file_shape, variable = found.groups()
        file_shape = _TORCH_SIZE.sub(r"(\1)", file_shape)
        where = f"variable {variable}" if variable else "a variable"
        return f"{where} has shape {model_shape} in the model but {file_shape} in the weights"
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return first[:300]


def copy_weights(
    source: keras.Model,
    target: keras.Model,
    *,
    skip: tuple[str, ...] = (),
    foreign_layers_ok: bool = False,
) -> None:
    """Copy every layer of ``source`` that has variables into the same-named layer of
    ``target`` (except ``skip``). A missing layer, another shape, or a layer of
    ``target`` left unfilled (unless ``foreign_layers_ok``: a caller's own layers before
    an ``input_tensor``) is a ValueError."""
    copied = set(skip)
    for layer in source.layers:
        if not layer.weights or layer.name in skip:
            continue
        try:
            twin = target.get_layer(layer.name)
        except ValueError:
            raise ValueError(
                f"Layer {layer.name!r} of the weights has no counterpart in "
                f"{target.name!r}; the architectures differ."
            ) from None
        source_shapes = [tuple(w.shape) for w in layer.weights]
        target_shapes = [tuple(w.shape) for w in twin.weights]
        if source_shapes != target_shapes:
            raise ValueError(
                f"Layer {layer.name!r}: the weights have shapes {source_shapes}, "
                f"{target.name!r} has {target_shapes}; the architectures differ."
            )
        twin.set_weights(layer.get_weights())
        copied.add(layer.name)
    unfilled = [layer.name for layer in target.layers if layer.weights and layer.name not in copied]
    if unfilled and not foreign_layers_ok:
        raise ValueError(
            f"The weights have nothing for the layers {unfilled} of {target.name!r}; the "
            "architectures differ."
        )


def load_weights_file(
    model: keras.Model,
    path: str | Path,
    *,
    origin: str,
    include_top: bool,
    classes: int,
    build_reference: Callable[[int | None], keras.Model],
    custom_input: bool = False,
) -> None:
    """Load ``path`` into ``model``, adapting the head if needed (see module docs).

    Args:
        origin: how to name the weights in messages (``"weights gresnet20.cifar10"``).
        include_top, classes: how ``model`` was built.
        build_reference: builds the same architecture with an ``n``-class head
            (``None``: without head) and default inputs.
        custom_input: ``model`` was built on a caller's ``input_tensor`` (its layers
            may not line up with a reference model's).
    """
    check_finite(path, origin=origin)
    stored = head_classes(path)
    same_head = (include_top and stored == classes) or (not include_top and stored is None)
    if same_head and not custom_input:
        load_exact(model, path, origin=origin)
        return

    reference = build_reference(stored)
    load_exact(reference, path, origin=origin)
    adapt_head = not same_head
    copy_weights(
        reference, model, skip=(HEAD,) if adapt_head else (), foreign_layers_ok=custom_input
    )
    if not adapt_head:
        return
    if not include_top:
        why = f"include_top=False drops the {stored}-class head '{HEAD}'"
    elif stored is None:
        why = f"the weights have no head; '{HEAD}' ({classes} classes) is freshly initialised"
    else:
        why = (
            f"the weights have {stored} classes, the model {classes}: '{HEAD}' is freshly "
            "initialised, train it before use"
        )
    logger.warning("Loaded %s into %r except the head: %s.", origin, model.name, why)


# ------------------------------------------------------- the configuration of the weights

# Layer-config keys that do not change what a trained net computes at inference, besides
# every ``*_initializer``, ``*_regularizer`` and ``*_constraint``.
NEUTRAL_KEYS = frozenset(
    {
        "name",
        "trainable",
        "dtype",
        "seed",
        "rate",  # Dropout
        "dropout",
        "noise_shape",
        "momentum",  # BatchNormalization: training statistics only
        "bn_momentum",
        "synchronized",
        "transform_bias",  # HighwayBottleneck: the start value of a trained bias
    }
)
NEUTRAL_SUFFIXES = ("_initializer", "_regularizer", "_constraint")

# Layer-config keys set by a constructor argument: key -> (argument, layer value -> value).
CONSTRUCTOR_ARGUMENTS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "gate": ("gate", lambda value: value),
    "shortcut": ("shortcut", lambda value: value),
    "batch_norm": ("batch_norm", lambda value: value),
    "block": ("block", lambda value: value),
    "variant": ("variant", lambda value: value),
    "full_relu": ("variant", lambda value: "final_relu" if value else "highway"),
}

_UNKNOWN = object()


@dataclass(frozen=True)
class ConfigDifference:
    """One function-defining key of one layer that differs from the saved config."""

    layer: str
    key: str
    saved: Any
    built: Any
    recorded: bool  # False: the saved config predates the key; ``saved`` is its default


def _plain(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples as lists), for comparisons."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _defines_function(key: str) -> bool:
    return key not in NEUTRAL_KEYS and not key.endswith(NEUTRAL_SUFFIXES)


def _layer_configs(model_config: dict) -> dict[str, tuple[str, dict]]:
    """{layer name: (class name, layer config)} of a functional model's config."""
    layers = {}
    for entry in model_config.get("layers", []):
        config = entry.get("config") or {}
        layers[config.get("name", entry.get("name"))] = (entry.get("class_name"), config)
    return layers


def _default(layer: keras.layers.Layer, key: str) -> Any:
    """The default of the layer argument ``key`` (``_UNKNOWN`` if it has none)."""
    try:
        parameter = inspect.signature(type(layer).__init__).parameters[key]
    except (KeyError, TypeError, ValueError):
        return _UNKNOWN
    return _UNKNOWN if parameter.default is parameter.empty else _plain(parameter.default)


def config_differences(model: keras.Model, saved_config: dict) -> list[ConfigDifference]:
    """The function-defining differences between ``model`` and a saved model config,
    layer by layer (same names; the head and the input are the caller's choice). A key
    missing from the saved config means the layer argument's default."""
    saved = _layer_configs(saved_config)
    differences = []
    for name, (class_name, config) in _layer_configs(model.get_config()).items():
        if class_name == "InputLayer" or name == HEAD or name not in saved:
            continue
        saved_class, saved_layer = saved[name]
        if saved_class != class_name:
            differences.append(ConfigDifference(name, "layer type", saved_class, class_name, True))
            continue
        for key, value in config.items():
            if not _defines_function(key):
                continue
            recorded = key in saved_layer
            old = saved_layer[key] if recorded else _default(model.get_layer(name), key)
            if old is not _UNKNOWN and _plain(old) != _plain(value):
                differences.append(ConfigDifference(name, key, old, value, recorded))
    return differences


# Layers every classifier of the zoo has whatever its architecture: a match on these
# alone says nothing about where the weights came from.
SHARED_LAYERS = frozenset({"images", "preprocessing", "flatten", "stem", HEAD})


def check_identity(model: keras.Model, saved_config: dict, *, origin: str, arch: str) -> None:
    """Refuse weights saved from another architecture, before any weight moves: the saved
    model's name is another registered model than ``arch`` / ``model.name``, or none of
    the model's own layers with weights (beyond the preprocessing, stem and head every
    classifier has) appears in the saved configuration."""
    saved_name = saved_config.get("name")
    if saved_name and saved_name not in (arch, model.name) and is_architecture(str(saved_name)):
        other = True
    else:
        own = {layer.name for layer in model.layers
               if layer.weights and layer.name not in SHARED_LAYERS}
        saved = set(_layer_configs(saved_config))
        other = bool(own) and not own & saved
    if other and _registered_for(origin, arch):
        # The file passed its registered sha256: the configuration beside it is not its own.
        raise ConfigurationMismatchError(
            f"{the_weights(origin, capital=True)} are the registered release of {arch!r}, but the "
            f"config.json beside them describes {saved_name or 'another model'!r}: that copy of "
            "the release is damaged; restore its config.json (pull or download the release "
            "again)."
        )
    if other:
        raise ConfigurationMismatchError(
            f"{the_weights(origin, capital=True)} were saved from {saved_name or 'another model'!r}"
            f", another architecture than {arch!r}: build "
            f"keras_gated.create_model({saved_name or arch!r}) to use them, or give {arch!r} "
            "its own weights."
        )


def _registered_for(origin: str, arch: str) -> bool:
    """Whether ``origin`` names a registered weight id of ``arch`` (whose file was checked
    against its sha256 before it is read)."""
    weight_id = origin[len("weights "):] if origin.startswith("weights ") else origin
    name, _, tag = weight_id.partition(".")
    return name == arch and bool(tag) and find_pretrained_cfg(arch, tag) is not None


def check_configuration(
    model: keras.Model, saved_config: dict, *, origin: str, arch: str, call: Any = None
) -> None:
    """Refuse weights whose saved configuration defines another function than ``model``.

    A difference in a recorded key is a ``ConfigurationMismatchError`` naming the
    constructor argument, both values and the call that matches the weights (``call``:
    the ``ConstructorCall`` being built, if any). A difference in a key the saved config
    predates (a layer argument added since, taken at its default) is a change of the
    library's architecture that no argument undoes: a warning.
    """
    check_identity(model, saved_config, origin=origin, arch=arch)
    differences = config_differences(model, saved_config)
    errors = [d for d in differences if d.recorded]
    if errors:
        raise ConfigurationMismatchError(
            _mismatch_message(errors, origin, arch, call, saved_config.get("name") or arch)
        )
    added = [d for d in differences if not d.recorded]
    if added:
        first = added[0]
        keys = ", ".join(sorted({f"`{d.key}`" for d in added}))
        warnings.warn(
            f"{the_weights(origin, capital=True)} were saved before the layer argument "
            f"{keys} existed: "
            f"they were trained with its default {first.saved!r} where this model uses "
            f"{first.built!r} (layer {first.layer!r}, {len(added)} layer(s) in all), so "
            "the architecture changed since and they may lose accuracy in it.",
            UserWarning,
            stacklevel=5,
        )


def _mismatch_message(
    errors: list[ConfigDifference], origin: str, arch: str, call: Any, saved_name: str
) -> str:
    """One sentence for ``check_configuration``'s error."""
    arguments: dict[str, tuple[Any, Any, list[str]]] = {}
    for d in errors:
        argument, convert = CONSTRUCTOR_ARGUMENTS.get(d.key, (None, None))
        other_family = d.key == "gate" and None in (d.saved, d.built)  # gated vs ungated
        if argument is not None and not other_family:
            entry = arguments.setdefault(argument, (convert(d.saved), convert(d.built), []))
            entry[2].append(d.layer)
    if not arguments:
        d = errors[0]
        return (
            f"{the_weights(origin, capital=True)} were saved from another architecture "
            f"({saved_name!r}): "
            f"layer {d.layer!r} has {d.key} {d.saved!r} in their configuration but "
            f"{d.built!r} in this model; build the model they were saved from, or pass "
            "weights=None."
        )
    trained = ", ".join(f"{a}={s!r}" for a, (s, _, _) in arguments.items())
    built = ", ".join(f"{a}={b!r}" for a, (_, b, _) in arguments.items())
    layers = [layer for _, _, names in arguments.values() for layer in names]
    more = f" and {len(layers) - 1} more" if len(layers) > 1 else ""
    fixed = {a: s for a, (s, _, _) in arguments.items()}
    if call is not None:
        matching = call.render(**fixed)
    else:
        matching = f"keras_gated.create_model({arch!r}, " + ", ".join(
            f"{a}={s!r}" for a, s in fixed.items()
        ) + ")"
    return (
        f"{the_weights(origin, capital=True)} were trained with {trained}, but this model "
        f"was built with "
        f"{built} (layer {layers[0]!r}{more}), which has the same weight shapes but "
        f"computes another function: build {matching} to use these weights, or pass "
        "weights=None."
    )


def load_resolved(
    model: keras.Model,
    resolved: ResolvedWeights,
    *,
    arch: str,
    include_top: bool,
    classes: int,
    build_reference: Callable[[int | None], keras.Model],
    custom_input: bool = False,
    call: Any = None,
) -> None:
    """Load resolved weights (``keras_gated.weights.resolve``) into ``model``.

    The configuration saved with the weights (``config.json``) must define the same
    function as ``model`` (``check_configuration``; ``call``, the constructor call being
    built, is used to say which call matches the weights). Weights saved without one
    load by shape, with a warning.

    ``build_reference(n)`` builds the same architecture with a head of ``n`` classes
    (``None``: no head); it is used when the head is adapted (see
    ``load_weights_file``).
    """
    origin = resolved.origin
    if resolved.saved_config is None:
        warnings.warn(
            f"{the_weights(origin, capital=True)} were saved without a configuration "
            f"(no {CONFIG_FILE} "
            "beside them), so only their shapes can be checked: make sure the model's "
            "arguments (gate, variant, shortcut, ...) are those they were trained with.",
            UserWarning,
            stacklevel=4,
        )
    else:
        check_configuration(model, resolved.saved_config, origin=origin, arch=arch, call=call)
    load_weights_file(
        model,
        resolved.path,
        origin=origin,
        include_top=include_top,
        classes=classes,
        build_reference=build_reference,
        custom_input=custom_input,
    )
