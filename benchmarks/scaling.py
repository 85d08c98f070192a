"""How training cost grows: img/s, step time and peak memory against batch size and depth.

    python -m benchmarks.scaling [--backend tensorflow] [--launches 1] [--out DIR]

Three sweeps, each launch a fresh process (``benchmarks.measure``), sweeps interleaved
launch by launch:

* batch size 32 … 512 for GResNet20;
* depth for the CIFAR G-ResNets (20, 56, 110) at batch 128;
* depth for the gated residual FC nets (10, 50, 100) at batch 128.

Writes ``scaling.json`` (every launch), ``scaling.md`` (medians) and ``scaling.png``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

from benchmarks.run import launch

BATCHES = (32, 64, 128, 256, 512)
CONV_DEPTHS = ("gresnet20", "gresnet56", "gresnet110")
FC_DEPTHS = ("gresnetfc10", "gresnetfc50", "gresnetfc100")


def sweep_points(batches=BATCHES, conv=CONV_DEPTHS, fc=FC_DEPTHS, depth_batch=128) -> list[dict]:
    """Every (sweep, model, batch) point."""
    points = [{"sweep": "batch", "model": "gresnet20", "batch": b} for b in batches]
    points += [{"sweep": "conv depth", "model": m, "batch": depth_batch} for m in conv]
    points += [{"sweep": "fc depth", "model": m, "batch": depth_batch} for m in fc]
    return points


def measure_point(point: dict, backend: str, steps: int, timeout: int) -> dict:
    """One launch of one point: train img/s, step time (ms) and peak RSS (MB)."""
    options = SimpleNamespace(batch=point["batch"], steps=steps, latency_calls=3,
                              infer_batch=point["batch"], timeout=timeout)
    result = launch(point["model"], {"impl": "keras", "backend": backend}, options)
    return {**point, "train_img_s": result["train_img_s"],
            "step_ms": 1e3 * point["batch"] / result["train_img_s"],
            "peak_rss_mb": result["peak_rss_mb"]}


def medians(runs: list[dict]) -> list[dict]:
    """One row per point: the median over its launches."""
    rows: dict[tuple, list[dict]] = {}
    for run in runs:
        rows.setdefault((run["sweep"], run["model"], run["batch"]), []).append(run)
    return [{"sweep": s, "model": m, "batch": b, "launches": len(group),
             **{k: statistics.median(r[k] for r in group)
                for k in ("train_img_s", "step_ms", "peak_rss_mb")}}
            for (s, m, b), group in rows.items()]


def markdown(rows: list[dict], header: str) -> str:
    lines = [header, "", "| sweep | model | batch | train img/s | step (ms) | peak RSS (MB) |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['sweep']} | {r['model']} | {r['batch']} | {r['train_img_s']:.0f} | "
              f"{r['step_ms']:.0f} | {r['peak_rss_mb']:.0f} |" for r in rows]
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    batch = [r for r in rows if r["sweep"] == "batch"]
    axes[0].plot([r["batch"] for r in batch], [r["train_img_s"] for r in batch], "o-")
    axes[0].set(xscale="log", xlabel="batch size", ylabel="train img/s", title="GResNet20")
    twin = axes[0].twinx()
    twin.plot([r["batch"] for r in batch], [r["peak_rss_mb"] for r in batch], "s--", color="C1")
    twin.set_ylabel("peak RSS (MB)", color="C1")
    sizes = [r["batch"] for r in batch]
    for ax in (axes[0], twin):  # one labelled tick per measured batch size
        ax.minorticks_off()
    axes[0].set_xticks(sizes, [str(size) for size in sizes])
    for ax, sweep, title in ((axes[1], "conv depth", "CIFAR G-ResNets"),
                             (axes[2], "fc depth", "G-ResNet FC nets")):
        group = [r for r in rows if r["sweep"] == sweep]
        ax.bar([r["model"] for r in group], [r["step_ms"] for r in group])
        ax.set(ylabel="training step (ms)", title=title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scaling", description=__doc__.split("\n")[0])
    p.add_argument("--backend", default="tensorflow", choices=("tensorflow", "jax", "torch"))
    p.add_argument("--launches", type=int, default=1)
    p.add_argument("--steps", type=int, default=10, help="timed training steps per launch")
    p.add_argument("--batches", type=int, nargs="+", default=list(BATCHES))
    p.add_argument("--conv", nargs="+", default=list(CONV_DEPTHS))
    p.add_argument("--fc", nargs="+", default=list(FC_DEPTHS))
    p.add_argument("--depth-batch", type=int, default=128, help="batch size of the depth sweeps")
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = p.parse_args(argv)
    from benchmarks.machine import cpu_peak

    points = sweep_points(args.batches, args.conv, args.fc, args.depth_batch)
    runs = []
    for launch_index in range(args.launches):
        for point in points:
            runs.append(measure_point(point, args.backend, args.steps, args.timeout))
            print(f"[{launch_index + 1}/{args.launches}] {runs[-1]}", file=sys.stderr)
    rows = medians(runs)
    header = (f"`python -m benchmarks.scaling --backend {args.backend} --launches "
              f"{args.launches}` on {cpu_peak().model}, {cpu_peak().cores} cores (Python "
              f"{platform.python_version()}); "
              f"{args.steps} timed steps, random in-memory data, medians of {args.launches}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scaling.json").write_text(json.dumps({"header": header, "runs": runs}, indent=2))
    (args.out / "scaling.md").write_text(markdown(rows, header))
    plot(rows, args.out / "scaling.png")
    print(markdown(rows, header))
    return 0


if __name__ == "__main__":
    sys.exit(main())
