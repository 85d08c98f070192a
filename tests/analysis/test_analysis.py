"""The gate-analysis toolkit: k logging, removal curves, pruning, lesion/shuffle,
estimation error, Highway activity and the ``analyze`` report."""

from __future__ import annotations

import csv
import json

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.analysis import (
    GateLogger,
    accuracy,
    estimation_error,
    highway_activity,
    highway_trace,
    prune,
    removable_blocks,
    removal_curve,
    shuffle_accuracies,
    single_removal_accuracies,
)
from keras_gated.analysis.lesion import _permuted_model
from keras_gated.analysis.report import analyze
from tests.support.helpers import to_numpy


def _data(shape, n=32, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 255, (n, *shape)).astype("float32"), rng.integers(0, classes, n)


def _with_random_gates(model, seed=0):
    rng = np.random.default_rng(seed)
    for variable in kg.gating.gate_variables(model):
        variable.assign(float(rng.uniform(0.2, 2.0)))
    return model


def test_gate_logger_writes_one_value_per_gate_per_epoch(tmp_path):
    model = kg.GResNetFC(4, classes=3)
    x, y = _data((28, 28, 1), n=16)
    model.compile("sgd", "sparse_categorical_crossentropy")
    path = tmp_path / "gates.csv"
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0, callbacks=[GateLogger(path)])
    rows = list(csv.DictReader(path.open()))
    blocks = list(kg.gate_values(model))
    assert [(int(r["epoch"]), r["block"]) for r in rows] == [(e, b) for e in range(2) for b in blocks]
    last = {r["block"]: float(r["k"]) for r in rows if r["epoch"] == "1"}
    assert last == pytest.approx(dict(kg.gate_values(model)))
    assert f"k/{blocks[0]}" in history.history
    # A resumed run that repeats epoch 1 rewrites it, never duplicates it.
    model.fit(x, y, epochs=2, initial_epoch=1, batch_size=8, verbose=0, callbacks=[GateLogger(path)])
    assert len(list(csv.DictReader(path.open()))) == 2 * len(blocks)


@pytest.mark.parametrize("build, shape", [
    (lambda: kg.GResNet20(classes=3, input_shape=(8, 8, 3), classifier_activation=None), (8, 8, 3)),
    (lambda: kg.GResNetFC(10, classes=3, classifier_activation=None), (28, 28, 1)),
    (lambda: kg.GPlainNet(10, classes=3, classifier_activation=None), (28, 28, 1)),
])
def test_prune_equals_the_gated_model_with_those_gates_at_zero(build, shape):
    model = _with_random_gates(build())
    blocks = removable_blocks(model)[1:4]
    pruned = prune(model, blocks)
    x, _ = _data(shape, n=4)
    for block in blocks:
        kg.remove_block(model, block)
    np.testing.assert_allclose(to_numpy(pruned(x)), to_numpy(model(x)), atol=1e-5, rtol=1e-5)
    assert pruned.count_params() < model.count_params()
    assert len(pruned.layers) < len(model.layers)
    assert not any(layer.name in blocks for layer in pruned.layers)


def test_pruning_the_last_block_moves_the_feature_map_to_what_feeds_it():
    # A residual FC net's feature map is its last block's output.
    model = _with_random_gates(kg.GResNetFC(6, classes=3, classifier_activation=None))
    pruned = prune(model, ["block3"])
    x, _ = _data((28, 28, 1), n=4)
    kg.remove_block(model, "block3")
    np.testing.assert_allclose(to_numpy(pruned(x)), to_numpy(model(x)), atol=1e-5, rtol=1e-5)
    features = pruned.forward_features(x)
    np.testing.assert_allclose(to_numpy(pruned.forward_head(features)), to_numpy(pruned(x)),
                               atol=1e-5, rtol=1e-5)


def test_prune_refuses_blocks_that_are_not_identity_blocks():
    with pytest.raises(ValueError, match="stage2_unit1"):
        prune(kg.GResNet20(), ["stage2_unit1"])  # downsampling: no identity shortcut


def test_removal_curves_start_at_full_accuracy_and_end_at_the_same_net():
    model = _with_random_gates(kg.GResNet20(classes=3, input_shape=(8, 8, 3)))
    x, y = _data((8, 8, 3), n=48)
    full = accuracy(model, x, y)
    curves = {order: removal_curve(model, x, y, order=order, seeds=(0, 1))
              for order in ("gate", "random", "position")}
    n = len(removable_blocks(model))
    for curve in curves.values():
        assert curve["removed"] == list(range(n + 1))
        assert curve["accuracy"][0] == full
        assert curve["std"][0] == 0 and curve["std"][-1] == 0
    ends = {curve["accuracy"][-1] for curve in curves.values()}
    assert len(ends) == 1  # every order removes all blocks in the end: the same net
    # The gate order drops the smallest |g(k)| first.
    values = kg.gate_values(model)
    order = curves["gate"]["order"]
    assert [values[b] for b in order] == sorted(values[b] for b in order)
    # Gates are restored afterwards.
    assert kg.gate_values(model) == values


def test_single_removal_of_an_ungated_net_uses_its_exact_twin():
    model = kg.PreActResNet20(classes=3, input_shape=(8, 8, 3))
    x, y = _data((8, 8, 3))
    results = single_removal_accuracies(model, x, y)
    assert list(results) == ["stage1_unit2", "stage1_unit3", "stage2_unit2", "stage2_unit3",
                             "stage3_unit2", "stage3_unit3"]
    assert all(0 <= a <= 1 for a in results.values())


def test_shuffling_runs_the_blocks_in_the_permuted_order():
    model = kg.PreActResNet20(classes=3, input_shape=(8, 8, 3), classifier_activation=None)
    x, y = _data((8, 8, 3), n=4)
    permuted = ["stage1_unit3", "stage1_unit2"]
    shuffled = _permuted_model(model, {"stage1_unit2|stage1_unit3": permuted})
    h = model.get_layer("stage1_unit1").output
    manual_input = keras.Model(model.input, h)(x)
    y_manual = manual_input
    for name in permuted + [layer.name for layer in model.layers[model.layers.index(model.get_layer("stage1_unit3")) + 1:]]:
        y_manual = model.get_layer(name)(y_manual)
    np.testing.assert_allclose(to_numpy(shuffled(x)), to_numpy(y_manual), atol=1e-5, rtol=1e-5)
    results = shuffle_accuracies(model, x, y, seeds=(0,))
    assert set(results) == {"stage1", "stage2", "stage3"}
    # Two blocks have one order other than their own: the swap, never the identity.
    assert results["stage1"]["orders"] == [permuted]
    from keras_gated.analysis.lesion import accuracy as accuracy_of

    assert results["stage1"]["accuracies"] == [accuracy_of(shuffled, x, y)]


def test_shuffled_orders_never_keep_the_original_order():
    from keras_gated.analysis.lesion import shuffled_orders

    assert shuffled_orders(["a", "b"], seeds=(0, 1, 2)) == [["b", "a"]]
    three = shuffled_orders(["a", "b", "c"], seeds=(0, 1, 2))
    assert len(three) == 3 and ["a", "b", "c"] not in three
    many = shuffled_orders(list("abcde"), seeds=range(10))
    assert len(many) == 10 and list("abcde") not in many


def test_estimation_error_is_zero_at_the_stage_end():
    model = kg.GResNet20(classes=3, input_shape=(8, 8, 3))
    x, _ = _data((8, 8, 3), n=8)
    errors = estimation_error(model, x)
    assert list(errors) == ["stage1", "stage2", "stage3"]
    for result in errors.values():
        assert len(result["per_block"]) == 3
        assert result["per_block"][-1] == 0
        assert all(e > 0 for e in result["per_block"][:-1])
        assert result["signed_mean"][-1] == 0 and result["signed_std"][-1] == 0
    # The paper's two numbers per block, checked by hand for the first block of stage 2.
    probe = keras.Model(model.inputs, [model.get_layer(n).output
                                       for n in ("stage2_unit1", "stage2_unit3")])
    first, last = (to_numpy(o).reshape(len(x), -1) for o in probe(x))
    difference = first - last
    assert errors["stage2"]["signed_mean"][0] == pytest.approx(difference.mean(0).mean(), abs=1e-5)
    assert errors["stage2"]["signed_std"][0] == pytest.approx(difference.std(0).mean(), rel=1e-4)


def test_highway_activity_matches_the_gate_bias():
    model = kg.HighwayFC(4, classes=3)
    for layer in model.layers:
        if isinstance(layer, kg.layers.Highway):
            layer.transform_gate.kernel.assign(np.zeros(layer.transform_gate.kernel.shape, "float32"))
            layer.transform_gate.bias.assign(np.full(layer.transform_gate.bias.shape, -20.0, "float32"))
    x, _ = _data((28, 28, 1), n=8)
    activity = highway_activity(model, x)
    assert len(activity) == 4
    for result in activity.values():
        assert result["mean_t"] < 1e-6 and result["closed_fraction"] == 1.0
        assert result["sample_std"] < 1e-6


def test_highway_trace_follows_the_highway_equation():
    model = kg.HighwayFC(3, classes=3)
    x, _ = _data((28, 28, 1), n=5)
    trace = highway_trace(model, x, batch_size=2)
    assert list(trace) == ["block1", "block2", "block3"]
    for name, record in trace.items():
        layer = model.get_layer(name)
        h = to_numpy(layer.plain(record["input"]))
        # y = H·T + x·(1 − T), the coupled Highway layer (Highway Networks eq. 3)
        expected = h * record["t"] + record["input"] * (1 - record["t"])
        np.testing.assert_allclose(record["output"], expected, atol=1e-5)
        assert record["t"].shape == (5, record["input"].shape[-1])
    np.testing.assert_allclose(trace["block2"]["input"], trace["block1"]["output"], atol=1e-6)
    activity = highway_activity(model, x)
    assert activity["block2"]["mean_t"] == pytest.approx(float(trace["block2"]["t"].mean()), abs=1e-6)


def test_analyze_writes_plots_and_json(tmp_path):
    model = _with_random_gates(kg.GResNet(14, classes=3, input_shape=(8, 8, 3)))
    twin = kg.PreActResNet(14, classes=3, input_shape=(8, 8, 3))
    x, y = _data((8, 8, 3), n=24)
    result = analyze(model, x, y, tmp_path, twin=twin, seeds=(0,))
    for png in ("gates.png", "removal.png", "prune.png", "estimation_error.png"):
        assert (tmp_path / png).stat().st_size > 1000
    saved = json.loads((tmp_path / "analysis.json").read_text())
    assert saved["gate_values"] == pytest.approx(dict(kg.gate_values(model)))
    assert saved["twin"]["model"] == "preactresnet14"
    assert any(label.startswith("preactresnet14") for label in saved["removal_curves"])
    prune_points = saved["prune"]
    assert [p["removed"] for p in prune_points] == list(range(len(removable_blocks(model)) + 1))
    assert prune_points[-1]["parameters"] < prune_points[0]["parameters"]
    # Every pruned block takes its multiply-accumulates with it; none is free.
    from keras_gated.flops import count_macs

    macs = [p["macs"] for p in prune_points]
    assert macs[0] == count_macs(model) and all(a > b for a, b in zip(macs, macs[1:]))
    assert all(p["seconds_per_image"] > 0 for p in prune_points)
    assert prune_points[0]["accuracy"] == result["accuracy"]
    # The shuffle is never the identity: a stage of two movable blocks runs them swapped.
    assert all(list(reversed(r["blocks"])) in r["orders"] for r in saved["shuffle"].values()
               if len(r["blocks"]) == 2)
    assert result["accuracy"] == saved["accuracy"]


def test_a_residual_fc_net_gates_exactly_and_its_blocks_can_be_removed():
    model = kg.ResNetFC(6, classes=3, classifier_activation=None)
    gated = kg.gate(model)
    assert gated.name == "gresnetfc6" and list(kg.gate_values(gated).values()) == [1.0] * 3
    x, y = _data((28, 28, 1), n=16)
    np.testing.assert_allclose(to_numpy(gated(x)), to_numpy(model(x)), atol=1e-6, rtol=0)
    assert removable_blocks(model) == ["block1", "block2", "block3"]
    assert set(single_removal_accuracies(model, x, y)) == {"block1", "block2", "block3"}


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="the data sets load through tf.data")
def test_a_subset_of_a_class_sorted_split_is_drawn_at_random(tmp_path):
    """A split stored class after class: the first N images would hold one class only."""
    from keras_gated.analysis.report import load_examples
    from tests.support.helpers import make_image_folder

    folder = make_image_folder(tmp_path / "sorted", per_class=(4, 12), classes=3)
    x, y = load_examples(str(folder), 9)
    assert x.shape == (9, 28, 28, 1) and x.dtype == np.float32
    assert len(set(y.tolist())) > 1
    assert np.array_equal(y, np.sort(y))  # kept in split order
    x_again, y_again = load_examples(str(folder), 9)
    assert np.array_equal(x, x_again) and np.array_equal(y, y_again)  # seeded
    everything = load_examples(str(folder), 100)[1]
    assert len(everything) == 36 and len(set(everything.tolist())) == 3


def test_plots_draw_a_reference_beside_the_measured_values(tmp_path):
    from keras_gated.analysis import plots

    curves = {"a": {"removed": [0, 1, 2], "accuracy": [0.9, 0.8, 0.7], "std": [0, 0.05, 0.05]},
              "b": {"removed": [0, 1, 2], "accuracy": [0.9, 0.8, 0.7]}}  # coincides with a
    gates = {"block1": 1.2, "block2": 0.8}
    points = [{"removed": 0, "accuracy": 0.9, "macs": 2e6, "seconds_per_image": 2e-5},
              {"removed": 1, "accuracy": 0.8, "macs": 1e6, "seconds_per_image": 1e-5}]
    errors = {"stage1": {"per_block": [0.5, 0.0], "signed_mean": [0.1, 0.0], "signed_std": [1.0, 0.0]}}
    drawn = {
        "removal": (plots.plot_removal_curves, curves, {"paper": {"removed": [1], "accuracy": [0.95]}}),
        "gates": (plots.plot_gate_values, gates, {"paper": 1.04}),
        "prune": (plots.plot_prune_tradeoff, points, {"paper": {"seconds_per_image": 1.2e-5}}),
        "estimation": (plots.plot_estimation_error, errors, {"paper": 0.0}),
    }
    for name, (plot, values, reference) in drawn.items():
        plain = plot(values, tmp_path / f"{name}.png")
        with_reference = plot(values, tmp_path / f"{name}_reference.png", reference=reference)
        assert plain.read_bytes() != with_reference.read_bytes(), name
