"""Shared zoo-folder pieces: the files a released zoo folder holds, and a small zoo folder
written for publishing tests."""

from pathlib import Path

import keras_gated as kg
from keras_gated.release import zoo_folder as kg_zoo
from tests.support.hub_fixtures import trained_ish

# A zoo folder's files; a convolutional release adds its keras-hub preset in keras_hub/ with those.
ZOO_FILES = {"README.md", "config.json", "metadata.json", "metrics.json", "model.weights.h5",
             "training_log.csv"}
KERAS_HUB_FILES = {"config.json", "metadata.json", "model.weights.h5", "task.json", "task.weights.h5"}

WEIGHT_ID = "gresnet8.cifar10"


def write_zoo(folder: Path) -> Path:
    """A small zoo folder of a 'trained' GResNet(8), with its training log."""
    log = folder.parent / "log.csv"
    folder.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("epoch,loss\n0,2.3\n")
    return kg_zoo.save_zoo_folder(
        trained_ish(kg.GResNet(8), seed=1), folder, weight_id=WEIGHT_ID,
        metrics={"test_accuracy": 0.5, "split": "test", "num_examples": 4},
        recipe="test", command="none", dataset_note="synthetic", training_log=log,
    )
