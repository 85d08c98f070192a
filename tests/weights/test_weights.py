"""Pretrained configs, the ``weights=`` argument, and loading with head adaptation (local
files only; the Hub and the cache are in test_hub.py)."""

from __future__ import annotations

import logging

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.cli import main
from keras_gated.weights import (
    PretrainedCfg,
    get_pretrained_cfg,
    list_pretrained,
    pretrained_cfgs_overlay,
    register_pretrained,
    unregister_pretrained,
)
from keras_gated.weights.sources import parse_hf_ref
from tests.support.helpers import images, to_numpy
from tests.support.hub_fixtures import trained_ish

FAKE_SHA = "0" * 64


def cfg_for(weight_id: str, classes: int = 10, sha256: str = FAKE_SHA, **kwargs) -> PretrainedCfg:
    fields = {
        "dataset": "synthetic test data",
        "class_names": tuple(f"class{i}" for i in range(classes)),
        "input_shape": (32, 32, 3),
        **kwargs,
    }
    return PretrainedCfg(weight_id=weight_id, classes=classes, sha256=sha256, **fields)


def outputs_up_to(model: keras.Model, last: str, x: np.ndarray) -> dict[str, np.ndarray]:
    """Inference output of every layer from the input up to and including ``last``."""
    names = [layer.name for layer in model.layers]
    layers = model.layers[1 : names.index(last) + 1]
    probe = keras.Model(model.input, [layer.output for layer in layers])
    return {layer.name: to_numpy(y) for layer, y in zip(layers, probe(x, training=False))}


@pytest.fixture
def pretrained_file(tmp_path):
    """A 'trained' GResNet(8) (10 classes) and its .weights.h5 file."""
    model = trained_ish(kg.GResNet(8), seed=1)
    path = tmp_path / "gresnet8.weights.h5"
    model.save_weights(path)
    return model, path


# ------------------------------------------------------------------ pretrained configs


def test_config_defaults_and_validation():
    cfg = cfg_for("gresnet8.cifar10")
    assert (cfg.arch, cfg.tag, cfg.hf_hub_id) == (
        "gresnet8",
        "cifar10",
        "keras-gated/gresnet8.cifar10",
    )
    assert cfg.revision is None and cfg.file_name == "model.weights.h5"
    with pytest.raises(ValueError, match="64-character"):
        cfg_for("gresnet8.cifar10", sha256="abc")
    with pytest.raises(ValueError, match="name.tag"):
        cfg_for("GResNet8")
    with pytest.raises(ValueError, match="3 class names for 10 classes"):
        cfg_for("gresnet8.cifar10", class_names=("a", "b", "c"))


def test_register_overlay_and_lookups(capsys):
    before = list_pretrained()
    cfg = cfg_for("gresnetfc2.fashion_mnist", metrics={"test_accuracy": 0.5})
    with pretrained_cfgs_overlay(cfg):
        assert get_pretrained_cfg("gresnetfc2.fashion_mnist") is cfg
        assert kg.list_models("gresnetfc2.*", pretrained=True) == ["gresnetfc2.fashion_mnist"]
        with pytest.raises(ValueError, match="already registered"):
            register_pretrained(cfg)
        assert main(["info", "gresnetfc2"]) == 0
        out = capsys.readouterr().out
        assert "released weights: gresnetfc2.fashion_mnist" in out
        assert f"sha256:        {FAKE_SHA}" in out and "hf_hub_id:     keras-gated/" in out
        assert unregister_pretrained("gresnetfc2.fashion_mnist") is cfg
        register_pretrained(cfg)
    assert list_pretrained() == before
    with pytest.raises(ValueError, match="No released weights 'gresnetfc2.fashion_mnist'"):
        get_pretrained_cfg("gresnetfc2.fashion_mnist")


def test_unknown_tag_lists_the_tags_that_exist():
    with pretrained_cfgs_overlay(cfg_for("gresnet8.cifar10"), cfg_for("gresnet8.svhn_cropped")):
        with pytest.raises(ValueError, match="Unknown `weights`='imagenet'") as error:
            kg.GResNet(8, weights="imagenet")
    assert "Released tags for 'gresnet8': cifar10, svhn_cropped." in str(error.value)


def test_hf_references_are_checked_before_building():
    assert parse_hf_ref("hf://org/name@v1.0") == kg.pretrained.sources.HubRef("org/name", "v1.0")
    assert parse_hf_ref("hf://org/name").revision is None
    for bad in ("hf://name", "hf://a/b/c", "hf://org/name@", "hf:///name"):
        with pytest.raises(ValueError, match="Invalid Hub reference"):
            kg.GResNet(8, weights=bad)


# ---------------------------------------------------------- loading and head adaptation


def test_same_architecture_loads_exactly(pretrained_file):
    source, path = pretrained_file
    x = images(2)
    copy = kg.GResNet(8, weights=str(path))
    np.testing.assert_array_equal(to_numpy(copy(x)), to_numpy(source(x)))
    folder = path.parent / "saved"
    keras.saving.save_model(source, folder, zipped=False)  # a Keras save folder works too
    np.testing.assert_array_equal(
        to_numpy(kg.GResNet(8, weights=str(folder))(x)), to_numpy(source(x))
    )


def test_other_classes_keep_every_layer_up_to_avg_pool(pretrained_file, caplog):
    source, path = pretrained_file
    x = images(3, seed=5)
    with caplog.at_level(logging.WARNING, logger="keras_gated"):
        model = kg.GResNet(8, classes=5, weights=str(path))
    expected = outputs_up_to(source, "avg_pool", x)
    got = outputs_up_to(model, "avg_pool", x)
    assert list(got) == list(expected) and "stage3_unit1" in got
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)
    assert model.get_layer("predictions").kernel.shape == (64, 5)
    notes = [r.getMessage() for r in caplog.records if r.name == "keras_gated"]
    assert len(notes) == 1 and "10 classes, the model 5" in notes[0]


def test_include_top_false_loads_the_backbone(pretrained_file, caplog):
    source, path = pretrained_file
    x = images(2, seed=7)
    with caplog.at_level(logging.WARNING, logger="keras_gated"):
        backbone = kg.GResNet(8, include_top=False, pooling="avg", weights=str(path))
    np.testing.assert_array_equal(
        to_numpy(backbone(x, training=False)), outputs_up_to(source, "avg_pool", x)["avg_pool"]
    )
    notes = [r.getMessage() for r in caplog.records if r.name == "keras_gated"]
    assert len(notes) == 1 and "include_top=False" in notes[0]


def test_custom_input_tensor_gets_the_weights(pretrained_file):
    source, path = pretrained_file
    inputs = keras.Input((32, 32, 3))
    model = kg.GResNet(8, input_tensor=inputs, weights=str(path))
    x = images(2, seed=3)
    np.testing.assert_array_equal(to_numpy(model(x)), to_numpy(source(x)))


def test_headless_weights_into_a_classifier(tmp_path, caplog):
    backbone = trained_ish(kg.GResNet(8, include_top=False), seed=2)
    path = tmp_path / "backbone.weights.h5"
    backbone.save_weights(path)
    with caplog.at_level(logging.WARNING, logger="keras_gated"):
        model = kg.GResNet(8, classes=3, weights=str(path))
    x = images(2)
    np.testing.assert_array_equal(
        outputs_up_to(model, "final_relu", x)["final_relu"], to_numpy(backbone(x, training=False))
    )
    assert any("no head" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda w: kg.GResNet(14, weights=w), "do not fit"),
        (lambda w: kg.GResNet(14, include_top=False, weights=w), "do not fit"),
        (lambda w: kg.GResNet(11, weights=w), "do not fit"),  # bottleneck units
        (lambda w: kg.PreActResNet(8, weights=w), "holds 42 arrays, the architecture has 39"),
    ],
)
def test_other_architectures_are_errors(pretrained_file, make, message):
    _, path = pretrained_file
    with pytest.raises(ValueError, match=message):
        make(str(path))


def test_a_longer_fc_net_is_not_loaded_partially(tmp_path):
    # Same-shape blocks: Keras alone would load the first blocks and ignore the rest.
    path = tmp_path / "fc4.weights.h5"
    longer = kg.GResNetFC(4)
    longer.save_weights(path)
    arrays = (
        f"holds {len(longer.weights)} arrays, the architecture has {len(kg.GResNetFC(2).weights)}"
    )
    with pytest.raises(ValueError, match=arrays):
        kg.GResNetFC(2, weights=str(path))
    with pytest.raises(ValueError, match="do not fit"):
        kg.GResNetFC(2, include_top=False, weights=str(path))


def test_copy_weights_leaves_no_layer_unfilled():
    from keras_gated.weights.load import copy_weights

    with pytest.raises(ValueError, match=r"nothing for the layers \['predictions'\]"):
        copy_weights(kg.GResNetFC(2, include_top=False), kg.GResNetFC(2))
    with pytest.raises(ValueError, match="'stem'.*shapes"):
        copy_weights(kg.GResNetFC(2, units=20), kg.GResNetFC(2))


def test_a_tag_load_builds_the_net_its_weights_were_trained_with(tmp_path):
    """``model_kwargs`` of a released config are the defaults of a tag load: HighwayFC
    weights trained with tanh build a tanh net unless the call says otherwise."""
    trained = trained_ish(kg.HighwayFC(2, activation="tanh", input_shape=(28, 28, 1)), seed=2)
    path = tmp_path / "highwayfc2.weights.h5"
    trained.save_weights(path)
    cfg = cfg_for("highwayfc2.fashion_mnist", input_shape=(28, 28, 1),
                  model_kwargs={"activation": "tanh"})
    x = images(3, (28, 28, 1))
    with pretrained_cfgs_overlay(cfg), pytest.warns(UserWarning, match="without a configuration"):
        loaded = kg.create_model("highwayfc2.fashion_mnist", pretrained_cfg_overlay={"file": path})
        mine = kg.create_model("highwayfc2.fashion_mnist", activation="relu",
                               pretrained_cfg_overlay={"file": path})
    activations = lambda model: {keras.activations.serialize(layer.activation)  # noqa: E731
                                 for layer in model.layers if type(layer).__name__ == "Highway"}
    assert activations(loaded) == {"tanh"} and activations(mine) == {"relu"}
    np.testing.assert_allclose(to_numpy(loaded(x)), to_numpy(trained(x)), atol=1e-6)
    # Random weights (weights=None) keep the constructor's own default.
    assert activations(kg.HighwayFC(2)) == {"relu"}
