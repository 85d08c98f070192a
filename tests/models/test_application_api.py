"""The keras.applications contract: signature, head, pooling, input handling, errors."""

import inspect

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.registry import get_model_entry
from tests.support.helpers import images, to_numpy

APPLICATION_ARGS = ("include_top", "weights", "input_tensor", "input_shape", "pooling",
                    "classes", "classifier_activation", "include_preprocessing", "name")


def _one_entry_per_constructor() -> list:
    """For every registered constructor, one of its entries (a quick one if it has one)."""
    chosen = {}
    for name in kg.list_models():
        entry = get_model_entry(name)
        current = chosen.get(entry.constructor)
        if current is None or (current.slow and not entry.slow):
            chosen[entry.constructor] = entry
    return [
        pytest.param(entry.name, marks=[pytest.mark.slow] if entry.slow else [],
                     id=entry.constructor.__name__)
        for entry in chosen.values()
    ]


@pytest.mark.parametrize("name", _one_entry_per_constructor())
def test_signature_defaults_are_what_the_model_gets(name):
    """Every registered constructor shows the applications arguments with their defaults,
    and a model built with them has those properties: a head (``include_top=True``) of
    ``classes`` outputs ending in a softmax, the in-model normalisation, random weights
    (``weights=None``), the registry name, and the default input shape."""
    entry = get_model_entry(name)
    params = inspect.signature(entry.constructor).parameters
    assert all(arg in params for arg in APPLICATION_ARGS)
    defaults = {arg: params[arg].default for arg in APPLICATION_ARGS}
    assert {k: defaults[k] for k in ("include_top", "weights", "pooling", "name")} == {
        "include_top": True, "weights": None, "pooling": None, "name": None}
    inspect.signature(entry.constructor).bind(**entry.kwargs)  # the registered arguments fit
    model = entry.build()
    head = model.get_layer("predictions")
    assert head.units == defaults["classes"] == model.num_classes
    assert head.activation is keras.activations.get(defaults["classifier_activation"])
    assert ("preprocessing" in [layer.name for layer in model.layers]) is defaults["include_preprocessing"]
    assert model.pretrained_cfg is None and model.name == name
    x = images(1, model.input_shape[1:])
    np.testing.assert_allclose(to_numpy(model(x, training=False)).sum(), 1.0, rtol=1e-4)


def test_head_contract_avg_pool_then_predictions():
    model = kg.GResNet20(classes=7)
    assert model.layers[-2].name == "avg_pool"
    head = model.layers[-1]
    assert head.name == "predictions" and head.units == 7
    assert isinstance(model.get_layer("avg_pool"), keras.layers.GlobalAveragePooling2D)


def test_head_dropout_sits_between_avg_pool_and_predictions():
    model = kg.HighwayNet()
    names = [layer.name for layer in model.layers[-3:]]
    assert names == ["avg_pool", "head_dropout", "predictions"]


@pytest.mark.parametrize("pooling, shape", [(None, (2, 8, 8, 64)), ("avg", (2, 64)), ("max", (2, 64))])
def test_include_top_false_and_pooling(pooling, shape):
    model = kg.PreActResNet20(include_top=False, pooling=pooling)
    assert "predictions" not in [layer.name for layer in model.layers]
    assert to_numpy(model(images(2))).shape == shape


def test_fc_net_features_are_a_vector():
    model = kg.GResNetFC(4, include_top=False, pooling="avg")
    assert to_numpy(model(images(3, (28, 28, 1)))).shape == (3, 50)


def test_logits_with_classifier_activation_none():
    model = kg.GResNet20(classifier_activation=None)
    out = to_numpy(model(images(2), training=False))
    assert not np.allclose(out.sum(axis=1), 1.0)


def test_preprocessing_layer_normalises_raw_pixels():
    model = kg.GResNet20()
    layer = model.get_layer("preprocessing")
    x = np.full((1, 32, 32, 3), [125.3, 123.0, 113.9], dtype="float32")
    np.testing.assert_allclose(to_numpy(layer(x)), 0.0, atol=1e-5)
    no_pre = kg.GResNet20(include_preprocessing=False)
    assert "preprocessing" not in [layer.name for layer in no_pre.layers]


def test_input_tensor_and_custom_shape():
    tensor = keras.Input((48, 40, 3))
    model = kg.GWideResNet(1, 1, input_tensor=tensor)
    assert model.inputs[0] is tensor
    assert to_numpy(model(images(1, (48, 40, 3)))).shape == (1, 10)
    grey = kg.PreActResNet20(input_shape=(16, 16, 1))
    assert to_numpy(grey(images(1, (16, 16, 1)))).shape == (1, 10)


def test_default_names_are_registry_names():
    assert kg.GResNet20().name == "gresnet20" and kg.is_model("gresnet20")
    assert kg.GWideResNet(2, 4).name == "gwrn_16_4" and kg.is_model("gwrn_16_4")
    assert kg.GResNet20(name="mine").name == "mine"
    # A configuration that is not registered is named by the same rule, and that name is
    # not one create_model knows.
    unregistered = kg.GWideResNet(1, 1, batch_norm=False)
    assert unregistered.name == "gwrn_10_1_nobn" and not kg.is_model(unregistered.name)
    with pytest.raises(ValueError, match="Unknown model name 'gwrn_10_1_nobn'"):
        kg.create_model("gwrn_10_1_nobn")


def test_widen_factor_is_the_second_argument_and_k_its_deprecated_name():
    assert list(inspect.signature(kg.GWideResNet).parameters)[:2] == ["n", "widen_factor"]
    by_position = kg.GWideResNet(1, 2)
    by_name = kg.GWideResNet(n=1, widen_factor=2)
    with pytest.warns(DeprecationWarning, match="widen_factor"):
        by_old_name = kg.WideResNet(n=1, k=2)
    assert by_position.name == by_name.name == "gwrn_10_2" and by_old_name.name == "wrn_10_2"
    assert by_old_name.get_layer("stage1_unit1").filters == 32
    with pytest.raises(TypeError, match="pass only `widen_factor`"):
        kg.GWideResNet(1, widen_factor=2, k=2)


# --- errors: ValueError naming the argument and what is allowed -------------------------
def test_bad_pooling():
    with pytest.raises(ValueError, match=r"pooling.*None, 'avg', 'max'"):
        kg.GResNet20(pooling="mean")


def test_bad_classifier_activation():
    with pytest.raises(ValueError, match="classifier_activation"):
        kg.GResNet20(classifier_activation="soft-max")


def test_bad_classes():
    with pytest.raises(ValueError, match="classes"):
        kg.GResNet20(classes=0)


def test_input_shape_too_small():
    with pytest.raises(ValueError, match="input_shape.*at least 8"):
        kg.GResNet20(input_shape=(4, 4, 3))
    with pytest.raises(ValueError, match="input_shape.*at least 32"):
        kg.ResNet50(input_shape=(16, 16, 3))


def test_bad_block_and_depth():
    with pytest.raises(ValueError, match="basic, bottleneck"):
        kg.PreActResNet(20, block="wide")
    with pytest.raises(ValueError, match="fits no block type"):
        kg.PreActResNet(21)
    with pytest.raises(ValueError, match="does not fit block='bottleneck'"):
        kg.GResNet(26, block="bottleneck")
    with pytest.raises(ValueError, match="must be even"):
        kg.ResNetFC(3)


def test_block_choice_by_depth():
    assert kg.PreActResNet(164).get_layer("stage1_unit1").block == "bottleneck"
    assert kg.PreActResNet(110).get_layer("stage1_unit1").block == "basic"
    assert kg.PreActResNet(29).get_layer("stage1_unit1").block == "bottleneck"


def test_weights_when_none_are_released():
    with pytest.raises(ValueError, match="No weights are released for 'gwrn_40_4'"):
        kg.GWideResNet(6, 4, weights="cifar10")


def test_weights_from_a_local_file(tmp_path):
    source = kg.GResNetFC(2)
    path = tmp_path / "fc.weights.h5"
    source.save_weights(path)
    copy = kg.GResNetFC(2, weights=str(path))
    x = images(2, (28, 28, 1))
    np.testing.assert_allclose(to_numpy(copy(x)), to_numpy(source(x)), rtol=1e-6)


def test_preprocess_input_and_decode_predictions():
    x = kg.preprocess_input(np.arange(6, dtype="uint8").reshape(1, 1, 2, 3))
    assert x.dtype == np.float32 and x.max() == 5.0
    preds = np.eye(10, dtype="float32")[[3, 8]]
    decoded = kg.decode_predictions(preds, top=2, class_names="cifar10")
    assert decoded[0][0][:2] == (3, "cat") and decoded[1][0][:2] == (8, "ship")
    assert kg.decode_predictions(preds, top=1, class_names="fashion_mnist")[0][0][1] == "Dress"
    with pytest.raises(ValueError, match="3 class names"):
        kg.decode_predictions(preds, class_names=["a", "b", "c"])
