"""Batch normalisation that trains with TensorFlow's fused kernel.

    y = γ · (x − μ_B) / sqrt(σ²_B + ε) + β                     (Ioffe & Szegedy 2015, Alg. 1)
    moving_μ ← m · moving_μ + (1 − m) · μ_B,  moving_σ² ← m · moving_σ² + (1 − m) · σ²_B

Keras's ``BatchNormalization`` computes this as separate ops on every backend: the moments,
then the normalisation, and on TensorFlow their gradients op by op. TensorFlow has one
kernel for the whole forward pass and one for the backward pass (``FusedBatchNormV3``;
oneDNN's on a CPU, cuDNN's on a GPU), which read each feature map about half as often.
``keras_gated.layers.BatchNormalization`` is Keras's layer with that kernel in training
on TensorFlow, for the case the nets of this zoo use (4-D channels-last float32 inputs,
centred and scaled, no renormalisation, no mask); everything else, inference and the other
backends run Keras's own code. It computes the same function and the same moving averages:
the fused kernel reports the batch variance with Bessel's correction, and the layer turns
it back into the biased σ²_B that Keras averages. Its weights and configuration are
Keras's, so weights load either way.
"""

from __future__ import annotations

from typing import Any

import keras

PACKAGE = "keras_gated"


@keras.saving.register_keras_serializable(package=PACKAGE)
class BatchNormalization(keras.layers.BatchNormalization):
    """``keras.layers.BatchNormalization``, trained with TensorFlow's fused kernel where
    it applies (see the module docstring); same arguments, weights and function."""

    def call(self, inputs: Any, training: bool | None = None, mask: Any = None) -> Any:
        if training and self.trainable and self._fused_kernel_applies(inputs, mask):
            return self._fused_training_call(inputs)
        return super().call(inputs, training=training, mask=mask)

    def _fused_kernel_applies(self, inputs: Any, mask: Any) -> bool:
        return (
            keras.backend.backend() == "tensorflow"
            and mask is None
            and not self.renorm
            and self.center
            and self.scale
            and len(inputs.shape) == 4
            and self.axis in (-1, 3)
            and str(inputs.dtype) in ("float32", "<dtype: 'float32'>")
        )

    def _fused_training_call(self, inputs: Any) -> Any:
        import tensorflow as tf

        outputs, mean, corrected_variance = tf.compat.v1.nn.fused_batch_norm(
            inputs, self.gamma, self.beta, epsilon=self.epsilon, data_format="NHWC",
            is_training=True,
        )
        count = tf.cast(tf.size(inputs) // tf.shape(inputs)[-1], corrected_variance.dtype)
        variance = corrected_variance * (count - 1.0) / count  # the biased σ²_B Keras keeps
        momentum = self.momentum
        self.moving_mean.assign(self.moving_mean * momentum + mean * (1.0 - momentum))
        self.moving_variance.assign(
            self.moving_variance * momentum + variance * (1.0 - momentum)
        )
        return outputs
