"""experiments/residual_gates/seed_table.py: a cell's mean ± std over its seeded runs, the
first two-thread run kept apart, and a gap that is significant only with 3 seeds a side and
Welch's p under 5 %."""

import json
import math

from experiments.residual_gates.seed_table import (
    compare,
    first_run_differences,
    first_run_markdown,
    k_markdown,
    loss_markdown,
    markdown,
    pair_markdown,
    spread,
    table,
)


def _run(results, name, accuracy, ks=(1.0,)):
    folder = results / name
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({"test_accuracy": accuracy}))
    rows = ["epoch,gate,k"] + [f"19,block{i},{k}" for i, k in enumerate(ks)]
    (folder / "gates.csv").write_text("\n".join(rows) + "\n")


def test_spread_is_the_mean_and_sample_standard_deviation():
    assert spread([1.0, 2.0, 3.0]) == (2.0, 1.0, 3)
    assert spread([4.0]) == (4.0, None, 1)
    assert spread([]) == (None, None, 0)


def test_a_gap_is_significant_only_with_three_seeds_and_welchs_p_under_5_percent():
    wide = {"errors": {0: 10.0, 1: 11.0, 2: 12.0}}
    assert compare(wide, {"errors": {0: 20.0, 1: 21.0, 2: 22.0}})["verdict"] == "significant"
    near = compare(wide, {"errors": {0: 10.5, 1: 11.5, 2: 12.5}})
    assert near["verdict"] == "within noise"
    assert math.isclose(near["t"], -0.5 / math.sqrt(1 / 3 + 1 / 3)) and math.isclose(near["df"], 4.0)
    assert compare(wide, {"errors": {0: 30.0, 1: 31.0}})["verdict"] == "too few seeds"
    assert compare(wide, {"errors": {}})["verdict"] == "not run"


def test_the_table_reads_each_cells_seeded_runs_and_keeps_the_first_run_apart(tmp_path):
    for seed, accuracy in enumerate((0.90, 0.91, 0.92)):
        _run(tmp_path, f"rgtable.gresnetfc2.e20.t1.s{seed}", accuracy, ks=(2.0, 4.0))
        _run(tmp_path, f"rgtable.resnetfc2.e20.t1.s{seed}", accuracy - 0.05)
    _run(tmp_path, "rgtable.gresnetfc2.e20", 0.50)  # the first run: shown apart, not averaged
    _run(tmp_path, "rgtable.gresnetfc2.e20.t1.s3.other", 0.10)  # not a seeded run's name
    rows = table(tmp_path)
    gated = rows[0]["cells"]["gresnetfc"]
    assert [round(e, 6) for e in gated["errors"].values()] == [10.0, 9.0, 8.0]
    assert gated["first_run"] == 50.0 and gated["mean_k"] == {0: 3.0, 1: 3.0, 2: 3.0}
    gap = rows[0]["gaps"]["gresnetfc"]
    assert math.isclose(gap["gap"], -5.0) and gap["verdict"] == "significant"
    text = markdown(rows)
    assert "| 2 | 9.00 ± 1.00 (3) | 14.00 ± 1.00 (3) | -5.00, p = 0.004: significant |" in text
    assert text.count("\n") == 1 + len(rows)


def test_first_runs_are_set_against_their_seed_0_re_runs_where_both_train(tmp_path):
    _run(tmp_path, "rgtable.resnetfc20.e20", 0.88)
    _run(tmp_path, "rgtable.resnetfc20.e20.t1.s0", 0.86)
    _run(tmp_path, "rgtable.plainnet50.e20", 0.20)  # fails in both: no re-run spread to read
    _run(tmp_path, "rgtable.plainnet50.e20.t1.s0", 0.15)
    found = first_run_differences(table(tmp_path))
    assert [(name, round(a, 6), round(b, 6)) for name, a, b in found] == [("resnetfc20", 12.0, 14.0)]
    assert "1 cells: median |difference| 2.00, largest 2.00 points" in first_run_markdown(found)


def test_any_two_families_compare_and_table_2_gives_mean_k_over_seeds(tmp_path):
    for seed, accuracy in enumerate((0.80, 0.81, 0.82)):
        _run(tmp_path, f"rgtable.gplainnet20.e20.t1.s{seed}", accuracy, ks=(1.0, 1.0 + seed))
        _run(tmp_path, f"rgtable.resnetfc20.e20.t1.s{seed}", accuracy + 0.05)
    rows = table(tmp_path)
    text = pair_markdown(rows, "gplainnet", "resnetfc")
    assert "| 20 | 19.00 ± 1.00 (3) | 14.00 ± 1.00 (3) | +5.00, p = 0.004: significant |" in text
    assert "| 2 | — | — | — |" in text
    # mean k per run: 1.0, 1.5, 2.0 -> 1.50 ± 0.50 over the three seeds
    assert "| 20 | — | 1.50 ± 0.50 (3) | — |" in k_markdown(rows)
    for seed, ks in enumerate(((0.5, 0.5), (0.6, 0.6), (0.7, 0.7))):
        _run(tmp_path, f"rgtable.gresnetfc20.e20.t1.s{seed}", 0.85, ks=ks)
    # G-PlainNet 1.50 ± 0.50 against G-ResNet-FC 0.60 ± 0.10: +0.90, Welch's p on 2.2 degrees of freedom (scipy: 0.084)
    assert "| 20 | 0.60 ± 0.10 (3) | 1.50 ± 0.50 (3) | +0.90, p = 0.084: within noise |" in k_markdown(table(tmp_path))


def test_fig3_reads_each_seeds_last_training_loss(tmp_path):
    for seed, last in enumerate((0.20, 0.22, 0.24)):
        _run(tmp_path, f"rgtable.gresnetfc50.e20.t1.s{seed}", 0.9)
        (tmp_path / f"rgtable.gresnetfc50.e20.t1.s{seed}" / "log.csv").write_text(
            f"epoch,loss\n0,0.9\n1,{last}\n")
    rows = table(tmp_path)
    assert rows[3]["cells"]["gresnetfc"]["last_loss"] == {0: 0.20, 1: 0.22, 2: 0.24}
    assert "| 50 | 0.220 ± 0.020 (3) | — | — |" in loss_markdown(rows)


def test_the_pre_activation_resnets_are_a_family_of_their_own(tmp_path):
    for seed, accuracy in enumerate((0.80, 0.81, 0.82)):
        _run(tmp_path, f"rgtable.resnetfc10.preact.e20.t1.s{seed}", accuracy)
        _run(tmp_path, f"rgtable.resnetfc10.e20.t1.s{seed}", accuracy + 0.05)
    rows = table(tmp_path)
    assert rows[1]["cells"]["resnetfc_preact"]["errors"].keys() == {0, 1, 2}
    assert rows[1]["cells"]["resnetfc"]["errors"].keys() == {0, 1, 2}  # not mixed with the preact runs
    text = pair_markdown(rows, "resnetfc_preact", "resnetfc")
    assert "| 10 | 19.00 ± 1.00 (3) | 14.00 ± 1.00 (3) | +5.00, p = 0.004: significant |" in text
