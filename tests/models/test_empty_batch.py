"""A batch of zero images gives an empty answer, not an error."""

from __future__ import annotations


import numpy as np

import keras_gated as kg


def test_a_batch_of_zero_images_gives_an_empty_answer():
    model = kg.create_model("plainnet10")
    out = model.predict(np.zeros((0, 28, 28, 1), "float32"), verbose=0)
    assert out.shape == (0, 10)
