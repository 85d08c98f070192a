"""keras_gated.layers.BatchNormalization: Keras's function, moving averages and gradients,
with TensorFlow's fused kernel in training where it applies."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from keras_gated.layers.batch_norm import BatchNormalization
from tests.support.helpers import to_numpy


def twins(shape, **kwargs):
    """Keras's layer and ours, built alike, with the same non-trivial weights."""
    ours, theirs = BatchNormalization(**kwargs), keras.layers.BatchNormalization(**kwargs)
    ours.build(shape)
    theirs.build(shape)
    rng = np.random.default_rng(0)
    weights = [rng.normal(1, 0.3, w.shape).astype("float32") for w in theirs.weights]
    weights[3] = np.abs(weights[3])  # a variance
    theirs.set_weights(weights)
    ours.set_weights(weights)
    return ours, theirs


@pytest.mark.parametrize("shape", [(8, 6, 5, 4), (3, 7)])
@pytest.mark.parametrize("training", [True, False])
def test_same_outputs_and_moving_averages_as_keras(shape, training):
    ours, theirs = twins(shape, momentum=0.9, epsilon=1e-5)
    x = np.random.default_rng(1).normal(2, 3, shape).astype("float32")
    np.testing.assert_allclose(to_numpy(ours(x, training=training)),
                               to_numpy(theirs(x, training=training)), atol=2e-5, rtol=1e-5)
    for mine, keras_weight in zip(ours.weights, theirs.weights):
        np.testing.assert_allclose(to_numpy(mine), to_numpy(keras_weight), atol=1e-6, rtol=1e-6,
                                   err_msg=mine.path)
    assert training is False or not np.allclose(to_numpy(ours.moving_mean), 1.0, atol=0.2)


def test_tensorflow_trains_through_the_fused_kernel_with_keras_gradients():
    if keras.backend.backend() != "tensorflow":
        pytest.skip("the fused kernel is TensorFlow's")
    import tensorflow as tf

    shape = (8, 6, 5, 4)
    ours, theirs = twins(shape, momentum=0.9, epsilon=1e-5)
    x = tf.constant(np.random.default_rng(2).normal(0, 2, shape).astype("float32"))
    upstream = tf.constant(np.random.default_rng(3).normal(0, 1, shape).astype("float32"))

    def gradients(layer):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(layer(x, training=True) * upstream)
        return tape.gradient(loss, [x, layer.gamma, layer.beta])

    for mine, keras_grad in zip(gradients(ours), gradients(theirs)):
        np.testing.assert_allclose(mine.numpy(), keras_grad.numpy(), atol=1e-4, rtol=1e-4)

    graph = tf.function(lambda v: ours(v, training=True)).get_concrete_function(x).graph
    op_types = {op.type for op in graph.get_operations()}
    assert "FusedBatchNormV3" in op_types and "Mean" not in op_types
    inference = tf.function(lambda v: ours(v, training=False)).get_concrete_function(x).graph
    assert "FusedBatchNormV3" not in {op.type for op in inference.get_operations()}


def test_it_saves_and_loads_as_itself(tmp_path):
    model = keras.Sequential([keras.Input((4, 4, 3)), BatchNormalization(name="bn")])
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert type(loaded.get_layer("bn")) is BatchNormalization
