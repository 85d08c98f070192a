"""The fastest correct training path per backend, made what ``model.fit`` gets by default.

Keras resolves ``compile(jit_compile="auto")`` to *no* XLA on a CPU-only TensorFlow
machine. For these convolutional nets XLA is the faster path there too (measured by
``python -m benchmarks.choices``), so keras-gated models are a ``Functional`` subclass whose
``"auto"`` picks XLA on TensorFlow CPUs as well. Anything the user sets explicitly
(``jit_compile=False``, ``run_eagerly=True``, a distribution strategy, op determinism)
wins, as in Keras. Other backends keep Keras's choice: JAX always compiles with XLA, and
torch runs eagerly unless asked for ``torch.compile``.
"""

from __future__ import annotations

import keras
from keras.src.models.functional import Functional
from keras.src.trainers.trainer import model_supports_jit

PACKAGE = "keras_gated"
XLA_ON_TENSORFLOW_CPU = True


@keras.saving.register_keras_serializable(package=PACKAGE)
class GatedModel(Functional):
    """A Keras functional model whose ``jit_compile="auto"`` is the fast path here, which
    names the expected input shape in one sentence when called on a batch of the wrong
    rank, and whose config keeps what ``keras.saving.load_model`` needs to give it back
    its keras-gated attributes."""

    #: Set by ``keras_gated.models.application``: gives a reloaded model back what
    #: ``get_config`` saved under ``"keras_gated"`` (timm's conveniences, class names).
    restore_extras = None

    def get_config(self) -> dict:
        config = super().get_config()
        extras = getattr(self, "_keras_gated_extras", None)  # a function: built when saved
        if extras is not None:
            config["keras_gated"] = extras()
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        config = dict(config)
        extras = config.pop("keras_gated", None)
        model = super().from_config(config, custom_objects)
        if extras is not None and GatedModel.restore_extras is not None:
            GatedModel.restore_extras(model, extras)
        return model

    def __call__(self, *args, **kwargs):
        # Checked before Keras's call wrapper, which would append a dump of the array.
        if args:
            check_input_rank(self, args[0])
        return super().__call__(*args, **kwargs)

    def _resolve_auto_jit_compile(self):
        if (XLA_ON_TENSORFLOW_CPU and keras.backend.backend() == "tensorflow"
                and not self._distribute_strategy and model_supports_jit(self)):
            return True
        return super()._resolve_auto_jit_compile()


def describe(model: keras.Model) -> dict:
    """The execution path a compiled model trains on: backend, XLA, precision, threads."""
    backend = keras.backend.backend()
    info = {
        "backend": backend,
        "jit_compile": bool(getattr(model, "jit_compile", False)),
        "dtype_policy": keras.config.dtype_policy().name,
    }
    if backend == "tensorflow":
        import tensorflow as tf

        intra = tf.config.threading.get_intra_op_parallelism_threads()
        info["intra_op_threads"] = intra or "all cores"
    return info


def describe_text(model: keras.Model) -> str:
    info = describe(model)
    parts = [f"backend {info['backend']}", f"XLA {'on' if info['jit_compile'] else 'off'}",
             info["dtype_policy"]]
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
