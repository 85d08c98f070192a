"""Shared model choices: one per constructor for tests that sweep the registry, and the
tiny compiled net of the backup tests."""

import keras
import pytest

import keras_gated as kg
from keras_gated.registry import get_model_entry


def one_per_constructor() -> list:
    """One registered name per constructor: its first quick entry in natural order (its
    first entry, marked slow, when every entry is slow)."""
    chosen: dict = {}
    for name in kg.list_models():
        constructor = get_model_entry(name).constructor
        current = chosen.get(constructor)
        if current is None or (get_model_entry(current).slow and not get_model_entry(name).slow):
            chosen[constructor] = name
    return [
        pytest.param(name, marks=pytest.mark.slow) if get_model_entry(name).slow else name
        for name in chosen.values()
    ]


def compiled_tiny_fc() -> keras.Model:
    """A two-block gated FC net, compiled with SGD: enough to save and restore a backup."""
    model = kg.GResNetFC(2, classes=2)
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="sparse_categorical_crossentropy")
    return model
