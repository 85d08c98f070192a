"""benchmarks/choices.py: every choice is launched, interleaved, and compared with its
backend's default; a choice that fails is reported, not fatal."""

from __future__ import annotations

import json

from benchmarks import choices


def test_a_real_launch_writes_the_json_and_the_table(tmp_path):
    code = choices.main(["--model", "gresnetfc2", "--launches", "1", "--batch", "8",
                         "--steps", "2", "--only", "tf-eigen", "--out", str(tmp_path)])
    assert code == 0
    saved = json.loads((tmp_path / "choices.json").read_text())
    (row,) = saved["rows"]
    assert row["choice"] == "tf-eigen" and row["args"] == ["--jit-compile", "False"]
    assert row["train_img_s"]["n"] == 1 and row["train_img_s"]["median"] > 0 and not row["errors"]
    assert row["vs_default"] is None  # its default (tf-onednn) was not measured
    assert "`TF_ENABLE_ONEDNN_OPTS=0 --jit-compile False`" in (tmp_path / "choices.md").read_text()


def test_launches_are_interleaved_compared_and_failures_reported(monkeypatch):
    speeds = {"tf-onednn": 200.0, "tf-eigen": 150.0}
    order = []

    def fake_launch(choice, model, batch, steps, timeout):
        order.append(choice.name)
        if choice.name in speeds:
            return {"train_img_s": speeds[choice.name] + len(order), "wall_s": 1.0}
        return {"error": "ValueError: unknown policy"}

    monkeypatch.setattr(choices, "launch", fake_launch)
    picked = [c for c in choices.CHOICES if c.name in ("tf-onednn", "tf-eigen", "tf-onednn-1-thread")]
    rows = {row["choice"]: row for row in choices.measure(picked, "m", 2, 8, 2, 60)}
    assert order == ["tf-onednn", "tf-eigen", "tf-onednn-1-thread"] * 2
    assert rows["tf-onednn"]["train_img_s"]["median"] == 200.0 + (1 + 4) / 2
    assert rows["tf-eigen"]["vs_default"] == (150.0 + (2 + 5) / 2) / (200.0 + (1 + 4) / 2)
    failed = rows["tf-onednn-1-thread"]
    assert failed["train_img_s"] is None and failed["vs_default"] is None and failed["errors"]
    table = choices.markdown(list(rows.values()), "header")
    assert "**tf-onednn** (default)" in table and "failed: ValueError" in table
