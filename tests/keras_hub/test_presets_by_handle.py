"""keras-hub's habit of loading a preset by Hub handle: a published convolutional release
loads with ``ImageClassifier.from_preset("hf://org/<weight id>")`` and, as a whole
keras-hub preset, from ``hf://org/<weight id>-keras-hub`` (``Backbone.from_preset``
too), against the Hub-protocol server of ``tests.support.hub_server``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import keras
import numpy as np
import pytest

pytestmark = pytest.mark.needs("keras_hub")
keras_hub = pytest.importorskip("keras_hub", reason="keras-hub is optional and not installed")

import keras_gated as kg  # noqa: E402
import keras_gated.keras_hub  # noqa: E402,F401  (registers the keras-hub classes)
from keras_gated.cli import main  # noqa: E402
from tests.support.helpers import images, to_numpy  # noqa: E402
from tests.support.hub_fixtures import hf_home, hub  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[2]
WEIGHT_ID = "gresnet20.cifar10"
REPO = f"keras-gated/{WEIGHT_ID}"
X = images(3, (32, 32, 3), seed=5)


def pre_softmax(model: keras.Model, x: np.ndarray) -> np.ndarray:
    """The keras-gated classifier's logits: its pooled features through the head's
    kernel and bias, before the softmax."""
    pooled = keras.Model(model.inputs[0], model.get_layer("avg_pool").output)(x, training=False)
    kernel, bias = model.get_layer("predictions").get_weights()
    return to_numpy(pooled) @ kernel + bias


@pytest.fixture
def published(hub, tmp_path, capsys):  # noqa: F811
    """The released gresnet20.cifar10 as ``training.release --register`` leaves it (its
    keras_hub/ preset written afresh), published with ``keras-gated publish``; returns
    what the command printed."""
    from training.release import write_keras_hub_preset

    folder = tmp_path / "zoo" / WEIGHT_ID  # $KERAS_GATED_ZOO: the weights resolve here
    shutil.copytree(ROOT / "zoo" / WEIGHT_ID, folder, ignore=shutil.ignore_patterns("keras_hub"))
    assert write_keras_hub_preset(WEIGHT_ID, folder) == folder / "keras_hub"
    capsys.readouterr()
    assert main(["publish", str(folder), "--repo-id", REPO]) == 0
    return capsys.readouterr().out


def test_the_release_repo_loads_as_an_image_classifier_by_handle(published, hub):  # noqa: F811
    files = hub.files(REPO)
    assert {"config.json", "model.weights.h5", "task.json", "task.weights.h5"} <= set(files)
    assert not [name for name in files if name.startswith("keras_hub/")]
    classifier = keras_hub.models.ImageClassifier.from_preset(f"hf://{REPO}")
    expected = pre_softmax(kg.create_model(WEIGHT_ID), X)
    np.testing.assert_allclose(to_numpy(classifier.predict(X, verbose=0)), expected, atol=1e-4)
    # The same repo is still the Keras save folder of the whole model.
    model = keras.saving.load_model(f"hf://{REPO}")
    assert type(model).__name__ == "GatedModel"
    np.testing.assert_allclose(to_numpy(model.predict(X, verbose=0)),
                               to_numpy(kg.create_model(WEIGHT_ID).predict(X, verbose=0)),
                               atol=1e-6)


def test_the_preset_repo_loads_by_the_documented_handle(published, hub):  # noqa: F811
    handle = f"hf://{REPO}-keras-hub"
    assert f"from_preset('{handle}')" in published
    config = json.loads(hub.files(f"{REPO}-keras-hub")["config.json"])
    assert config["registered_name"] == "keras_gated>GatedBackbone"
    classifier = keras_hub.models.ImageClassifier.from_preset(handle)
    released = kg.create_model(WEIGHT_ID)
    np.testing.assert_allclose(to_numpy(classifier.predict(X, verbose=0)),
                               pre_softmax(released, X), atol=1e-4)
    backbone = keras_hub.models.Backbone.from_preset(handle)
    features = kg.create_model(WEIGHT_ID, include_top=False, pooling=None)
    np.testing.assert_allclose(to_numpy(backbone.predict(X, verbose=0)),
                               to_numpy(features.predict(X, verbose=0)), atol=1e-5)
