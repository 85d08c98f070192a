"""The real-data benchmark: GResNet20 trained through the CIFAR-10 pipeline of
training.train against in-memory synthetic tensors, both figures reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.pipeline import summarise

ROOT = Path(__file__).resolve().parents[2]


def _has_cifar10_zip() -> bool:
    from keras_gated.datasets import CIFAR10_ZIP, data_dirs

    return any((directory / CIFAR10_ZIP).exists() for directory in data_dirs())


def test_summary_medians_ratio_and_paired_ratios():
    runs = [{"data": "synthetic", "train_img_s": 100.0}, {"data": "cifar10", "train_img_s": 90.0,
                                                         "cache_fill_s": 2.0, "epoch_start_s": 0.1,
                                                         "examples": 50},
            {"data": "cifar10", "train_img_s": 120.0, "cache_fill_s": 4.0, "epoch_start_s": 0.3,
             "examples": 50}, {"data": "synthetic", "train_img_s": 120.0}]
    summary = summarise(runs)
    assert summary["train_img_s"]["synthetic"]["median"] == 110
    assert summary["ratio"] == pytest.approx(105 / 110)
    assert summary["paired_ratios"] == pytest.approx([0.9, 1.0])
    assert summary["cache_fill_s"] == 3.0 and summary["examples"] == 50


@pytest.mark.skipif(not _has_cifar10_zip(), reason="needs cifar10-jpeg.zip in a data directory")
@pytest.mark.slow  # real CIFAR-10 through the pipeline, interleaved launches (25 s)
def test_pipeline_command_reports_both_figures(tmp_path):
    command = [sys.executable, "-m", "benchmarks.pipeline", "--launches", "1", "--steps", "2",
               "--batch", "8", "--examples", "64", "--jit-compile", "False", "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "pipeline.json").read_text())
    assert {run["data"] for run in result["runs"]} == {"synthetic", "cifar10"}
    assert result["train_img_s"]["synthetic"]["median"] > 0
    assert result["train_img_s"]["cifar10"]["median"] > 0
    assert result["ratio"] > 0 and result["examples"] == 64
    table = (tmp_path / "pipeline.md").read_text()
    assert "| synthetic |" in table and "| cifar10 |" in table


@pytest.mark.skipif(not _has_cifar10_zip(), reason="needs cifar10-jpeg.zip in a data directory")
def test_pipeline_alone_reports_speed_and_cpu_cost(tmp_path):
    from benchmarks.pipeline import main

    assert main(["--alone", "--examples", "64", "--batch", "8", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "pipeline_alone.json").read_text())
    assert result["examples"] == 64 and result["img_s"] > 0 and result["cpu_ms_per_1000_images"] > 0
