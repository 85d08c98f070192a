"""Export a model for serving: TensorFlow SavedModel, TFLite (LiteRT) and ONNX.

The models normalise raw pixels inside (a ``Normalization`` layer whose mean and
variance are non-trainable variables). Some converters (tf2onnx, behind Keras's ONNX
export on the TensorFlow backend) turn those variables into graph *inputs* that no user
feeds. So the exported graph uses :class:`ConstantStandardization` instead: the same
(x − mean) / max(√variance, ε) with the statistics as constants. Only the exported copy
changes; the model and its weight files are left as they are.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import keras
import numpy as np
from keras import ops

from keras_gated.files import check_new_path, new_output_path
from keras_gated.tensorflow_cpu import import_tensorflow

PACKAGE = "keras_gated"
FORMATS = {"savedmodel": "tf_saved_model", "tflite": "litert", "onnx": "onnx"}
BACKENDS = {  # the Keras backends each format is exported from
    "savedmodel": ("tensorflow", "jax"),
    "tflite": ("tensorflow", "torch"),
    "onnx": ("tensorflow", "jax", "torch"),
}


@keras.saving.register_keras_serializable(package=PACKAGE)
class ConstantStandardization(keras.layers.Layer):
    """(x − mean) / max(√variance, ε) with mean and variance as constants (no variables)."""

    def __init__(self, mean: Any, variance: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mean = np.asarray(mean, dtype="float32").tolist()
        self.variance = np.asarray(variance, dtype="float32").tolist()

    def call(self, x):
        mean = ops.convert_to_tensor(np.asarray(self.mean, "float32"), dtype=x.dtype)
        std = ops.maximum(ops.sqrt(ops.convert_to_tensor(np.asarray(self.variance, "float32"), dtype=x.dtype)),
                          keras.config.epsilon())
        return ops.divide(ops.subtract(x, mean), std)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "mean": self.mean, "variance": self.variance}


def with_constant_preprocessing(model: keras.Model) -> keras.Model:
    """A copy of ``model`` whose ``Normalization`` layers hold constants (same outputs)."""
    config = copy.deepcopy(model.get_config())
    replaced = False
    for layer_config in config.get("layers", []):
        if layer_config.get("class_name") != "Normalization":
            continue
        layer = model.get_layer(layer_config["config"]["name"])
        # Per-channel statistics of the last axis: shape (C,) broadcasts over (..., C).
        mean = np.asarray(keras.ops.convert_to_numpy(layer.mean)).reshape(-1)
        variance = np.asarray(keras.ops.convert_to_numpy(layer.variance)).reshape(-1)
        layer_config.update({
            "module": None, "class_name": f"{PACKAGE}>ConstantStandardization",
            "registered_name": f"{PACKAGE}>ConstantStandardization",
            "config": {"name": layer.name, "mean": mean.tolist(), "variance": variance.tolist(),
                       "dtype": layer_config["config"].get("dtype")},
        })
        replaced = True
    if not replaced:
        return model
    exported = model.__class__.from_config(config)
    by_path = {v.path: v for v in model.weights}
    for variable in exported.weights:
        variable.assign(keras.ops.convert_to_numpy(by_path[variable.path]))
    return exported


def export(model: keras.Model, path: str | os.PathLike, format: str, *, verbose: bool = False) -> Path:
    """Write ``model`` as ``format`` (``"savedmodel"``, ``"tflite"`` or ``"onnx"``) to ``path``.

    Inputs stay raw 0-255 pixels, as for the Keras model. Raises a ValueError naming the
    backends that can export a format when the current one cannot, and a
    ``FileExistsError`` when ``path`` exists (a link included): nothing is replaced. The
    export appears whole (``keras_gated.files.new_output_path``).
    """
    if format not in FORMATS:
        raise ValueError(f"Unknown export format {format!r}; choose one of {', '.join(FORMATS)}.")
    backend = keras.backend.backend()
    if backend not in BACKENDS[format]:
        raise ValueError(
            f"{format} export runs on the {' or '.join(BACKENDS[format])} backend, not {backend}: "
            f"set KERAS_BACKEND={BACKENDS[format][0]}."
        )
    path = check_new_path(path, "the export path")  # before any work
    check_onnx_converter(model, format)
    check_tflite_modules(format, backend)
    if backend == "tensorflow" or format == "savedmodel":  # SavedModel: jax2tf on JAX
        import_tensorflow(f"Export to {format} on the {backend} backend")
    # Written beside and renamed into place: a new path only, never a link followed.
    with new_output_path(path, "the export path") as staging:
        prepared_for_export(model).export(str(staging), format=FORMATS[format], verbose=verbose)
    return path


def prepared_for_export(model: keras.Model) -> keras.Model:
    """``model`` as converters take it: its preprocessing statistics as constants
    (``with_constant_preprocessing``) and called once (Keras's exporters refuse a model
    that was never called). A free height or width is sampled at 32."""
    exported = with_constant_preprocessing(model)
    shape = [32 if size is None else size for size in exported.inputs[0].shape[1:]]
    exported(np.zeros((1, *shape), "float32"))
    return exported


# The modules Keras's ONNX export needs on each backend (the ``onnx`` extra installs them).
ONNX_MODULES = {"tensorflow": ("onnx", "tf2onnx"), "jax": ("onnx", "jax2onnx"),
                "torch": ("onnx", "onnxscript")}


class MissingExtraError(ImportError, ValueError):
    """An optional dependency of the requested export is not installed; the message says
    which extra installs it (a ``ValueError`` too, so the command line says it in one
    line)."""


def _installed(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module blocked or half-imported
        return False


def check_onnx_modules(format: str) -> None:
    """Refuse an ONNX export, before any work, where this backend's converter is not
    installed, naming the modules and the extra."""
    if format != "onnx":
        return
    backend = keras.backend.backend()
    missing = [m for m in ONNX_MODULES.get(backend, ("onnx",)) if not _installed(m)]
    if missing:
        raise MissingExtraError(
            f"ONNX export on the {backend} backend needs {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: "
            'pip install "keras-gated[onnx]".',
            name=missing[0])


# The module Keras's TFLite (LiteRT) export needs on the torch backend; TensorFlow's own
# converter does it on the tensorflow backend.
TFLITE_TORCH_MODULE = "litert_torch"


def check_tflite_modules(format: str, backend: str) -> None:
    """Refuse, before any work, a TFLite export on the torch backend where Keras's converter
    for it (``litert-torch``, not in any extra: it brings JAX and more) is not installed."""
    if format == "tflite" and backend == "torch" and not _installed(TFLITE_TORCH_MODULE):
        raise MissingExtraError(
            "TFLite export on the torch backend needs litert-torch, which is not installed: "
            "pip install litert-torch, or export with KERAS_BACKEND=tensorflow.",
            name=TFLITE_TORCH_MODULE)


def check_onnx_converter(model: keras.Model, format: str) -> None:
    """Refuse an ONNX export the current backend's converter cannot do: its modules not
    installed, or jax2onnx, which lowers max pooling to a 4-D MaxPool window that
    onnxruntime rejects."""
    check_onnx_modules(format)
    if (format, keras.backend.backend()) == ("onnx", "jax") and any(
        isinstance(layer, keras.layers.MaxPooling2D) for layer in model.layers
    ):
        raise ValueError(
            f"ONNX export of {model.name} (it has max pooling) does not work through the JAX "
            "backend's converter: export it with KERAS_BACKEND=tensorflow or torch "
            "(`keras-gated export` or model.export)."
        )


def default_file_name(name: str, format: str) -> str:
    """``gresnet20.onnx``, ``gresnet20.tflite``, ``gresnet20_savedmodel``."""
    return {"onnx": f"{name}.onnx", "tflite": f"{name}.tflite", "savedmodel": f"{name}_savedmodel"}[format]
