"""The benchmark harness runs end to end (tiny sizes, one launch) and its PyTorch peers are
the same architectures as the keras-gated models they are compared with."""

from __future__ import annotations

import importlib.util
import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.machine import cpu_peak
from tests.support.helpers import trainable_count

ROOT = Path(__file__).resolve().parents[2]


def test_cpu_peak_formula_multiplies_out():
    peak = cpu_peak(cores=2, ghz=2.5)
    assert peak.gflops == 2 * peak.fma_units * peak.lanes * 2 * 2.5
    assert f"{peak.gflops:.0f} GFLOP/s" in peak.formula()


@pytest.mark.parametrize("name", ["gresnet20", "preactresnet20", "gwrn_16_2", "gresnetfc10"])
@pytest.mark.needs("torch")
def test_peer_has_the_same_trainable_parameters(name):
    import torch

    import keras_gated as kg
    from benchmarks.peers import build_peer

    peer, _ = build_peer(name)
    peer_count = sum(p.numel() for p in peer.parameters() if p.requires_grad)
    assert peer_count == trainable_count(kg.create_model(name))
    assert isinstance(peer, torch.nn.Module)


@pytest.mark.slow  # a whole benchmark launch; tests/benchmarks/test_choices.py runs a short one
def test_run_writes_the_table_json_and_plot(tmp_path):
    command = [sys.executable, "-m", "benchmarks.run", "--models", "gresnetfc2", "--backends", "tensorflow",
               "--launches", "1", "--steps", "2", "--batch", "8", "--latency-calls", "3",
               "--infer-batch", "8", "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "fp32 limit" in done.stdout and "| gresnetfc2 | keras-gated (tensorflow) |" in done.stdout
    results = json.loads((tmp_path / "results.json").read_text())
    implementations = {row["implementation"] for row in results["rows"]}
    assert "keras-gated (tensorflow)" in implementations
    for row in results["rows"]:
        assert row["train_img_s"]["median"] > 0 and row["peak_rss_mb"] > 0
    if "PyTorch peer, channels_last" in implementations:
        assert "vs PyTorch channels_last" in done.stdout
        peer = next(r for r in results["rows"] if r["implementation"] == "PyTorch peer, channels_last")
        assert peer["vs_peer_channels_last"] == 1.0
    assert (tmp_path / "train_img_s.png").stat().st_size > 1000
    assert (tmp_path / "results.md").read_text().startswith("`python -m benchmarks.run")


@pytest.mark.slow  # five fresh processes: out of the default run's time budget
def test_scaling_sweeps_batch_and_depth_and_plots(tmp_path):
    from benchmarks.scaling import medians

    command = [sys.executable, "-m", "benchmarks.scaling", "--backend", "jax", "--steps", "2",
               "--batches", "8", "16", "--conv", "gresnet20", "--fc", "gresnetfc2", "gresnetfc10",
               "--depth-batch", "8", "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    runs = json.loads((tmp_path / "scaling.json").read_text())["runs"]
    assert [(r["sweep"], r["model"], r["batch"]) for r in runs] == [
        ("batch", "gresnet20", 8), ("batch", "gresnet20", 16), ("conv depth", "gresnet20", 8),
        ("fc depth", "gresnetfc2", 8), ("fc depth", "gresnetfc10", 8)]
    for run in runs:
        assert run["train_img_s"] > 0 and run["peak_rss_mb"] > 0
        assert abs(run["step_ms"] - 1e3 * run["batch"] / run["train_img_s"]) < 1e-6
    assert len(medians(runs + runs)) == len(runs)
    assert (tmp_path / "scaling.png").stat().st_size > 1000
    assert "| batch | gresnet20 | 16 |" in (tmp_path / "scaling.md").read_text()


def test_on_a_gpu_the_variants_are_mixed_precision_for_every_backend_and_the_peer():
    from benchmarks.run import implementations

    gpu = implementations(["jax", "torch"], peer=True, variants=True, gpu=True)
    precisions = {(i.get("backend", "peer"), i.get("precision", "float32")) for i in gpu if i["impl"] == "keras"}
    assert precisions == {(b, p) for b in ("jax", "torch") for p in ("float32", "mixed_bfloat16", "mixed_float16")}
    cpu = implementations(["tensorflow"], peer=False, variants=True, gpu=False)
    assert {i.get("precision") for i in cpu} == {None, "mixed_bfloat16"}  # the CPU trap, shown
    peers = [i for i in gpu if i["impl"] == "torch"]
    if importlib.util.find_spec("torch") is None:
        assert not peers  # without PyTorch the peer is left out of the run, not failed
        return
    assert any(p.get("precision") == "mixed_bfloat16" for p in peers)
    # The peer at its best: torch.compile, in float32 and with bf16 autocast.
    compiled = {p.get("precision", "float32") for p in peers if p.get("compile")}
    assert compiled == {"float32", "mixed_bfloat16"}


def test_summary_compares_with_the_float32_channels_last_peer_and_leaves_out_cpu_peak_on_a_gpu():
    from benchmarks.run import markdown, summarise

    def run(name, img_s, reference=False):
        return {"implementation": name, "train_img_s": img_s, "latency": {"p50_ms": 1.0, "p90_ms": 2.0},
                "infer_img_s": 10.0, "peak_rss_mb": 100.0, "peak_device_mb": 50.0, "device": "gpu",
                "peer_reference": reference}

    # The bf16 peer row comes first: the reference is the float32 channels_last one.
    rows = summarise("gresnet20", [run("PyTorch peer (GPU), channels_last, mixed_bfloat16 autocast", 300.0),
                                   run("PyTorch peer (GPU), channels_last", 200.0, True),
                                   run("keras-gated (jax, GPU)", 100.0)], 150.0, 1e9)
    ratios = {r["implementation"]: r["vs_peer_channels_last"] for r in rows}
    assert ratios["keras-gated (jax, GPU)"] == 0.5 and ratios["PyTorch peer (GPU), channels_last"] == 1.0
    assert all(r["fraction_of_peak"] is None for r in rows)  # GPU rows: the CPU's limit is left out
    cpu_row = summarise("gresnet20", [{**run("keras-gated (tensorflow)", 100.0), "device": "cpu"}], 150.0, 1e9)
    assert cpu_row[0]["fraction_of_peak"] == pytest.approx(100.0 / 150.0)
    table = markdown(rows, "header")
    assert "| – |" in table and "(GPU: 50)" in table


def test_every_row_is_compared_with_the_best_peer_and_the_gpus_bf16_peak():
    from benchmarks.run import gpu_bf16_peak_gflops, markdown, summarise

    def run(name, img_s, **extra):
        return {"implementation": name, "train_img_s": img_s, "latency": {"p50_ms": 1.0, "p90_ms": 2.0},
                "infer_img_s": 10.0, "peak_rss_mb": 100.0, "peak_device_mb": 50.0, "device": "gpu",
                **extra}

    peak = gpu_bf16_peak_gflops("NVIDIA H100 80GB HBM3")
    assert peak == 989.4e3 and gpu_bf16_peak_gflops("NVIDIA H200") == 989.4e3
    assert gpu_bf16_peak_gflops("Some Other GPU") is None and gpu_bf16_peak_gflops(None) is None
    rows = summarise("gwrn_28_10", [
        run("PyTorch peer (GPU), channels_last", 200.0, peer=True, peer_reference=True),
        run("PyTorch peer (GPU), channels_last, mixed_bfloat16 autocast, torch.compile", 400.0, peer=True),
        run("keras-gated (jax, GPU, mixed_bfloat16)", 500.0)], 150.0, 1e12, peak)
    by_name = {r["implementation"]: r for r in rows}
    keras_row = by_name["keras-gated (jax, GPU, mixed_bfloat16)"]
    assert keras_row["vs_peer_best"] == 1.25 and keras_row["vs_peer_channels_last"] == 2.5
    assert keras_row["peer_best"].endswith("torch.compile")
    assert keras_row["fraction_of_gpu_bf16_peak"] == pytest.approx(500.0 * 1e3 / 989.4e3)
    assert "| 1.25 |" in markdown(rows, "header") and "50.5 %" in markdown(rows, "header")


@pytest.mark.slow
@pytest.mark.needs("torch")
def test_the_compiled_peer_trains(tmp_path):
    """``--torch-compile`` on this machine's CPU (inductor): the peer compiles and trains."""
    from benchmarks.measure import measure_torch

    args = argparse.Namespace(model="gresnetfc2", batch=8, steps=2, latency_calls=2, infer_batch=8,
                              channels_last=False, precision="float32", torch_compile=True)
    result = measure_torch(args)
    assert result["implementation"].endswith("torch.compile") and result["train_img_s"] > 0
    assert result["peer"] and not result["peer_reference"]


def test_gpu_name_asks_nvidia_smi_for_the_first_visible_gpu(monkeypatch):
    import subprocess as sp

    from benchmarks import machine

    calls = []

    def fake_run(command, **kwargs):
        calls.append(command)
        return sp.CompletedProcess(command, 0, stdout="NVIDIA H100 80GB HBM3\n", stderr="")

    monkeypatch.setattr(machine.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(machine.subprocess, "run", fake_run)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert machine.gpu_name() == "NVIDIA H100 80GB HBM3"
    assert calls[-1][-2:] == ["-i", "3"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # every GPU hidden
    assert machine.gpu_name() is None
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setattr(machine.shutil, "which", lambda name: None)  # no NVIDIA driver
    assert machine.gpu_name() is None
