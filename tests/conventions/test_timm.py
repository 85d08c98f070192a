"""timm's habits: ``create_model(weight_id, pretrained=False)``, ``get_classifier``,
``num_features``, ``in_chans``, ``global_pool``, ``drop_rate`` and ``feature_info``."""

import numpy as np
import pytest

import keras_gated as kg

WEIGHT_ID = "gresnet20.cifar10"


def _images(channels: int = 3, size: int = 32) -> np.ndarray:
    return np.random.default_rng(0).uniform(0, 255, (2, size, size, channels)).astype("float32")


def _max_weight_diff(a, b) -> float:
    return max(float(np.abs(x - y).max()) for x, y in zip(a.get_weights(), b.get_weights()))


def test_pretrained_false_builds_fresh_weights_with_the_weight_ids_configuration():
    released = kg.create_model(WEIGHT_ID, pretrained=True)
    fresh = kg.create_model(WEIGHT_ID, pretrained=False)
    assert fresh.pretrained_cfg is None
    assert fresh.num_classes == released.num_classes == 10
    assert fresh.input_shape == released.input_shape
    assert [w.shape for w in fresh.get_weights()] == [w.shape for w in released.get_weights()]
    assert _max_weight_diff(fresh, released) > 0.1
    assert released.pretrained_cfg["weight_id"] == WEIGHT_ID
