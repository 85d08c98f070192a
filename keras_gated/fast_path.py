"""The fastest correct training path per backend, made what ``model.fit`` gets by default.

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

import os

import keras
from keras.src.models.functional import Functional
from keras.src.trainers.trainer import model_supports_jit

from keras_gated.tensorflow_cpu import onednn_enabled

PACKAGE = "keras_gated"


class FastPathModel(Functional):
    """A Keras functional model whose ``jit_compile="auto"`` is the fast path here, and
    which names the expected input shape in one sentence when called on a batch of the
    wrong rank. ``keras_gated.models.gated_model.GatedModel``, the class every
    constructor returns, builds on it."""

    def __call__(self, *args, **kwargs):
        # Checked before Keras's call wrapper, which would append a dump of the array.
        if args:
            check_input_rank(self, args[0])
        return super().__call__(*args, **kwargs)

    def compile(self, *args, **kwargs):
        self._xla_predict = False  # set again below when jit_compile="auto" chooses it
        super().compile(*args, **kwargs)

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
    info = describe(model)
    xla = "on" if info["jit_compile"] else "off"
    if info["xla_predict"] != info["jit_compile"]:
        xla = f"{xla} for training, {'on' if info['xla_predict'] else 'off'} for predict"
    parts = [f"backend {info['backend']}", f"XLA {xla}", info["dtype_policy"]]
    if "onednn" in info:
        parts.append(f"oneDNN {'on' if info['onednn'] else 'off'}")
    if "intra_op_threads" in info:
        parts.append(f"intra-op threads: {info['intra_op_threads']}")
    return ", ".join(parts)


def check_input_rank(model: keras.Model, inputs) -> None:
    """One sentence, instead of a dump of the array, for a batch of the wrong rank."""
    if len(model.inputs) != 1 or not hasattr(inputs, "shape"):
        return
    expected = tuple(model.inputs[0].shape)
    got = tuple(inputs.shape)
    if len(got) != len(expected):
        hint = ("add the batch axis (x[None])" if len(got) == len(expected) - 1 and
                got == expected[1:] else "images are (batch, height, width, channels)")
        raise ValueError(
            f"{model.name} takes inputs of shape {expected} (None: any size), got an array of "
            f"shape {got}: {hint}."
        )
