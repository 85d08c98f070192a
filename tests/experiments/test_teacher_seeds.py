"""experiments/compression/teacher_seeds.py: the taught and untaught compressions over
seeds, on fabricated run records, and on the records this repository keeps."""

import json
import math
import re
from pathlib import Path

import pytest

from experiments.compression.teacher_seeds import ARMS, RESULTS, comparison, main, markdown
from experiments.tools.seeds import welch

ROOT = Path(__file__).resolve().parents[2]
REMOVED = ["stage1_unit2", "stage2_unit2"]


def _run(results, name, accuracy, source=0.88, removed=REMOVED, train=0.9):
    folder = results / name
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(
        {"test_accuracy": accuracy, "source_test_accuracy": source}))
    (folder / "compression.json").write_text(json.dumps(
        {"record": {"removed": removed, "history": {"pressure": [], "finetune": [
            {"accuracy": 0.5}, {"accuracy": train}]}}}))


def test_the_arms_collect_their_seeds_in_order_and_are_compared_by_welch(tmp_path):
    taught, untaught = (0.866, 0.8655, 0.8675), (0.8529, 0.851, 0.855)
    for seed, (t, u) in reversed(list(enumerate(zip(taught, untaught)))):
        suffix = f"-s{seed}" if seed else ""
        _run(tmp_path, ARMS["taught"] + suffix, t, train=0.89)
        _run(tmp_path, ARMS["untaught"] + suffix, u, train=0.914)
    # Not part of either arm: another recipe, an unfinished seed.
    _run(tmp_path, ARMS["untaught"].replace("-lr05", "-e60"), 0.5)
    (tmp_path / f"{ARMS['taught']}-s3").mkdir()
    found = comparison(tmp_path)
    assert [run["seed"] for run in found["arms"]["taught"]["runs"]] == [0, 1, 2]
    assert [run["test"] for run in found["arms"]["untaught"]["runs"]] == pytest.approx(
        [100 * u for u in untaught])
    expected = welch([100 * t for t in taught], [100 * u for u in untaught])
    assert found["gap"]["p"] == pytest.approx(expected["p"]) and found["gap"]["p"] < 0.05
    assert found["gap"]["verdict"] == "significant"
    assert found["arms"]["taught"]["below_source"] == pytest.approx(88 - 100 * sum(taught) / 3)
    assert found["arms"]["taught"]["within_goal"] == [0, 1, 2]  # all within 1.5 of 88.00
    assert found["arms"]["untaught"]["within_goal"] == []
    text = markdown(found)
    assert "| taught | `gresnet20.e100-m05-kd` | 0: 86.60, 1: 86.55, 2: 86.75 |" in text
    assert "| 3 of 3 | 89.0, 89.0, 89.0 |" in text and "| 0 of 3 | 91.4, 91.4, 91.4 |" in text
    assert text.endswith(": significant") and "taught − untaught: +1.34, p = " in text


def test_two_seeds_a_side_are_too_few_to_tell(tmp_path):
    for name, accuracy in ((ARMS["taught"], 0.866), (ARMS["taught"] + "-s1", 0.8633),
                           (ARMS["untaught"], 0.8529)):
        _run(tmp_path, name, accuracy)
    found = comparison(tmp_path)
    assert found["gap"]["verdict"] == "too few seeds" and found["gap"]["p"] is None
    assert math.isclose(found["gap"]["gap"], (86.6 + 86.33) / 2 - 85.29)


def test_runs_that_removed_other_blocks_or_started_elsewhere_are_refused(tmp_path):
    _run(tmp_path, ARMS["taught"], 0.866)
    _run(tmp_path, ARMS["untaught"], 0.85, removed=["stage3_unit2"])
    with pytest.raises(ValueError, match="differ in their source or in the blocks"):
        comparison(tmp_path)
    other = tmp_path / "other"
    _run(other, ARMS["taught"], 0.866)
    _run(other, ARMS["untaught"], 0.85, source=0.87)
    with pytest.raises(ValueError, match="differ in their source"):
        comparison(other)
    with pytest.raises(ValueError, match="no finished run .* run experiments/compression/queue.sh"):
        comparison(tmp_path / "empty")
    assert main(["--results", str(other)]) == 2


def test_the_page_prints_what_the_command_gives_for_the_kept_records(capsys):
    assert main([]) == 0
    printed = capsys.readouterr().out.strip()
    page = (ROOT / "docs" / "compression.md").read_text()
    assert printed in page, ("docs/compression.md must show "
                             "`python -m experiments.compression.teacher_seeds`")
    # ...and the runs it reads are the ones the queue names.
    queue = (ROOT / "experiments" / "compression" / "queue.sh").read_text()
    for arm in ARMS.values():
        seeds = [run for run in RESULTS.iterdir()
                 if re.fullmatch(re.escape(arm) + r"(-s\d+)?", run.name)]
        assert seeds and all(f"compress {run.name} " in queue for run in seeds)
