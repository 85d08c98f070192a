"""gate_values / set_gate / remove_block on whole models; gate() and prune() on one
model of every registered constructor."""

from collections import OrderedDict

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.analysis import prune, removable_blocks
from keras_gated.layers import Block
from keras_gated.registry import is_model
from tests.support.helpers import images, to_numpy
from tests.support.models import one_per_constructor


def test_gresnet_gate_values_are_raw_k_in_model_order():
    model = kg.GResNet20()
    values = kg.gate_values(model)
    assert isinstance(values, OrderedDict)
    assert list(values) == [f"stage{s}_unit{u}" for s in (1, 2, 3) for u in (1, 2, 3)]
    assert all(v == 1.0 for v in values.values())
    kg.set_gate(model, "stage2_unit2", -0.5)
    assert kg.gate_values(model)["stage2_unit2"] == -0.5  # raw k, not relu(k) = 0


def test_fc_gates_are_the_merge_layers():
    assert list(kg.gate_values(kg.GPlainNet(3))) == ["block1", "block2", "block3"]
    assert list(kg.gate_values(kg.GResNetFC(4))) == ["block1", "block2"]
    assert kg.gate_values(kg.PlainNet(3)) == OrderedDict()


def test_highway_blocks_report_mean_transform_bias():
    values = kg.gate_values(kg.HighwayFC(3, transform_bias=-1.5))
    assert values == OrderedDict((f"block{i}", -1.5) for i in (1, 2, 3))
    model = kg.HighwayNet()
    kg.set_gate(model, "stage2_highway3", -4.0)
    assert kg.gate_values(model)["stage2_highway3"] == -4.0
    assert len(kg.gate_values(model)) == 14
    # HighwayNet50's 16 gates: tests/models/test_parameter_counts.py (built once there).


def test_removed_block_passes_its_input_through_exactly():
    model = kg.GResNet20()
    kg.remove_block(model, "stage2_unit2")
    unit = model.get_layer("stage2_unit2")
    probe = keras.Model(model.inputs, [unit.input, unit.output])
    before, after = probe(images(2), training=False)
    np.testing.assert_array_equal(to_numpy(after), to_numpy(before))


def test_removed_fc_plain_layer_is_identity():
    model = kg.GPlainNet(3)
    kg.remove_block(model, "block2")
    gate = model.get_layer("block2")
    probe = keras.Model(model.inputs, [gate.input[1], gate.output])
    x, y = probe(images(2, (28, 28, 1)), training=False)
    np.testing.assert_array_equal(to_numpy(y), to_numpy(x))


def test_sigmoid_gate_removal_and_highway_removal_raise():
    with pytest.raises(ValueError, match="sigmoid"):
        kg.remove_block(kg.GResNet20(gate="sigmoid"), "stage1_unit1")
    with pytest.raises(ValueError, match="Highway block"):
        kg.remove_block(kg.HighwayFC(2), "block1")


def test_unknown_block_lists_the_gated_blocks():
    with pytest.raises(ValueError, match="block1, block2"):
        kg.set_gate(kg.GResNetFC(4), "block9", 0.0)


# -- Registry-wide: every registered model gates to its exact twin and prunes exactly ----
def gate_variables(model) -> list:
    """The k of every Residual Gate of ``model``'s blocks."""
    return [layer.gate_layer().k for layer in model.layers
            if isinstance(layer, Block) and layer.gate_layer() is not None]


@pytest.mark.parametrize("name", one_per_constructor())
def test_every_registered_model_gates_to_its_exact_twin_or_says_why_not(name):
    model = kg.create_model(name)
    if not kg.gating.can_gate(model):
        with pytest.raises(ValueError, match="no residual blocks"):
            kg.gate(model)
        return
    if gate_variables(model):
        with pytest.raises(ValueError, match="gated already"):
            kg.gate(model)
        return
    gated = kg.gate(model)
    assert gated.name == kg.gating.twin_name(name) and is_model(gated.name)
    blocks, merges = kg.gating.gateable_layers(model)
    assert len(gate_variables(gated)) == len(blocks) + len(merges) > 0
    x = images(2, model.input_shape[1:])
    np.testing.assert_allclose(to_numpy(gated(x, training=False)),
                               to_numpy(model(x, training=False)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", one_per_constructor())
def test_every_registered_model_prunes_its_removable_blocks_exactly(name):
    model = kg.create_model(name)
    blocks = removable_blocks(model)
    if not blocks:
        with pytest.raises(ValueError, match="cannot be pruned"):
            prune(model, ["any_block"])
        return
    pruned = prune(model, [blocks[-1]])
    assert blocks[-1] not in [layer.name for layer in pruned.layers]
    reference = model if gate_variables(model) else kg.gate(model)
    kg.remove_block(reference, blocks[-1])
    x = images(2, model.input_shape[1:])
    np.testing.assert_allclose(to_numpy(pruned(x, training=False)),
                               to_numpy(reference(x, training=False)), rtol=1e-5, atol=1e-6)
    assert pruned.count_params() < reference.count_params()


def test_the_former_tables_still_answer_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="TWIN_PREFIXES"):
        twins = kg.gating.TWIN_PREFIXES
    assert ("preactresnet", "gresnet") in twins and ("resnetfc", "gresnetfc") in twins
    with pytest.warns(DeprecationWarning, match="GATEABLE_BLOCKS"):
        blocks = kg.gating.GATEABLE_BLOCKS
    assert {"PreActUnit", "ResNetBottleneck"} <= set(blocks)
    from keras_gated.release import citations

    with pytest.warns(DeprecationWarning, match="CITED_BY"):
        cited = citations.CITED_BY
    assert ("wrn_*", ("zagoruyko2016wide",)) in cited


def test_the_family_modules_keep_their_import_paths():
    from keras_gated.models.preact_resnet import GResNet20, preact_resnet_features
    from keras_gated.models.resnet import imagenet_stem
    from keras_gated.models.wide_resnet import GWideResNet

    assert GResNet20 is kg.GResNet20 and GWideResNet is kg.GWideResNet
    assert callable(preact_resnet_features) and callable(imagenet_stem)
