"""Highway Networks Fig. 2 (experiments/highway/highway_fig2.py): the numbers of a small
fabricated highway net checked by hand, and the committed figure's numbers against the
released net (slow: the released weights and 10,000 test images)."""

import json
from pathlib import Path

import numpy as np
import pytest

import keras_gated as kg
from experiments.highway import highway_fig2

ROOT = Path(__file__).resolve().parents[2]


def _net():
    """A 3-block HighwayFC whose second block is shut (T = 0: y = x exactly) and whose
    third block's gates are fully open (T = 1: y = H(x))."""
    model = kg.HighwayFC(3, classes=3)
    for name, bias in (("block2", -60.0), ("block3", 60.0)):
        gate = model.get_layer(name).transform_gate
        gate.kernel.assign(np.zeros(gate.kernel.shape, "float32"))
        gate.bias.assign(np.full(gate.bias.shape, bias, "float32"))
    return model


def test_blocks_holding_counts_the_first_blocks_up_to_a_share():
    change = np.array([5.0, 3.0, 1.0, 1.0])
    assert highway_fig2.blocks_holding(0.5, change) == 1
    assert highway_fig2.blocks_holding(0.8, change) == 2
    assert highway_fig2.blocks_holding(0.9, change) == 3
    assert highway_fig2.blocks_holding(1.0, change) == 4


def test_fig2_numbers_of_a_fabricated_net_and_its_figure(tmp_path):
    model = _net()
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0, 255, (12, 28, 28, 1)).astype("float32"), rng.integers(0, 3, 12)
    numbers, maps = highway_fig2.fig2(model, x, y, example=5)
    units = model.get_layer("block1").transform_gate.bias.shape[0]
    assert numbers["blocks"] == ["block1", "block2", "block3"] and numbers["examples"] == 12
    assert maps["bias"].shape == maps["mean_t"].shape == maps["example_t"].shape == (3, units)
    assert numbers["biases"]["per_block_mean"][1:] == [-60.0, 60.0]
    # A shut block carries its input: no change, every gate closed; an open one all open.
    assert numbers["mean_t"]["per_block"][1] == 0.0 and numbers["mean_t"]["per_block"][2] == 1.0
    assert numbers["mean_t"]["closed_fraction_per_block"][1:] == [1.0, 0.0]
    assert numbers["change"]["mean_abs_change_per_block"][1] == 0.0
    assert numbers["change"]["changed_fraction_per_block"][1] == 0.0
    assert numbers["per_example"]["open_fraction_per_block"][1:] == [0.0, 1.0]
    # Block 1 starts at b_T = -2 (T about 0.12): every image has at least its third open,
    # at most its first and third (2 of 3 blocks).
    per_example = numbers["per_example"]
    assert 0.3333 <= per_example["open_fraction_min"] <= per_example["open_fraction_max"] <= 0.6667
    assert numbers["single_example"]["index"] == 5 and numbers["single_example"]["label"] == int(y[5])
    assert numbers["single_example"]["mean_abs_change_per_block"][1] == 0.0
    np.testing.assert_allclose(maps["example_output"][1], maps["example_output"][0], atol=1e-6)
    json.dumps(numbers)  # JSON-ready
    highway_fig2.plot(numbers, maps, tmp_path / "fig2.png")
    assert (tmp_path / "fig2.png").stat().st_size > 10_000


def _assert_close(committed, computed, path="$"):
    if isinstance(committed, dict):
        assert committed.keys() == computed.keys(), path
        for key in committed:
            _assert_close(committed[key], computed[key], f"{path}.{key}")
    elif isinstance(committed, list):
        assert len(committed) == len(computed), path
        for index, (a, b) in enumerate(zip(committed, computed)):
            _assert_close(a, b, f"{path}[{index}]")
    elif isinstance(committed, float):
        assert computed == pytest.approx(committed, abs=2e-4), path  # rounding, backends
    else:
        assert committed == computed, path


@pytest.mark.slow
def test_the_committed_fig2_is_what_the_released_net_gives(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert highway_fig2.main(["--out", str(tmp_path)]) == 0
    _assert_close(json.loads((ROOT / "docs" / "figures" / "highway_fig2.json").read_text()),
                  json.loads((tmp_path / "highway_fig2.json").read_text()))
