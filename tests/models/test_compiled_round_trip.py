"""A compiled keras-gated model saved to ``.keras`` comes back compiled: the same
optimizer (with its state), loss and metrics, so ``fit`` and ``evaluate`` go on after
``keras.saving.load_model`` as they do for a plain Keras model."""

from __future__ import annotations

import warnings

import keras
import numpy as np

import keras_gated as kg
from tests.support.helpers import images, to_numpy


def _compiled_and_trained():
    keras.utils.set_random_seed(0)
    model = kg.GResNet(8, classes=2)
    model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x = images(8, (32, 32, 3))
    y = np.arange(8) % 2
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    return model, x, y


def test_a_loaded_model_is_compiled_as_saved_and_trains_on(tmp_path):
    model, x, y = _compiled_and_trained()
    model.save(tmp_path / "m.keras")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # Keras warns when it skips compile
        loaded = keras.saving.load_model(tmp_path / "m.keras")
    assert isinstance(loaded.optimizer, keras.optimizers.SGD)
    assert int(loaded.optimizer.iterations) == int(model.optimizer.iterations) == 2
    for saved, back in zip(model.optimizer.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(to_numpy(saved), to_numpy(back))  # momentum kept

    assert np.allclose(loaded.evaluate(x, y, verbose=0), model.evaluate(x, y, verbose=0),
                       atol=1e-5)
    # One more epoch from the same state gives the same weights as the original's.
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    loaded.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(model.weights, loaded.weights):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), atol=1e-5)
