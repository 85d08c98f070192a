"""Benchmark keras-gated against plain PyTorch peers, interleaved in one run.

    python -m benchmarks.run --quick
    python -m benchmarks.run --models gresnet20 gwrn_16_2 gresnetfc50 --launches 5

For each model and implementation (keras-gated on each installed backend; the PyTorch
peer in NCHW and channels_last), ``--launches`` fresh processes are started, interleaved
(launch 1 of every implementation, then launch 2, ...), so that load from elsewhere hits
them alike. Reported: the median (min-max) of training img/s, batch-1 latency p50/p90,
batch-256 inference img/s, peak resident memory, and the fraction of the machine's fp32
FLOP limit the training reaches (counted MACs × 2 FLOPs × 3 for forward + backward).
Writes ``results.json``, ``results.md`` and ``train_img_s.png`` into ``--out``: by default
the committed ``benchmarks/results/``, but a ``--quick`` smoke run writes to a scratch
folder outside the checkout (``default_out``) unless ``--out`` names one.

On a machine with an NVIDIA GPU every implementation runs on the GPU (the fraction of the
GPU's dense bf16 peak replaces the CPU's FLOP limit), and ``--variants`` adds mixed
precision (``mixed_bfloat16``, ``mixed_float16``) on each Keras backend and the peer at its
best: bf16 autocast and ``torch.compile``; every row is also compared with the fastest
peer variant measured.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.machine import cpu_peak, gpu_name

QUICK_MODELS = ("gresnet20",)
DEFAULT_MODELS = ("gresnet20", "preactresnet20", "gwrn_16_2", "gresnetfc50")
TRAIN_FLOPS_PER_MAC = 2 * 3  # 2 FLOPs per MAC; backward ≈ 2 × forward


def implementations(backends: list[str], peer: bool, variants: bool = False, gpu: bool = False) -> list[dict]:
    impls = [{"impl": "keras", "backend": b} for b in backends]
    if variants and gpu:
        # Mixed precision where it pays: on the GPU, for every backend and the peer.
        impls += [{"impl": "keras", "backend": b, "precision": precision}
                  for b in backends for precision in ("mixed_bfloat16", "mixed_float16")]
    elif variants and "tensorflow" in backends:
        # TensorFlow's own kernels where it leaves oneDNN off (keras-gated then picks
        # XLA), and mixed precision on this CPU.
        impls += [{"impl": "keras", "backend": "tensorflow", "env": {"TF_ENABLE_ONEDNN_OPTS": "0"}},
                  {"impl": "keras", "backend": "tensorflow", "precision": "mixed_bfloat16"}]
    if peer and importlib.util.find_spec("torch") is not None:
        impls += [{"impl": "torch", "channels_last": False}, {"impl": "torch", "channels_last": True}]
        if variants and gpu:
            # The peer at its best: bf16 autocast, and torch.compile with and without it.
            impls += [{"impl": "torch", "channels_last": True, "precision": "mixed_bfloat16"},
                      {"impl": "torch", "channels_last": True, "compile": True},
                      {"impl": "torch", "channels_last": True, "precision": "mixed_bfloat16",
                       "compile": True}]
    return impls


def launch(model: str, impl: dict, args) -> dict:
    command = [sys.executable, "-m", "benchmarks.measure", "--impl", impl["impl"], "--model", model,
               "--batch", str(args.batch), "--steps", str(args.steps),
               "--latency-calls", str(args.latency_calls), "--infer-batch", str(args.infer_batch)]
    if impl.get("channels_last"):
        command.append("--channels-last")
    if impl.get("jit_compile"):
        command += ["--jit-compile", impl["jit_compile"]]
    if impl.get("compile"):
        command.append("--torch-compile")
    if impl.get("precision"):
        command += ["--precision", impl["precision"]]
    # What users get unless the implementation sets it: nothing inherited.
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", **impl.get("env", {}))
    if impl["impl"] == "keras":
        env["KERAS_BACKEND"] = impl["backend"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=args.timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("BENCH ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return json.loads(lines[-1][len("BENCH "):])


def _stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def training_flops_per_image(model: str, backend: str) -> float:
    """Counted in a child process with every GPU hidden, so that this process, which only
    starts the launches, never takes GPU memory from them."""
    code = ("from keras_gated.flops import count_macs; from keras_gated import create_model; "
            f"print(count_macs(create_model({model!r})))")
    env = dict(os.environ, KERAS_BACKEND=backend, CUDA_VISIBLE_DEVICES="", JAX_PLATFORMS="cpu",
               TF_CPP_MIN_LOG_LEVEL="2")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    if done.returncode:
        raise RuntimeError(f"counting the MACs of {model} failed:\n{done.stderr[-2000:]}")
    return int(done.stdout.split()[-1]) * TRAIN_FLOPS_PER_MAC


# Dense bfloat16 tensor-core peaks (TFLOP/s, no sparsity) from NVIDIA's data sheets, by a
# word of the name nvidia-smi reports; a GPU not listed gets no fraction.
GPU_BF16_PEAK_TFLOPS = {"H200": 989.4, "H100 80GB HBM3": 989.4, "H100 PCIe": 756.0,
                        "H100 NVL": 835.0, "A100": 312.0, "L4": 121.0}


def gpu_bf16_peak_gflops(gpu: str | None) -> float | None:
    """The dense bf16 peak of the GPU ``nvidia-smi`` names, in GFLOP/s (None: unknown)."""
    for key, tflops in GPU_BF16_PEAK_TFLOPS.items():
        if gpu and key in gpu:
            return tflops * 1e3
    return None


def summarise(model: str, runs: list[dict], peak_gflops: float | None, flops: float,
              gpu_peak_gflops: float | None = None) -> list[dict]:
    by_impl: dict[str, list[dict]] = {}
    for run in runs:
        by_impl.setdefault(run["implementation"], []).append(run)
    rows = []
    for name, group in by_impl.items():
        train = _stats([r["train_img_s"] for r in group])
        rows.append({
            "model": model, "implementation": name, "train_img_s": train,
            "latency_p50_ms": statistics.median(r["latency"]["p50_ms"] for r in group),
            "latency_p90_ms": statistics.median(r["latency"]["p90_ms"] for r in group),
            "infer_img_s": statistics.median(r["infer_img_s"] for r in group),
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in group),
            "train_gflops": train["median"] * flops / 1e9,
            # The CPU's limit means nothing for a row measured on a GPU.
            "fraction_of_peak": (train["median"] * flops / 1e9 / peak_gflops
                                 if peak_gflops and group[0].get("device", "cpu") == "cpu" else None),
            # On a GPU: the fraction of its dense bf16 tensor-core peak (the ceiling of
            # mixed precision; float32 rows run on the slower TF32/FP32 units).
            "fraction_of_gpu_bf16_peak": (train["median"] * flops / 1e9 / gpu_peak_gflops
                                          if gpu_peak_gflops and group[0].get("device") == "gpu"
                                          else None),
            "peak_device_mb": (statistics.median(r["peak_device_mb"] for r in group)
                               if all(r.get("peak_device_mb") for r in group) else None),
            "device": group[0].get("device", "cpu"),
            "peer_reference": bool(group[0].get("peer_reference")),
            "peer": bool(group[0].get("peer")),
        })
    peer = next((r for r in rows if r["peer_reference"]), None)
    best = max((r for r in rows if r["peer"]), key=lambda r: r["train_img_s"]["median"], default=None)
    for row in rows:
        row["vs_peer_channels_last"] = (row["train_img_s"]["median"] / peer["train_img_s"]["median"]
                                        if peer else None)
        # Against the fastest peer variant measured (channels_last, autocast, compile).
        row["vs_peer_best"] = (row["train_img_s"]["median"] / best["train_img_s"]["median"]
                               if best else None)
        row["peer_best"] = best["implementation"] if best else None
    return rows


def markdown(rows: list[dict], header: str) -> str:
    lines = [header, "",
             "| model | implementation | train img/s, median (min–max) | vs PyTorch channels_last | "
             "vs the best peer | % of peak (CPU fp32 / GPU bf16) | batch-1 latency p50 / p90 (ms) | "
             "large-batch inference img/s | peak RSS (MB) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        t = r["train_img_s"]
        ratio = f"{r['vs_peer_channels_last']:.2f}" if r["vs_peer_channels_last"] else "–"
        best = f"{r['vs_peer_best']:.2f}" if r.get("vs_peer_best") else "–"
        fraction = r["fraction_of_peak"] if r["fraction_of_peak"] is not None else r.get(
            "fraction_of_gpu_bf16_peak")
        peak = f"{100 * fraction:.1f} %" if fraction is not None else "–"
        memory = f"{r['peak_rss_mb']:.0f}" + (f" (GPU: {r['peak_device_mb']:.0f})" if r["peak_device_mb"] else "")
        lines.append(
            f"| {r['model']} | {r['implementation']} | {t['median']:.0f} ({t['min']:.0f}–{t['max']:.0f}) | "
            f"{ratio} | {best} | {peak} | {r['latency_p50_ms']:.1f} / "
            f"{r['latency_p90_ms']:.1f} | {r['infer_img_s']:.0f} | {memory} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['model']}\n{r['implementation']}" for r in rows]
    medians = [r["train_img_s"]["median"] for r in rows]
    errors = [[m - r["train_img_s"]["min"] for m, r in zip(medians, rows)],
              [r["train_img_s"]["max"] - m for m, r in zip(medians, rows)]]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(rows)), 4))
    ax.bar(range(len(rows)), medians, yerr=errors, capsize=3, color="tab:blue")
    ax.set_xticks(range(len(rows)), labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("train img/s (median, min–max)")
    ax.set_title("Training throughput, batch 128", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


RESULTS_DIR = Path("benchmarks/results")


def default_out(quick: bool) -> Path:
    """Where results go without ``--out``: the committed ``benchmarks/results/`` for a
    full run, a scratch folder in the system's temporary directory for ``--quick``."""
    if not quick:
        return RESULTS_DIR
    return Path(tempfile.gettempdir()) / "keras_gated_benchmarks" / "quick"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="GResNet20 only, 2 launches, fewer steps")
    p.add_argument("--models", nargs="+")
    p.add_argument("--backends", nargs="+", help="Keras backends (default: those of tensorflow, jax and torch "
                   "that are installed)")
    p.add_argument("--no-peer", action="store_true")
    p.add_argument("--variants", action="store_true",
                   help="on a CPU: also TensorFlow with oneDNN off (TensorFlow's default on AVX2 CPUs) "
                        "and with mixed_bfloat16; on a GPU: mixed_bfloat16 and mixed_float16 on every "
                        "backend, and the peer with bf16 autocast")
    p.add_argument("--launches", type=int)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int)
    p.add_argument("--latency-calls", type=int, default=30)
    p.add_argument("--infer-batch", type=int, default=256)
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--out", type=Path, default=None,
                   help="results folder (default: benchmarks/results; with --quick a scratch "
                        "folder in the temporary directory)")
    args = p.parse_args(argv)
    args.out = args.out or default_out(args.quick)
    models = args.models or (QUICK_MODELS if args.quick else DEFAULT_MODELS)
    launches = args.launches or (2 if args.quick else 5)
    args.steps = args.steps or (20 if args.quick else 30)
    backends = args.backends or [b for b in ("tensorflow", "jax", "torch") if importlib.util.find_spec(b)]
    peak = cpu_peak()
    gpu = gpu_name()
    impls = implementations(backends, peer=not args.no_peer, variants=args.variants or args.quick, gpu=bool(gpu))
    machine = f"{gpu} (GPU), host CPU {peak.model}" if gpu else f"{peak.model}; fp32 limit {peak.formula()}"
    print(f"machine: {machine}")
    all_rows = []
    for model in models:
        runs = []
        for index in range(launches):
            for impl in impls:
                result = launch(model, impl, args)
                runs.append(result)
                print(f"  {model} launch {index + 1}/{launches} {result['implementation']}: "
                      f"{result['train_img_s']:.0f} img/s", flush=True)
        flops = training_flops_per_image(model, backends[0] if backends else "jax")
        all_rows += summarise(model, runs, peak.gflops, flops, gpu_bf16_peak_gflops(gpu))
    command = "python -m benchmarks.run " + " ".join(argv if argv is not None else sys.argv[1:])
    where = f"one {gpu} GPU" if gpu else f"{peak.model}, {peak.cores} cores (fp32 limit: {peak.formula()})"
    header = (f"`{command.strip()}` on {where}; "
              f"batch {args.batch}, {args.steps} timed steps, {launches} launches interleaved")
    table = markdown(all_rows, header)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(
        {"command": command.strip(), "machine": machine, "cpu": peak.model, "gpu": gpu, "rows": all_rows}, indent=2))
    (args.out / "results.md").write_text(table)
    plot(all_rows, args.out / "train_img_s.png")
    print(f"wrote {args.out}/results.json, results.md and train_img_s.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
