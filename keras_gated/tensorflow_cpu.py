"""TensorFlow, where it is optional: its oneDNN kernels on x86 CPUs, switched on before
TensorFlow is imported, and the one guarded import of every feature that needs it.

TensorFlow is an optional dependency (``pip install "keras-gated[tensorflow]"``): the
models, weights, evaluation, analysis, training and the ONNX export run on JAX or
PyTorch without it. ``import_tensorflow(feature)`` imports it for a feature that needs
it by nature (the ``tf.data`` engine, tfds, TFLite and SavedModel exports) and otherwise
raises one sentence that says how to install it.

TensorFlow's Linux x86 wheels ship Intel oneDNN (MKL-DNN) kernels but turn them on by
default only on CPUs with AVX-512 VNNI or AMX; on AVX2 CPUs they are off and convolutions
run on Eigen. For the convolutional nets of this zoo oneDNN is the faster path on such
CPUs (measured by ``python -m benchmarks.choices``: about 1.5x for GResNet-20 training),
so importing keras-gated sets ``TF_ENABLE_ONEDNN_OPTS=1`` when the user has not set it.
TensorFlow reads the variable once, when it is imported, so this only takes effect if
keras-gated (or ``training``) is imported before TensorFlow or Keras; set the variable
yourself otherwise. ``TF_ENABLE_ONEDNN_OPTS=0`` keeps Eigen. GPUs and TPUs are unaffected:
the variable only chooses CPU kernels.

With oneDNN on, XLA is the slower path on a CPU (its CPU backend does not use oneDNN),
so ``GatedModel``'s ``jit_compile="auto"`` then keeps Keras's choice (no XLA on a
CPU-only TensorFlow); see ``keras_gated.models.fast_path_model``.

This module imports nothing heavy: it must run before TensorFlow is imported.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import sys

ONEDNN_VARIABLE = "TF_ENABLE_ONEDNN_OPTS"


def enable_onednn_by_default() -> bool:
    """Set ``TF_ENABLE_ONEDNN_OPTS=1`` unless the user set it or TensorFlow is already
    imported (too late then). Returns whether the variable was set here."""
    if ONEDNN_VARIABLE in os.environ or "tensorflow" in sys.modules:
        return False
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    os.environ[ONEDNN_VARIABLE] = "1"
    return True


def onednn_enabled() -> bool:
    """Whether the TensorFlow in this process runs its oneDNN CPU kernels (False where
    TensorFlow is not installed)."""
    if not tensorflow_available():
        return False
    from tensorflow.python.util import _pywrap_util_port

    return bool(_pywrap_util_port.IsMklEnabled())


INSTALL_HINT = 'pip install "keras-gated[tensorflow]"'


class TensorFlowRequiredError(ModuleNotFoundError, ValueError):
    """A feature that needs TensorFlow was asked for where it is not installed. (A
    ValueError too, so the command line reports it as one sentence.)"""


def tensorflow_available() -> bool:
    """Whether TensorFlow can be imported here; imports nothing."""
    if "tensorflow" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("tensorflow") is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a broken install
        return False


def import_tensorflow(feature: str):
    """``import tensorflow`` for ``feature`` (e.g. "the tf.data engine"), or a
    ``TensorFlowRequiredError`` that names the feature and the install command."""
    try:
        import tensorflow as tf
    except ImportError as error:
        raise TensorFlowRequiredError(
            f"{feature} needs TensorFlow, which is not installed: {INSTALL_HINT} "
            "(or choose a path that runs without it).",
            name="tensorflow",
        ) from error
    return tf
