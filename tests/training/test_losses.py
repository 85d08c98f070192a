"""keras_gated.training.losses: label-smoothed cross-entropy of softmax outputs against
integer labels, checked against PyTorch's ``cross_entropy(label_smoothing=ε)`` and Keras's
one-hot ``CategoricalCrossentropy``; a recipe's ε reaches ``compile``."""

from __future__ import annotations

import dataclasses

import keras
import numpy as np
import pytest

from keras_gated.training.losses import SmoothedSparseCrossentropy, recipe_loss
from keras_gated.training.recipes import get_recipe


def _batch(n=6, classes=5, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, classes)).astype("float32")
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return rng.integers(0, classes, n), probs


@pytest.mark.needs("torch")
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.3])
def test_the_loss_is_torchs_label_smoothed_cross_entropy(epsilon):
    import torch

    labels, probs = _batch()
    ours = float(keras.ops.convert_to_numpy(SmoothedSparseCrossentropy(epsilon)(labels, probs)))
    # PyTorch takes logits: log p are logits whose softmax is p.
    reference = torch.nn.functional.cross_entropy(
        torch.log(torch.from_numpy(probs)), torch.from_numpy(labels), label_smoothing=epsilon)
    assert ours == pytest.approx(float(reference), rel=1e-5)


@pytest.mark.parametrize("epsilon", [0.0, 0.2])
def test_the_loss_is_keras_one_hot_cross_entropy_and_plain_at_zero(epsilon):
    labels, probs = _batch(seed=1)
    ours = float(keras.ops.convert_to_numpy(SmoothedSparseCrossentropy(epsilon)(labels, probs)))
    one_hot = np.eye(5, dtype="float32")[labels]
    keras_smoothed = keras.losses.CategoricalCrossentropy(label_smoothing=epsilon)(one_hot, probs)
    assert ours == pytest.approx(float(keras.ops.convert_to_numpy(keras_smoothed)), rel=1e-5)
    if epsilon == 0.0:
        plain = keras.losses.SparseCategoricalCrossentropy()(labels, probs)
        assert ours == pytest.approx(float(keras.ops.convert_to_numpy(plain)), rel=1e-5)


def test_the_loss_round_trips_and_refuses_a_smoothing_outside_0_1():
    loss = SmoothedSparseCrossentropy(0.1)
    again = keras.losses.deserialize(keras.losses.serialize(loss))
    assert isinstance(again, SmoothedSparseCrossentropy) and again.label_smoothing == 0.1
    with pytest.raises(ValueError, match=r"label_smoothing=1.0 must be in \[0, 1\)"):
        SmoothedSparseCrossentropy(1.0)


def test_a_recipes_smoothing_chooses_the_loss_and_is_described():
    recipe = get_recipe("wrn_cifar_budget")
    assert recipe.label_smoothing == 0.0 and recipe_loss(recipe) == "sparse_categorical_crossentropy"
    smoothed = dataclasses.replace(recipe, label_smoothing=0.1)
    loss = recipe_loss(smoothed)
    assert isinstance(loss, SmoothedSparseCrossentropy) and loss.label_smoothing == 0.1
    assert "label smoothing 0.1" in smoothed.describe() and "smoothing" not in recipe.describe()
    with pytest.raises(ValueError, match=r"label_smoothing=1.5 must be in \[0, 1\)"):
        dataclasses.replace(recipe, label_smoothing=1.5)
