"""Multi-scale feature maps (timm's features_only / feature_info, keras-hub's
pyramid_outputs) for every convolutional family."""

from __future__ import annotations

import json

import numpy as np
import pytest

import keras_gated as kg
from keras_gated.features import feature_info, features_model, pyramid_outputs
from tests.support.helpers import to_numpy

CASES = {
    "gresnet20": ({}, [1, 2, 4], [16, 32, 64]),
    "gwrn_16_2": ({}, [1, 2, 4], [32, 64, 128]),
    "preactresnet164": ({}, [1, 2, 4], [64, 128, 256]),
    "highwaynet": ({}, [1, 2, 4], [32, 80, 128]),
    "resnet50": ({"input_shape": (64, 64, 3)}, [2, 4, 8, 16, 32], [64, 256, 512, 1024, 2048]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_feature_maps_have_the_stage_strides_and_widths(name):
    kwargs, reductions, channels = CASES[name]
    model = kg.create_model(name, include_top=False, **kwargs)
    infos = feature_info(model)
    assert [i.reduction for i in infos] == reductions
    assert [i.num_chs for i in infos] == channels
    features = features_model(model)
    x = np.random.default_rng(0).uniform(0, 255, (1, *model.input_shape[1:])).astype("float32")
    outputs = features(x)
    size = model.input_shape[1]
    for output, info in zip(outputs, infos):
        assert tuple(output.shape) == (1, size // info.reduction, size // info.reduction, info.num_chs)
    assert features.feature_info == [i.to_dict() for i in infos]


def test_out_indices_and_pyramid_dict():
    model = kg.GResNet20()
    chosen = features_model(model, out_indices=(-1, 1), as_dict=True)
    assert [f["reduction"] for f in chosen.feature_info] == [4, 2]
    x = np.random.default_rng(0).uniform(0, 255, (1, 32, 32, 3)).astype("float32")
    out = chosen(x)
    assert sorted(out) == ["P1", "P2"]
    assert sorted(pyramid_outputs(model)) == ["P0", "P1", "P2"]
    with pytest.raises(ValueError, match="out of range"):
        features_model(model, out_indices=(3,))


def test_fc_nets_have_no_feature_maps():
    with pytest.raises(ValueError, match="fully-connected"):
        features_model(kg.GResNetFC(2))


def _without_stages(model):
    """``model`` as saved before blocks recorded their stage."""
    config = model.get_config()
    for layer in config["layers"]:
        layer["config"].pop("stage", None)
    old = model.__class__.from_config(config)
    old.set_weights(model.get_weights())
    return old


@pytest.mark.parametrize("name", ["gresnet20", "highwaynet"])
def test_blocks_saved_without_a_stage_give_the_same_feature_maps(name):
    model = kg.create_model(name, include_top=False)
    old = _without_stages(model)
    assert all(getattr(layer, "stage", None) is None for layer in old.layers)
    assert feature_info(old) == feature_info(model)


def test_stage_ends_follow_the_blocks_not_their_names():
    """Blocks renamed freely still end their stages (the stage is the block's own)."""
    model = kg.GResNet20(include_top=False)
    config = model.get_config()
    renamed = {f"stage{s}_unit{u}": f"b{s}{u}" for s in (1, 2, 3) for u in (1, 2, 3)}
    text = json.dumps(config)
    for old, new in renamed.items():
        text = text.replace(f'"{old}"', f'"{new}"')
    other = model.__class__.from_config(json.loads(text))
    assert [i.module for i in feature_info(other)] == ["b13", "b23", "final_relu"]
