"""keras-hub's habits: a generic ``ImageClassifier`` on a ``GatedBackbone`` round-trips
through a preset with its head, gives logits, and loads without ``num_classes``."""

import json

import numpy as np
import pytest

pytestmark = pytest.mark.needs("keras_hub")
keras_hub = pytest.importorskip("keras_hub", reason="keras-hub is optional and not installed")

from keras_gated.keras_hub import GatedBackbone  # noqa: E402
from tests.helpers import images, to_numpy  # noqa: E402


def test_a_generic_image_classifier_round_trips_with_its_head(tmp_path):
    backbone = GatedBackbone("gresnet20", image_shape=(16, 16, 3))
    classifier = keras_hub.models.ImageClassifier(backbone=backbone, num_classes=10)
    x = images(3, (16, 16, 3))
    before = to_numpy(classifier.predict(x, verbose=0))
    preset = tmp_path / "preset"
    classifier.save_to_preset(str(preset))
    loaded = keras_hub.models.ImageClassifier.from_preset(str(preset))
    after = to_numpy(loaded.predict(x, verbose=0))
    assert after.shape == (3, 10)
    np.testing.assert_allclose(after, before, atol=1e-5)
    np.testing.assert_array_equal(to_numpy(loaded.output_dense.kernel),
                                  to_numpy(classifier.output_dense.kernel))
    assert json.loads((preset / "task.json").read_text())["config"]["num_classes"] == 10


def test_a_keras_gated_preset_gives_logits_without_num_classes(tmp_path):
    from keras_gated.keras_hub import save_classifier_preset

    preset = tmp_path / "gresnet20_cifar10"
    save_classifier_preset("gresnet20.cifar10", preset)
    classifier = keras_hub.models.ImageClassifier.from_preset(str(preset))
    logits = to_numpy(classifier.predict(images(2, (32, 32, 3)), verbose=0))
    assert logits.shape == (2, 10)
    assert not np.allclose(logits.sum(-1), 1.0, atol=1e-3)
    assert (logits < 0).any()
