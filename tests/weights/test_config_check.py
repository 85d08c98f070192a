"""Weights carry the configuration that defines their function, and loading checks it.

Same weight shapes do not mean the same function (a gate, a shortcut type, batch norm):
weights saved with Keras's ``config.json`` beside them (save folders, ``zoo/`` folders,
registered tags) are refused by a model built with other function-defining arguments,
with one sentence naming the argument, both values and the matching call. Files without
a configuration still load by shape, with one warning.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.weights.load import ConfigurationMismatchError
from tests.support.helpers import images, to_numpy
from tests.support.hub_fixtures import trained_ish


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root``, by relative path."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def save_folder(model: keras.Model, folder: Path) -> str:
    keras.saving.save_model(model, folder, zipped=False)
    return str(folder)


CASES = {
    # id: (model the weights come from, model built with them, both values, matching call)
    "gate": (
        lambda w: kg.GResNet(8, weights=w),
        lambda w: kg.GResNet(8, gate="sigmoid", weights=w),
        ("gate='relu'", "gate='sigmoid'"),
        "GResNet(8, gate='relu', weights=",
    ),
    "fc_gate": (
        lambda w: kg.GResNetFC(2, gate="identity", weights=w),
        lambda w: kg.GResNetFC(2, weights=w),
        ("gate='identity'", "gate='relu'"),
        "GResNetFC(2, weights=",
    ),
    "shortcut": (
        lambda w: kg.GResNet(8, shortcut="zeropad", weights=w),
        lambda w: kg.GResNet(8, weights=w),
        ("shortcut='zeropad'", "shortcut='projection'"),
        "GResNet(8, weights=",
    ),
    "batch_norm": (
        lambda w: kg.WideResNet(1, 1, batch_norm=False, weights=w),
        lambda w: kg.WideResNet(1, 1, weights=w),
        ("batch_norm=False", "batch_norm=True"),
        "WideResNet(1, 1, weights=",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_function_changing_argument_is_refused(tmp_path, case):
    trained, built, argument, call = CASES[case]
    folder = save_folder(trained_ish(trained(None), seed=1), tmp_path / "saved")
    before = tree_hashes(tmp_path)
    with pytest.raises(ConfigurationMismatchError) as error:
        built(folder)
    message = str(error.value)
    assert isinstance(error.value, ValueError)
    for expected in (*argument, call, folder):
        assert expected in message, (expected, message)
    assert "\n" not in message
    assert tree_hashes(tmp_path) == before


def test_the_matching_call_loads_and_dropout_is_free(tmp_path):
    source = trained_ish(kg.WideResNet(1, 1, dropout=0.3), seed=2)
    folder = save_folder(source, tmp_path / "wrn")
    x = images(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a recorded, matching configuration: no warning
        model = kg.WideResNet(1, 1, weights=folder)  # another dropout rate: same function
    np.testing.assert_array_equal(
        to_numpy(model(x, training=False)), to_numpy(source(x, training=False))
    )


def test_registered_weights_refuse_another_gate():
    with pytest.raises(ConfigurationMismatchError) as error:
        kg.GResNet20(gate="sigmoid", weights="cifar10")
    message = str(error.value)
    for expected in ("gresnet20.cifar10", "gate='relu'", "gate='sigmoid'",
                     "GResNet20(gate='relu', weights='cifar10')"):
        assert expected in message
    with pytest.raises(ValueError, match="gate='relu'"):  # the registry path says the same
        kg.create_model("gresnet20.cifar10", gate="sigmoid")


def test_weights_without_configuration_warn_once(tmp_path):
    source = trained_ish(kg.GResNet(8), seed=3)
    path = tmp_path / "plain.weights.h5"
    source.save_weights(path)
    with pytest.warns(UserWarning) as warned:
        kg.GResNet(8, weights=str(path))
    messages = [str(w.message) for w in warned]
    assert len(messages) == 1, messages
    assert "without a configuration" in messages[0] and str(path) in messages[0]


def test_every_released_checkpoint_still_loads():
    for weight_id in kg.list_pretrained():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # caveats of the released weights
            model = kg.create_model(weight_id)
        assert model.class_names == kg.get_pretrained_cfg(weight_id).class_names, weight_id


def test_channel_mismatch_is_one_short_sentence(tmp_path):
    path = tmp_path / "rgb.weights.h5"
    kg.GResNet(8).save_weights(path)
    with pytest.raises(ValueError) as error:
        kg.GResNet(8, input_shape=(32, 32, 1), weights=str(path))
    message = str(error.value)
    assert "stem_conv/kernel" in message and "(3, 3, 1, 16)" in message
    assert "(3, 3, 3, 16)" in message
    assert len(message) < 400 and "\n" not in message and "value=" not in message


def test_released_tanh_highway_weights_build_their_tanh_net():
    """highwayfc50.fashion_mnist was trained with H = tanh: the tag builds that net, and
    a ReLU net is refused, naming the activation."""
    model = kg.HighwayFC(50, weights="fashion_mnist")
    highway = [layer for layer in model.layers if type(layer).__name__ == "Highway"]
    assert len(highway) == 50
    assert {keras.activations.serialize(layer.activation) for layer in highway} == {"tanh"}
    with pytest.raises(ConfigurationMismatchError, match="activation 'tanh'"):
        kg.HighwayFC(50, activation="relu", weights="fashion_mnist")


def test_a_shape_mismatch_reads_the_same_from_every_backends_error():
    """Keras's assign error names the value's shape as a tuple, or on torch as
    ``torch.Size([...])``: both give the same one line."""
    from keras_gated.weights.load import _first_mismatch

    for value in ("(3, 3, 3, 16)", "torch.Size([3, 3, 3, 16])"):
        error = ValueError(
            "A total of 1 objects could not be loaded. Example error message:\n\nThe shape ... "
            f"must match. variable.shape=(3, 3, 1, 16), Received: value.shape={value}. Target "
            "variable: <Variable path=stem_conv/kernel, shape=(3, 3, 1, 16), value=[[0.1]]>")
        assert _first_mismatch(error) == ("variable stem_conv/kernel has shape (3, 3, 1, 16) in "
                                          "the model but (3, 3, 3, 16) in the weights")
