"""keras-hub: a keras-gated backbone in ImageClassifier, with pyramid_outputs; a preset folder
that Backbone.from_preset loads back; a generic ImageClassifier on a GatedBackbone that
round-trips through a preset with its head; a released zoo folder's preset that
ImageClassifier.from_preset loads without num_classes, giving logits."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.needs("keras_hub")
keras_hub = pytest.importorskip("keras_hub", reason="keras-hub is optional and not installed")

from keras_gated.keras_hub import GatedBackbone, save_preset  # noqa: E402
from tests.support.helpers import images, to_numpy  # noqa: E402


def test_image_classifier_trains_on_a_gated_backbone():
    backbone = GatedBackbone("gresnet20", {"k_init": 0.5}, image_shape=(16, 16, 3))
    assert sorted(backbone.pyramid_outputs) == ["P0", "P1", "P2"]
    assert backbone.pyramid_outputs["P2"].shape[1:] == (4, 4, 64)
    classifier = keras_hub.models.ImageClassifier(backbone=backbone, num_classes=3)
    x, y = images(4, (16, 16, 3)), np.array([0, 1, 2, 0])
    history = classifier.fit(x, y, batch_size=2, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert to_numpy(classifier.predict(x, verbose=0)).shape == (4, 3)


def test_preset_round_trip_gives_identical_outputs(tmp_path):
    backbone = save_preset("gwrn_16_2", tmp_path / "preset", image_shape=(16, 16, 3), gate="sigmoid")
    config = json.loads((tmp_path / "preset" / "config.json").read_text())
    assert config["registered_name"] == "keras_gated>GatedBackbone"
    assert (tmp_path / "preset" / "metadata.json").is_file()
    loaded = keras_hub.models.Backbone.from_preset(str(tmp_path / "preset"))
    assert isinstance(loaded, GatedBackbone) and loaded.model_kwargs == {"gate": "sigmoid"}
    x = images(2, (16, 16, 3))
    np.testing.assert_array_equal(to_numpy(loaded(x)), to_numpy(backbone(x)))


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


def test_fully_connected_nets_are_refused():
    with pytest.raises(ValueError, match="convolutional"):
        GatedBackbone("gresnetfc2")


ZOO = __import__("pathlib").Path(__file__).resolve().parents[2] / "zoo"


def test_a_zoo_folder_loads_with_keras_hubs_from_preset():
    import warnings

    import keras_gated as kg
    from keras_gated.keras_hub import GatedImageClassifier

    preset = str(ZOO / "gresnet20.cifar10" / "keras_hub")
    classifier = keras_hub.models.ImageClassifier.from_preset(preset)
    assert isinstance(classifier, GatedImageClassifier)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the superseded checkpoint's caveat
        released = kg.create_model("gresnet20", weights="cifar10")
    x = images(3, (32, 32, 3))
    logits = to_numpy(classifier.predict(x, verbose=0))  # keras-hub classifiers give logits
    probabilities = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    np.testing.assert_allclose(probabilities, to_numpy(released.predict(x, verbose=0)), atol=1e-5)
    assert not np.allclose(logits.sum(-1), 1.0)
    backbone = keras_hub.models.Backbone.from_preset(preset)
    assert isinstance(backbone, GatedBackbone) and sorted(backbone.pyramid_outputs) == ["P0", "P1", "P2"]


def test_a_fully_connected_weight_id_has_no_keras_hub_preset(tmp_path):
    from keras_gated.keras_hub import save_classifier_preset

    with pytest.raises(ValueError, match="convolutional"):
        save_classifier_preset("gresnetfc10.fashion_mnist", tmp_path / "preset")
    assert not (tmp_path / "preset").exists()


def test_the_integration_module_does_not_shadow_the_keras_hub_package():
    import sys

    import keras_gated.keras_hub as integration

    assert sys.modules["keras_hub"] is keras_hub and keras_hub is not integration
    assert "keras_gated" not in keras_hub.__file__ and hasattr(keras_hub.models, "Backbone")
