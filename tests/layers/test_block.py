"""The blocks' shared base class: stage in the config (and configs saved without it),
the gate accessor, and which blocks are gateable and removable."""

import keras
import pytest

from keras_gated.layers import (
    Block,
    Highway,
    HighwayBottleneck,
    PreActUnit,
    ResidualGate,
    ResNetBottleneck,
)


def test_every_block_is_a_block_and_gateable_ones_say_so():
    for cls in (PreActUnit, ResNetBottleneck, HighwayBottleneck, Highway, ResidualGate):
        assert issubclass(cls, Block)
    assert PreActUnit.gateable and ResNetBottleneck.gateable
    assert not Highway.gateable and not HighwayBottleneck.gateable
    assert not ResidualGate.gateable  # it is the gate already


def test_stage_is_saved_and_an_old_config_loads_without_it():
    unit = PreActUnit(16, stage=2, name="u")
    config = unit.get_config()
    assert config["stage"] == 2
    assert PreActUnit.from_config(config).stage == 2
    del config["stage"]  # a block saved before the key existed
    old = PreActUnit.from_config(config)
    assert old.stage is None and old.stage_label is None
    assert "stage" not in old.get_config()
    assert ResNetBottleneck(64, stage=3).stage_label == "conv3"
    assert PreActUnit(16, stage=1).stage_label == "stage1"
    with pytest.raises(ValueError, match="stage"):
        PreActUnit(16, stage=0)


def _built(layer, shape):
    layer.build(shape)
    return layer


def test_gate_layer_and_removable():
    gated = _built(PreActUnit(16, gate="relu"), (None, 8, 8, 16))
    assert isinstance(gated.gate_layer(), ResidualGate) and gated.removable
    assert not _built(PreActUnit(16), (None, 8, 8, 16)).removable  # no gate
    assert not _built(PreActUnit(32, strides=2, gate="relu"), (None, 8, 8, 16)).removable
    shared = _built(PreActUnit(16, gate="relu", share_preactivation=True), (None, 8, 8, 16))
    assert not shared.removable  # its shortcut carries ReLU(BN(x)), not x
    assert not _built(PreActUnit(16, gate="sigmoid"), (None, 8, 8, 16)).removable
    merge = ResidualGate("relu", form="residual")
    assert merge.gate_layer() is merge and merge.removable
    highway = _built(Highway("dense"), (None, 4))
    assert highway.gate_layer() is None and not highway.removable


def test_a_model_with_staged_blocks_round_trips(tmp_path):
    inputs = keras.Input((8, 8, 16))
    outputs = PreActUnit(16, gate="relu", stage=1, name="stage1_unit1")(inputs)
    model = keras.Model(inputs, outputs)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    assert loaded.get_layer("stage1_unit1").stage == 1
    # The gate accessor adds no second copy of the gate to the saved weights.
    assert [v.path for v in loaded.weights] == [v.path for v in model.weights]
