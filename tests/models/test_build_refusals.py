"""Building a model: no silent wrong model, and one clear sentence for bad arguments.

A global channels_first setting, unknown keywords, impossible input shapes and empty weight
tags are refused; every built model knows its class names, and decode_predictions never
guesses them.
"""

from __future__ import annotations

import warnings

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.datasets import CLASS_NAMES
from keras_gated.release.zoo_folder import save_zoo_folder
from tests.support.hub_fixtures import trained_ish


@pytest.fixture
def channels_first():
    keras.config.set_image_data_format("channels_first")
    try:
        yield
    finally:
        keras.config.set_image_data_format("channels_last")


def test_channels_first_setting_is_refused(channels_first):
    with pytest.raises(ValueError, match="channels_last") as error:
        kg.GResNet(8)
    assert "set_image_data_format('channels_last')" in str(error.value)
    with pytest.raises(ValueError, match="channels_first"):
        kg.create_model("gresnetfc2")


def test_unknown_keyword_names_the_constructor_and_its_arguments():
    with pytest.raises(TypeError) as error:
        kg.GResNet20(foo=1)
    message = str(error.value)
    assert "GResNet20() got an unexpected keyword argument 'foo'" in message
    assert "gate" in message and "weights" in message and "_resnet" not in message
    for constructor in (kg.ResNet50, kg.HighwayNet, kg.WideResNet, kg.PlainNet):
        with pytest.raises(TypeError, match=f"{constructor.__name__}.*arguments are"):
            constructor(**({"n": 1, "widen_factor": 1} if constructor is kg.WideResNet else {}), foo=1)
    with pytest.raises(ValueError, match="unexpected keyword argument 'foo'"):
        kg.create_model("gresnet20", foo=1)  # the registry path: a ValueError


@pytest.mark.parametrize(
    "shape, words",
    [((32, 32, 0), "positive integer"), ((32, 32), "(height, width, channels)"),
     ((32, -1, 3), "positive integer"), ((28, 28, 0), "positive integer")],
)
def test_impossible_input_shapes_are_refused(shape, words):
    build = kg.GResNetFC if shape[:2] == (28, 28) else kg.GResNet
    with pytest.raises(ValueError, match="input_shape") as error:
        build(2 if build is kg.GResNetFC else 8, input_shape=shape)
    assert words in str(error.value)


@pytest.mark.parametrize("name", ["gresnet20.", ".cifar10", "."])
def test_empty_weight_id_parts_are_refused(name):
    with pytest.raises(ValueError, match="non-empty"):
        kg.create_model(name)


def test_models_know_their_class_names(tmp_path):
    assert kg.GResNet(8).class_names == tuple(f"class{i}" for i in range(10))
    assert kg.GResNet(8, classes=3).class_names == ("class0", "class1", "class2")
    assert kg.GResNet(8, include_top=False).class_names is None
    model = kg.create_model("gresnetfc10.fashion_mnist")
    assert model.class_names == CLASS_NAMES["fashion_mnist"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the weights get a new head: said once, in a log
        other_head = kg.create_model("gresnetfc10.fashion_mnist", classes=3)
    assert other_head.class_names == ("class0", "class1", "class2")

    folder = tmp_path / "gresnet8.svhn"  # a zoo folder: the card carries the names
    names = [f"digit{i}" for i in range(10)]
    save_zoo_folder(
        trained_ish(kg.GResNet(8), seed=1), folder, weight_id="gresnet8.svhn",
        metrics={"test_accuracy": 0.5, "split": "test", "num_examples": 4},
        recipe="test", command="none", dataset_note="synthetic", class_names=names,
    )
    assert kg.GResNet(8, weights=str(folder)).class_names == tuple(names)


def test_decode_predictions_uses_the_model_and_never_guesses():
    model = kg.create_model("gresnetfc10.fashion_mnist")
    preds = np.eye(10, dtype="float32")[[3]]
    assert kg.decode_predictions(preds, top=1, model=model)[0][0][1] == "Dress"
    with pytest.raises(ValueError, match="model="):
        kg.decode_predictions(preds)
    with pytest.raises(ValueError, match="no class names"):
        kg.decode_predictions(preds, model=kg.GResNetFC(2, include_top=False))
    assert kg.decode_predictions(preds, top=1, class_names="cifar10")[0][0][1] == "cat"


@pytest.mark.parametrize("shape, words", [((32, 32, 3), "add the batch axis"),
                                          ((2, 32, 32), "(batch, height, width, channels)")])
def test_a_batch_of_the_wrong_rank_is_one_sentence(shape, words):
    import numpy as np

    model = kg.GResNet20()
    with pytest.raises(ValueError) as error:
        model(np.zeros(shape, "float32"))
    message = str(error.value)
    assert words in message and "(None, 32, 32, 3)" in message and len(message) < 400
