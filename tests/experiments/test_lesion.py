"""experiments/tools/lesion.py: the accuracy lost per removed block, grouped by stage, on a
fabricated analysis and on the committed GResNet-20 one."""

import json
import math
from pathlib import Path

from experiments.tools.lesion import drops, main, markdown, stage_of

ROOT = Path(__file__).resolve().parents[2]


def test_blocks_are_grouped_by_their_stage():
    assert stage_of("stage2_unit3") == "stage2" and stage_of("stage10_unit1") == "stage10"
    assert stage_of("block7") == "all"


def test_drops_per_block_and_per_stage():
    found = drops({"accuracy": 0.9, "single_removal": {
        "stage1_unit2": 0.8, "stage1_unit3": 0.6, "stage2_unit2": 0.85}})
    assert math.isclose(found["blocks"]["stage1_unit3"]["drop"], 30.0)
    assert math.isclose(found["stages"]["stage1"]["mean"], 20.0)
    assert math.isclose(found["stages"]["stage1"]["max"], 30.0) and found["stages"]["stage1"]["n"] == 2
    assert found["mildest"] == "stage2_unit2" and found["worst"] == "stage1_unit3"
    text = markdown(found)
    assert "| stage1 | 2 | 20.00 | 30.00 |" in text
    assert "mildest removal: stage2_unit2, 85.00 % of 90.00 % (drop 5.00 points)" in text


def test_the_committed_gresnet20_analysis_loses_most_in_its_last_stage(capsys):
    path = ROOT / "docs" / "figures" / "gresnet20_cifar10" / "analysis.json"
    found = drops(json.loads(path.read_text()))
    means = {stage: s["mean"] for stage, s in found["stages"].items()}
    assert max(means, key=means.get) == "stage3"
    assert main([str(path)]) == 0
    assert "mildest removal: stage2_unit3, 77.68 % of 88.02 %" in capsys.readouterr().out


def test_a_missing_an_invalid_or_a_removal_free_analysis_is_refused_in_one_sentence(
        tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{bad")
    (tmp_path / "other.json").write_text('{"accuracy": 0.9}')
    for name, reason in (("missing.json", "does not exist"), ("bad.json", "is not valid JSON"),
                         ("other.json", "has no single_removal")):
        assert main([str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"experiments.tools.lesion: error: {tmp_path / name} {reason}")
        assert len(err.splitlines()) == 1
