"""The training loss of a recipe: cross-entropy of the model's softmax outputs against
integer labels, with optional label smoothing (Szegedy et al. 2016, §7):

    L = −Σ_c q_c · log p_c,   q_c = (1 − ε)·1[c = y] + ε / C

for C classes. ε = 0 is plain sparse categorical cross-entropy; the GPU lease's compiled
step (``training/lease/device_step.py``) computes the same per-example loss.
"""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_gated_training")
class SmoothedSparseCrossentropy(keras.losses.Loss):
    """``L`` of the module docstring, averaged over the batch, for integer labels and
    softmax outputs (Keras's ``CategoricalCrossentropy(label_smoothing=ε)`` on one-hot
    labels, without making them)."""

    def __init__(self, label_smoothing: float = 0.0, name: str = "smoothed_sparse_crossentropy",
                 **kwargs) -> None:
        super().__init__(name=name, **kwargs)
        if not 0.0 <= float(label_smoothing) < 1.0:
            raise ValueError(f"label_smoothing={label_smoothing} must be in [0, 1): 0.1 is usual.")
        self.label_smoothing = float(label_smoothing)

    def call(self, y_true, y_pred):
        classes = ops.shape(y_pred)[-1]
        labels = ops.cast(ops.reshape(y_true, (-1,)), "int32")
        target = ops.one_hot(labels, classes, dtype=y_pred.dtype)
        target = target * (1.0 - self.label_smoothing) + self.label_smoothing / classes
        return keras.losses.categorical_crossentropy(target, y_pred)

    def get_config(self) -> dict:
        return {**super().get_config(), "label_smoothing": self.label_smoothing}


def recipe_loss(recipe) -> str | keras.losses.Loss:
    """What ``compile`` takes as the loss of ``recipe``: Keras's own sparse categorical
    cross-entropy without label smoothing, ``SmoothedSparseCrossentropy`` with it."""
    if not recipe.label_smoothing:
        return "sparse_categorical_crossentropy"
    return SmoothedSparseCrossentropy(recipe.label_smoothing)
