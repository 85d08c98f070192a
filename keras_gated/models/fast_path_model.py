"""``FastPathModel``, the base of every keras-gated model: the fastest correct training
path per backend made what ``model.fit`` gets by default, and a wrong input shape named in
one sentence. ``describe`` reports the path a compiled model runs on.

On a CPU, TensorFlow has three ways to run these convolutional nets, measured by
``python -m benchmarks.choices`` (GResNet-20 training, batch 128):

- oneDNN kernels, no XLA: the fastest to train (about 1.9x the Eigen kernels). Importing
  keras-gated turns oneDNN on where TensorFlow leaves it off (AVX2 CPUs; see
  ``keras_gated.tensorflow_cpu``), and Keras's ``jit_compile="auto"`` already means no XLA
  on a CPU-only TensorFlow, so training needs nothing more. ``predict`` is compiled with
  XLA all the same: for a small batch it answers about twice as fast (batch-1 latency).
- XLA: its CPU backend does not use oneDNN; faster than Eigen without XLA.
- Eigen kernels, no XLA: the slowest.

So keras-gated models are a ``Functional`` subclass (``FastPathModel``) whose ``"auto"`` picks XLA on a CPU
only when oneDNN is off (``TF_ENABLE_ONEDNN_OPTS=0``, or TensorFlow imported before
keras-gated). Anything the user sets explicitly (``jit_compile=True/False``,
``run_eagerly=True``, a distribution strategy, op determinism) wins, as in Keras. On GPUs
and TPUs, and on the other backends, Keras's own choice stands: JAX always compiles with
XLA, and torch runs eagerly unless asked for ``torch.compile``.
"""

from __future__ import annotations

import operator
import os

import keras
from keras.src.models.functional import Functional
from keras.src.trainers.trainer import model_supports_jit

from keras_gated.tensorflow_cpu import onednn_enabled


class FastPathModel(Functional):
    """A Keras functional model whose ``jit_compile="auto"`` is the fast path here, and
    which names the expected input shape in one sentence when called, or asked to
    predict or evaluate, on a batch of the wrong shape.
    ``keras_gated.models.gated_model.GatedModel``, the class every constructor returns,
    builds on it."""

    def __call__(self, *args, **kwargs):
        # Checked before Keras's call wrapper, which would append a dump of the array.
        if args:
            check_input_shape(self, args[0])
        return super().__call__(*args, **kwargs)

    # A compiled predict or test function is traced again with relaxed (None) dimensions
    # for a batch of a new shape, so the check inside ``__call__`` no longer sees the
    # image size: the concrete arrays are checked here, once per call, before any batch.
    def predict(self, x, *args, **kwargs):
        check_input_shape(self, x)
        empty = empty_prediction(self, x)
        if empty is not None:
            return empty
        return super().predict(x, *args, **kwargs)

    def predict_on_batch(self, x):
        check_input_shape(self, x)
        return super().predict_on_batch(x)

    def evaluate(self, x=None, *args, **kwargs):
        check_input_shape(self, x)
        return super().evaluate(x, *args, **kwargs)

    def test_on_batch(self, x, *args, **kwargs):
        check_input_shape(self, x)
        return super().test_on_batch(x, *args, **kwargs)

    def compile(self, *args, **kwargs):
        self._xla_predict = False  # set again below when jit_compile="auto" chooses it
        super().compile(*args, **kwargs)

    def compile_from_config(self, config):
        """Compile a loaded model as it was saved (optimizer, loss, metrics), as Keras
        does for a model whose ``compile`` is its own: Keras skips that for any override
        of ``compile``, and this one only adds the choice of the predict path. The
        optimizer's variables are built here, so a ``.keras`` file's optimizer state is
        loaded into them and training resumes where it stopped."""
        from keras.src.saving import serialization_lib

        self.compile(**serialization_lib.deserialize_keras_object(config))
        if hasattr(self, "optimizer") and self.built:
            self.optimizer.build(self.trainable_variables)

    def _resolve_auto_jit_compile(self):
        cpu_tensorflow = (keras.backend.backend() == "tensorflow"
                          and not self._distribute_strategy and not tensorflow_has_accelerator()
                          and model_supports_jit(self))
        if cpu_tensorflow and not onednn_enabled():
            return True  # Eigen kernels: XLA is faster
        # oneDNN kernels train faster without XLA, but XLA answers small batches faster.
        self._xla_predict = cpu_tensorflow
        return super()._resolve_auto_jit_compile()

    def make_predict_function(self, force: bool = False):
        self.jit_compile  # resolves "auto" on a model predicting without compile()
        if not getattr(self, "_xla_predict", False) or self.run_eagerly:
            return super().make_predict_function(force)
        jit_compile = self._jit_compile
        self._jit_compile = True
        try:
            return super().make_predict_function(force)
        finally:
            self._jit_compile = jit_compile


def tensorflow_has_accelerator() -> bool:
    """Whether TensorFlow sees a GPU or a TPU (asked only on the TensorFlow backend)."""
    import tensorflow as tf

    return bool(tf.config.list_physical_devices("GPU") or tf.config.list_physical_devices("TPU"))


def describe(model: keras.Model) -> dict:
    """The execution path a compiled model trains and predicts on: backend, XLA (for
    training, and for ``predict``), precision, threads."""
    backend = keras.backend.backend()
    jit_compile = bool(getattr(model, "jit_compile", False))  # resolves "auto"
    info = {
        "backend": backend,
        "jit_compile": jit_compile,
        "xla_predict": jit_compile or bool(getattr(model, "_xla_predict", False)),
        "dtype_policy": keras.config.dtype_policy().name,
    }
    if backend == "tensorflow":
        import tensorflow as tf

        info["onednn"] = onednn_enabled()
        # Set through the API, else through TensorFlow's variable, else one per core.
        intra = (tf.config.threading.get_intra_op_parallelism_threads()
                 or int(os.environ.get("TF_NUM_INTRAOP_THREADS", "0") or 0))
        info["intra_op_threads"] = intra or "all cores"
    return info


def describe_text(model: keras.Model) -> str:
    """``describe`` in one line: ``backend tensorflow, XLA off, float32, oneDNN on, ...``
    (``torch.compile off`` in place of XLA on the torch backend)."""
    info = describe(model)
    xla = "on" if info["jit_compile"] else "off"
    if info["xla_predict"] != info["jit_compile"]:
        xla = f"{xla} for training, {'on' if info['xla_predict'] else 'off'} for predict"
    # On torch, Keras's jit_compile means torch.compile, not XLA.
    compiler = "torch.compile" if info["backend"] == "torch" else "XLA"
    parts = [f"backend {info['backend']}", f"{compiler} {xla}", info["dtype_policy"]]
    if "onednn" in info:
        parts.append(f"oneDNN {'on' if info['onednn'] else 'off'}")
    if "intra_op_threads" in info:
        parts.append(f"intra-op threads: {info['intra_op_threads']}")
    return ", ".join(parts)


def _shape_of(inputs) -> tuple | None:
    """The shape of an array, a tensor or a ``tf.data.Dataset``'s images (None: unknown)."""
    spec = getattr(inputs, "element_spec", None)
    if spec is not None:  # a tf.data.Dataset of images or of (images, labels, ...)
        if isinstance(spec, (tuple, list)):
            spec = spec[0] if spec else None
        inputs = spec
    shape = getattr(inputs, "shape", None)
    if shape is None:
        return None
    try:
        return tuple(_dimension(dim) for dim in shape)
    except (TypeError, ValueError):  # an unknown rank
        return None


def _dimension(dim) -> int | None:
    """A dimension as an int, or None when it has no fixed value (unknown, or symbolic
    as in a traced export, where comparing it raises)."""
    if dim is None:
        return None
    try:
        return operator.index(dim)
    except Exception:  # a symbolic dimension (jax.export's, a TensorFlow Dimension(None))
        return None


def check_input_shape(model: keras.Model, inputs) -> None:
    """One sentence naming the expected and the given shape, instead of a dump of the
    array or a silent answer, for a batch of the wrong rank or image size."""
    if len(model.inputs) != 1:
        return
    got = _shape_of(inputs)
    if got is None:
        return
    expected = tuple(model.inputs[0].shape)
    if len(got) == len(expected) and all(
            e is None or g is None or e == g for e, g in zip(expected, got)):
        return
    if len(got) == len(expected) - 1 and got == expected[1:]:
        hint = "add the batch axis (x[None])"
    elif len(got) != len(expected):
        hint = "images are (batch, height, width, channels)"
    else:
        hint = "resize the images (or rebuild the model with input_shape=) to match"
    raise ValueError(
        f"{model.name} takes inputs of shape {expected} (None: any size), got an array of "
        f"shape {got}: {hint}."
    )


def empty_prediction(model: keras.Model, inputs):
    """The answer to a batch of no images: an empty array of the output's shape (Keras's
    ``predict`` fails on it), None for a non-empty batch. Refused in one sentence when the
    output's size depends on the images."""
    shape = _shape_of(inputs)
    if not shape or shape[0] != 0 or len(model.outputs) != 1 or hasattr(inputs, "element_spec"):
        return None
    import numpy as np

    per_image = tuple(model.outputs[0].shape[1:])
    if any(dim is None for dim in per_image):
        raise ValueError(f"{model.name} was given an empty batch (shape {shape}) and its "
                         "output size depends on the images: pass at least one image.")
    return np.zeros((0, *per_image), dtype=keras.backend.standardize_dtype(model.outputs[0].dtype))


def check_input_rank(model: keras.Model, inputs) -> None:
    """``check_input_shape`` (kept under its former name)."""
    check_input_shape(model, inputs)
