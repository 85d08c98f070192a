"""Compressed architectures (``keras_gated.models.compressed``): a registered source
without some blocks, under its own name, is exactly the pruned source; its weights
resolve under its own name; weights of another compression are refused."""

from __future__ import annotations

import json

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.models.prune import prune
from keras_gated.models.compressed import CompressedArch, compressed, registered
from keras_gated.models.compressed.architectures import read_architectures, write_architecture
from keras_gated.weights import pretrained_cfgs_overlay
from keras_gated.release.zoo_folder import pretrained_cfg_from_folder, save_zoo_folder
from tests.support.helpers import images, to_numpy, trainable_count

REMOVED = ("stage1_unit2", "stage1_unit3", "stage2_unit2", "stage2_unit3", "stage3_unit2")
ARCH = CompressedArch("gresnet20_c42", "gresnet20", REMOVED, {"blocks": 5},
                      "gresnet20 without 5 blocks (a test)")
SHAPE = (16, 16, 3)


@pytest.fixture
def c42():
    with registered(ARCH) as entry:
        yield entry


def test_the_compressed_architecture_is_the_pruned_source(c42):
    model = kg.create_model("gresnet20_c42", input_shape=SHAPE)
    source = kg.GResNet20(input_shape=SHAPE)
    pruned = prune(source, REMOVED, name="pruned")
    assert model.name == "gresnet20_c42" and c42.family == "compressed"
    assert [layer.name for layer in model.layers] == [layer.name for layer in pruned.layers]
    assert [tuple(w.shape) for w in model.weights] == [tuple(w.shape) for w in pruned.weights]
    # The source's trainable count less the removed blocks' (each its own count).
    blocks = sum(trainable_count(source.get_layer(name)) for name in REMOVED)
    assert trainable_count(model) == trainable_count(source) - blocks == trainable_count(pruned)
    model.set_weights(pruned.get_weights())
    x = images(3, SHAPE)
    np.testing.assert_allclose(to_numpy(model(x, training=False)),
                               to_numpy(pruned(x, training=False)), atol=1e-6, rtol=1e-6)


def test_the_applications_arguments_of_the_source_apply(c42):
    features = kg.create_model("gresnet20_c42", include_top=False, pooling="max", input_shape=SHAPE)
    assert features.output_shape == (None, 64) and "max_pool" in [l.name for l in features.layers]
    logits = c42.constructor(classes=3, classifier_activation=None, name="mine")
    assert logits.name == "mine" and logits.output_shape == (None, 3)
    assert not any(layer.name in REMOVED for layer in logits.layers)
    inputs = keras.Input((24, 24, 3))
    on_tensor = c42.constructor(input_tensor=inputs, include_preprocessing=False)
    assert on_tensor.input_shape == (None, 24, 24, 3)
    assert "preprocessing" not in [layer.name for layer in on_tensor.layers]
    with pytest.raises(TypeError, match="unexpected keyword argument 'depth'"):
        c42.constructor(depth=32)


def test_arguments_that_build_another_architecture_are_refused(c42):
    with pytest.raises(ValueError, match=r"gresnet20_c42 is gresnet20 without 5 of its blocks, "
                                         r"but these arguments build gresnet20_bottleneck"):
        kg.create_model("gresnet20_c42", block="bottleneck")


def _zoo_folder(zoo, model, weight_id, removed=REMOVED):
    """A zoo folder of ``model`` whose metrics record ``removed`` as keras_gated.compress does."""
    metrics = {"test_accuracy": 0.5, "split": "test", "num_examples": 10,
               "model_args": {"removed_blocks": list(removed)}}
    return save_zoo_folder(model, zoo / weight_id, weight_id=weight_id, metrics=metrics,
                           recipe="compress", command="keras-gated compress ...",
                           dataset_note="a test")


def test_listed_and_built_by_name_and_by_weight_id(c42, tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_GATED_ZOO", str(tmp_path))
    trained = kg.create_model("gresnet20_c42")  # at the source's input shape, as released
    folder = _zoo_folder(tmp_path, trained, "gresnet20_c42.tiny")
    cfg = pretrained_cfg_from_folder(folder)
    assert cfg.model_kwargs == {"removed_blocks": list(REMOVED)}
    assert kg.list_models("*_c42") == ["gresnet20_c42"]
    x = images(2)
    expected = to_numpy(trained(x, training=False))
    with pretrained_cfgs_overlay(cfg):
        assert "gresnet20_c42.tiny" in kg.list_models(pretrained=True)
        for model in (kg.create_model("gresnet20_c42.tiny"),
                      kg.create_model("gresnet20_c42", weights="tiny"),
                      kg.create_model("gresnet20_c42", pretrained=True)):
            assert model.name == "gresnet20_c42"
            assert model.pretrained_cfg["weight_id"] == "gresnet20_c42.tiny"
            np.testing.assert_allclose(to_numpy(model(x, training=False)), expected, atol=1e-6)
        # The source's name does not reach the compressed weights, nor the other way round.
        with pytest.raises(ValueError, match="Unknown `weights`='tiny' for 'gresnet20'"):
            kg.create_model("gresnet20", weights="tiny")
    with pytest.raises(ValueError, match="Unknown `weights`='cifar10' for 'gresnet20_c42'"):
        kg.create_model("gresnet20_c42", weights="cifar10")  # not gresnet20.cifar10's


def test_weights_of_other_removed_blocks_are_refused_in_one_sentence(c42, tmp_path):
    other = ("stage1_unit2", "stage1_unit3", "stage2_unit2", "stage3_unit2", "stage3_unit3")
    source = kg.GResNet20(input_shape=SHAPE)
    folder = _zoo_folder(tmp_path, prune(source, other, name="gresnet20"), "gresnet20.tiny", other)
    with pytest.raises(ValueError) as error:
        kg.create_model("gresnet20_c42", weights=str(folder))
    text = str(error.value)
    assert "stage3_unit3" in text and "gresnet20_c42 is gresnet20 without" in text
    assert f"keras_gated.create_model('gresnet20', weights={str(folder)!r})" in text
    assert "\n" not in text and text.count(". ") == 0
    # What the sentence says to do works: the source prunes the blocks the weights record.
    loaded = kg.create_model("gresnet20", weights=str(folder))
    assert "stage3_unit3" not in [layer.name for layer in loaded.layers]


def test_a_registered_name_keeps_its_architecture(c42):
    other = CompressedArch("gresnet20_c42", "gresnet20", REMOVED[:4] + ("stage3_unit3",))
    with pytest.raises(ValueError, match="registered already as gresnet20 without"):
        with registered(other):
            pass
    with registered(ARCH) as again:  # the same architecture: the entry as it is
        assert again is c42


def test_the_catalog_finds_the_constructor_by_name(c42):
    assert compressed.gresnet20_c42 is c42.constructor
    assert c42.constructor.__module__ == compressed.__name__
    with pytest.raises(AttributeError):
        compressed.gresnet20_c99


def test_the_data_file_keeps_one_sorted_line_per_name(tmp_path):
    path = tmp_path / "architectures.jsonl"
    write_architecture(ARCH, path)
    write_architecture(CompressedArch("gresnet20_c35", "gresnet20", REMOVED + ("stage3_unit3",)), path)
    write_architecture(ARCH, path)  # replaces its own line
    assert [a.name for a in read_architectures(path)] == ["gresnet20_c35", "gresnet20_c42"]
    assert read_architectures(path)[1] == ARCH
    assert all(json.loads(line)["source"] == "gresnet20" for line in path.read_text().splitlines())
    with pytest.raises(ValueError, match="named gresnet20_c<percent"):
        CompressedArch("gresnet20_small", "gresnet20", REMOVED)
    path.write_text('{"name": "gresnet20_c42", "source": "gresnet20", "removed_blocks": []}\n')
    with pytest.raises(ValueError, match="architectures.jsonl, line 1: .*at least one block"):
        read_architectures(path)


def test_a_compressed_net_of_a_compressed_net_is_refused(c42):
    nested = CompressedArch("gresnet20_c42_c30", "gresnet20_c42", ("stage3_unit3",))
    with pytest.raises(ValueError, match="itself a compressed net: name its source, gresnet20"):
        with registered(nested):
            pass
    assert not kg.is_model("gresnet20_c42_c30")


def test_the_percent_in_a_name_is_1_to_99():
    from keras_gated.models.compressed.architectures import budget_percent

    assert budget_percent({"macs": 0.5}, 0.42) == 50 and budget_percent({"blocks": 5}, 0.422) == 43
    with pytest.raises(ValueError, match="this budget gives 100: remove more blocks"):
        budget_percent({"blocks": 1}, 0.997)
    with pytest.raises(ValueError, match="this budget gives 0: give a budget of at least 0.01"):
        budget_percent({"macs": 0.004}, 0.003)


def test_the_released_compressed_names_are_known_to_the_command_line():
    from keras_gated.cli.publish import compressed_names

    assert {arch.name for arch in read_architectures()} == compressed_names()
    assert "gresnet20_c50" in compressed_names()
