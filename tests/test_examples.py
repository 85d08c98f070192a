"""The examples run."""

import runpy
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_gate_removal_example(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["gate_removal.py"])
    runpy.run_path(str(EXAMPLES / "gate_removal.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "accuracy with every unit" in out
    assert out.count("without stage") == 7  # 9 units, 2 of them downsample
