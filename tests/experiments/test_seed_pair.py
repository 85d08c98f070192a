"""experiments/tools/seeds.py (mean ± std, a gap under Welch's t-test) and
experiments/highway/seed_pair.py (Highway Fig. 1 at d = 50 over seeds), on fabricated
run records."""

import json
import math

from experiments.highway.seed_pair import markdown, pair
from experiments.tools.seeds import gap, spread, spread_text


def test_spread_and_gap_follow_their_formulas():
    assert spread([]) == (None, None, 0) and spread([2.0]) == (2.0, None, 1)
    mean, std, n = spread([1.0, 2.0, 4.0])
    assert (mean, n) == (7 / 3, 3) and math.isclose(std, math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2
                                                                     + (4 - 7 / 3) ** 2) / 2))
    assert spread_text([1.0, 3.0]) == "2.00 ± 1.41 (2)" and spread_text([]) == "—"
    assert gap([1, 2], [3, 4, 5])["verdict"] == "too few seeds"
    close = gap([10.0, 10.2, 9.8], [10.1, 10.3, 9.9])
    assert math.isclose(close["t"], -0.1 / math.sqrt(0.04 / 3 + 0.04 / 3))
    assert close["p"] > 0.05 and close["verdict"] == "within noise"
    assert gap([10.0, 10.2, 9.8], [12.0, 12.2, 11.8])["verdict"] == "significant"
    assert gap([], [1.0])["verdict"] == "not run"


def _run(results, name, accuracy, losses):
    folder = results / name
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({"test_accuracy": accuracy}))
    (folder / "log.csv").write_text("epoch,loss\n" + "".join(f"{i},{v}\n" for i, v in enumerate(losses)))


def test_the_pair_reads_each_familys_seeds_and_compares_them(tmp_path):
    for seed, (acc_h, acc_p) in enumerate(((0.86, 0.84), (0.87, 0.845), (0.865, 0.842))):
        _run(tmp_path, f"hwfig1s.highwayfc50.s{seed}.e10", acc_h, (1.0, 0.30 + seed / 100, 0.4))
        _run(tmp_path, f"hwfig1s.plainnet50.s{seed}.e10", acc_p, (1.0, 0.38, "nan"))
    # Not part of the pair: another depth, a search run, an unfinished run.
    _run(tmp_path, "hwfig1s.highwayfc10.s0.e10", 0.5, (9.0,))
    _run(tmp_path, "hwfig1s.plainnet50.tanh.lr0.003.val10", 0.5, (9.0,))
    (tmp_path / "hwfig1s.plainnet50.s3.e10").mkdir()
    found = pair(tmp_path)
    assert sorted(found["runs"]["highwayfc"]) == [0, 1, 2] and sorted(found["runs"]["plainnet"]) == [0, 1, 2]
    assert math.isclose(found["runs"]["highwayfc"][1]["error"], 13.0)
    assert found["runs"]["highwayfc"][2]["loss"] == 0.32 and found["runs"]["plainnet"][0]["loss"] == 0.38
    # Highway errors 14, 13, 13.5 against plain 16, 15.5, 15.8: a gap of about -2.27 points.
    assert math.isclose(found["gaps"]["error"]["gap"], 13.5 - (16 + 15.5 + 15.8) / 3)
    assert found["gaps"]["error"]["verdict"] == "significant"
    text = markdown(found)
    assert "| test error % | 13.50 ± 0.50 (3) | 15.77 ± 0.25 (3) | -2.27, p = " in text
    assert "| best training loss | 0.3100 ± 0.0100 (3) | 0.3800 ± 0.0000 (3) |" in text


def test_with_a_prefix_the_highway_side_is_its_repeat_and_the_plain_side_stays(tmp_path):
    for seed in range(3):
        _run(tmp_path, f"hwfig1s.highwayfc50.s{seed}.e10", 0.80, (1.0, 0.5))
        _run(tmp_path, f"reinit.hwfig1s.highwayfc50.s{seed}.e10", 0.90 + seed / 100, (1.0, 0.2))
        _run(tmp_path, f"hwfig1s.plainnet50.s{seed}.e10", 0.85, (1.0, 0.4))
    _run(tmp_path, "reinit.hwfig1s.plainnet50.s0.e10", 0.10, (9.0,))  # never read
    found = pair(tmp_path, highway_prefix="reinit.")
    assert [r["error"] for r in found["runs"]["highwayfc"].values()] == [
        100.0 * (1.0 - (0.90 + seed / 100)) for seed in range(3)]
    assert {r["loss"] for r in found["runs"]["plainnet"].values()} == {0.4}
    assert pair(tmp_path)["runs"]["highwayfc"][0]["loss"] == 0.5


def test_the_repeat_is_set_against_the_first_runs_seed_by_seed(tmp_path):
    from experiments.highway.seed_pair import repeat, repeat_markdown
    for seed in range(3):
        _run(tmp_path, f"hwfig1s.highwayfc50.s{seed}.e10", 0.85, (1.0, 0.40 + seed / 100))
        _run(tmp_path, f"reinit.hwfig1s.highwayfc50.s{seed}.e10", 0.90, (1.0, 0.30 + seed / 100))
    found = repeat(tmp_path, "reinit.")
    assert math.isclose(found["gaps"]["loss"]["gap"], -0.10)
    assert math.isclose(found["gaps"]["error"]["gap"], -5.0)
    text = repeat_markdown(found)
    assert "0.3100 ± 0.0100 (3): 0.3000, 0.3100, 0.3200 | 0.4100 ± 0.0100 (3): 0.4000, 0.4100, 0.4200 |" in text
