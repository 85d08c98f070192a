"""Under a mixed-precision policy the normalisation and the head compute in float32 (as
keras-hub's), so outputs are float32 probabilities; the gates' k stay float32."""

from __future__ import annotations

import keras
import numpy as np
import pytest

import keras_gated as kg
from tests.support.helpers import images, to_numpy

# (constructor, input shape), one per kind of head: conv + gates, FC + gates, head dropout.
MODELS = [
    (lambda: kg.GResNet20(), (32, 32, 3)),
    (lambda: kg.GResNetFC(2), (28, 28, 1)),
    (lambda: kg.HighwayNet(), (32, 32, 3)),
]


@pytest.fixture(params=["mixed_bfloat16", "mixed_float16"])
def mixed_policy(request):
    previous = keras.config.dtype_policy()
    keras.mixed_precision.set_global_policy(request.param)
    try:
        yield request.param
    finally:
        keras.mixed_precision.set_global_policy(previous)


@pytest.mark.parametrize("build, shape", MODELS)
def test_float32_probabilities_under_mixed_precision(mixed_policy, build, shape):
    model = build()
    assert model.get_layer("preprocessing").compute_dtype == "float32"
    assert model.get_layer("predictions").compute_dtype == "float32"
    out = model(images(2, shape), training=False)
    assert keras.backend.standardize_dtype(out.dtype) == "float32"
    np.testing.assert_allclose(to_numpy(out).sum(axis=1), 1.0, atol=1e-6)
    for weight in model.weights:
        if weight.name == "k":
            assert keras.backend.standardize_dtype(weight.dtype) == "float32"


def test_policy_is_restored():
    assert keras.config.dtype_policy().name == "float32"
