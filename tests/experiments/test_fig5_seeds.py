"""experiments/residual_gates/fig5_seeds.py: each net's accuracy kept after N random
removals (relative to its own full accuracy), the learned-k order beside it, over seeds,
and whether the gaps are significant (Welch's t-test)."""

import json
import math

from experiments.residual_gates.fig5_seeds import curves, main, pair, summary, table


# k per block: 3 for blocks 1-17, 2 for 18-34, 1 for 35-45 and 10 for the last five, so a
# part that takes in one block too many or too few moves its mean.
K = {i: 3.0 if i <= 17 else 2.0 if i <= 34 else 1.0 if i <= 45 else 10.0 for i in range(1, 51)}


def _curve(full: float, at: dict[int, float]) -> dict:
    removed = list(range(51))
    return {"removed": removed, "accuracy": [at.get(n, full) for n in removed]}


def _analysis(gated: float, ungated: float, gated_random: dict, ungated_random: dict,
              lowest: dict) -> dict:
    return {
        "model": "gresnetfc100", "accuracy": gated,
        "gate_values": {f"block{i}": K[i] for i in range(1, 51)},
        "twin": {"model": "resnetfc100", "accuracy": ungated},
        "removal_curves": {
            "gresnetfc100, lowest |g(k)| first": _curve(gated, lowest),
            "gresnetfc100, random": _curve(gated, gated_random),
            "gresnetfc100, by position": _curve(gated, {}),
            "resnetfc100, random": _curve(ungated, ungated_random),
        },
    }


def _write(results, seed, analysis, tests=(0.79, 0.88)):
    folder = results / f"fig5.d100.e100.s{seed}"
    folder.mkdir(parents=True)
    (folder / "analysis.json").write_text(json.dumps(analysis))
    for model, accuracy in zip(("gresnetfc100", "resnetfc100"), tests):
        run = results / f"fig5.{model}.e100.s{seed}"
        run.mkdir()
        (run / "metrics.json").write_text(json.dumps({"test_accuracy": accuracy}))
        last = 0.1 * (seed + 1) if model == "gresnetfc100" else 0.05
        (run / "log.csv").write_text(f"epoch,accuracy,loss\n0,0.5,2.0\n1,0.9,{last}\n")


def test_a_pair_reads_the_accuracy_kept_relative_to_each_nets_own():
    found = pair(_analysis(0.8, 0.9, {30: 0.72}, {30: 0.45}, {30: 0.8}))
    assert math.isclose(found["kept"][30]["gated random"], 90.0)
    assert math.isclose(found["kept"][30]["ungated random"], 50.0)
    assert math.isclose(found["kept"][30]["gated lowest k"], 100.0)
    assert math.isclose(found["kept"][20]["gated random"], 100.0)  # nothing lost at N = 20 here
    assert found["accuracy"] == {"gresnetfc100": 80.0, "resnetfc100": 90.0}


def test_three_seeds_give_means_spreads_and_verdicts(tmp_path):
    for seed, (g, u) in enumerate([(0.72, 0.45), (0.71, 0.46), (0.73, 0.47)]):
        _write(tmp_path, seed, _analysis(0.8, 0.9, {30: g}, {30: u}, {30: 0.72 + seed / 1000}))
    (tmp_path / "fig5.d100.e100.s7").mkdir()  # an unanalysed seed is left out
    found = summary(tmp_path)
    assert found["seeds"] == [0, 1, 2]
    at30 = found["removed"][30]
    assert math.isclose(at30["gated random"]["mean"], 90.0) and at30["gated random"]["n"] == 3
    assert math.isclose(at30["ungated random"]["mean"], 460 / 9)
    assert at30["gated vs ungated (random)"]["verdict"] == "significant"
    # Lowest k first keeps 90.0, 90.125, 90.25 % against random's 90.0, 88.75, 91.25 %.
    assert at30["lowest k vs random (gated)"]["verdict"] == "within noise"
    assert math.isclose(found["test_accuracy"]["gresnetfc100"]["mean"], 79.0)
    assert math.isclose(found["k"]["blocks 1-17"]["mean"], 3.0)
    assert math.isclose(found["k"]["blocks 18-34"]["mean"], 2.0)
    assert math.isclose(found["k"]["blocks 35-50"]["mean"], (11 * 1.0 + 5 * 10.0) / 16)
    assert math.isclose(found["k"]["last five"]["mean"], 10.0)
    # Last-epoch training losses 0.1, 0.2, 0.3 (gated) against 0.05 (ungated, no spread).
    assert math.isclose(found["last_loss"]["gresnetfc100"]["mean"], 0.2)
    # t = 0.15 / 0.058 = 2.6 on 2 degrees of freedom (the ungated arm has no spread): p ≈ 0.12.
    assert found["last_loss"]["gated vs ungated"]["verdict"] == "within noise"
    text = table(tmp_path)
    assert "blocks 1-17 3.00 ± 0.00 (3)" in text and "gap +0.150, p = 0.122: within noise" in text
    assert "| 30 | 90.0 ± 1.2 (3) | 51.1 ± 1.1 (3) | +38.9, p < 0.001: significant |" in text
    assert "by seed: gresnetfc100 s0 0.100, s1 0.200, s2 0.300; resnetfc100 s0 0.050," in text
    # 79 % against 88 % in every seed: no spread on either side, so any gap is significant.
    assert "Test accuracy gap (gated − ungated, full test split): -9.00, p < 0.001: significant" in text


def test_fewer_than_three_seeds_say_so_and_no_seed_is_an_error(tmp_path, capsys):
    assert main(["--results", str(tmp_path)]) == 1
    assert "no fig5.d100.e100.s<seed>/analysis.json" in capsys.readouterr().err
    _write(tmp_path, 0, _analysis(0.8, 0.9, {30: 0.72}, {30: 0.45}, {30: 0.8}))
    assert main(["--results", str(tmp_path)]) == 0
    assert "too few seeds" in capsys.readouterr().out


def test_the_figure_draws_each_arms_mean_and_spread_and_the_papers_numbers(tmp_path):
    for seed, (g, u) in enumerate([(0.72, 0.45), (0.71, 0.46), (0.73, 0.47)]):
        _write(tmp_path, seed, _analysis(0.8, 0.9, {30: g}, {30: u}, {30: 0.8}))
    found = curves(tmp_path)
    assert found["removed"] == list(range(51))
    gated = found["arms"]["gated random"]
    assert gated["mean"][30] == 90.0 and gated["std"][30] == 1.25 and gated["mean"][0] == 100.0
    assert sorted(gated["seeds"]) == ["0", "1", "2"]
    # The paper: above 96 % of G-ResNet-100's 98.74 % after 20 blocks, −8 % after 30, and
    # the ungated net around 60 % of its 98.50 % after 20.
    assert found["paper"] == {"gated random": {"20": 97.2, "30": 92.0},
                              "ungated random": {"20": 60.9}}
    out = tmp_path / "out"
    assert main(["--results", str(tmp_path), "--out", str(out)]) == 0
    assert (out / "rg_fig5_seeds.png").stat().st_size > 10_000
    assert json.loads((out / "rg_fig5_seeds.json").read_text()) == found
