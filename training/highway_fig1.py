"""Highway Networks Fig. 1 from the runs of ``training/science_queue.sh``: training loss
per epoch of plain and highway FC nets at each depth, for the best learning rate of each.

    python -m training.highway_fig1 [--root training/runs/science] [--out docs/figures]

The runs are ``ROOT/hwfig1.<plainnet|highwayfc><depth>.lr<lr>.e<epochs>``. As in the paper
(which picked each configuration's hyper-parameters by random search on the best training
error), each (family, depth) shows the learning rate whose lowest training loss is lowest;
a run whose loss went NaN keeps its finite epochs. Follow-up runs with another transform
bias, ``ROOT/hwfig1b.highwayfc<depth>.bT<b_T>.lr<lr>.e<epochs>``, are drawn dotted beside
them. Writes ``highway_fig1.png`` (one panel per depth, loss on a log scale) and ``highway_fig1.json`` (every run's best loss, the pick).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
from pathlib import Path

RUN_NAME = re.compile(r"^hwfig1\.(plainnet|highwayfc)(\d+)\.lr([0-9.e-]+)\.e(\d+)$")
# Follow-up runs with another transform bias (b_T), drawn beside the picked curves.
FOLLOW_UP_NAME = re.compile(r"^hwfig1b\.(highwayfc)(\d+)\.bT(-?[0-9.]+)\.lr([0-9.e-]+)\.e(\d+)$")
LABELS = {"plainnet": "plain (71 units, no BN)", "highwayfc": "highway (50 units)"}


def loss_curve(folder: Path) -> list[float]:
    """Training loss per logged epoch (NaN where the loss went NaN)."""
    path = folder / "log.csv"
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return [float(r["loss"]) if r.get("loss") not in (None, "") else math.nan
                for r in csv.DictReader(f)]


def _collect(root: Path, glob: str, pattern: re.Pattern, key) -> dict:
    """{(family, depth): {run key: curve}} over the run folders under ``root`` that match
    ``pattern``; ``key(match)`` gives ((family, depth), run key)."""
    runs: dict = {}
    for folder in sorted(root.glob(glob)):
        found = pattern.match(folder.name)
        curve = loss_curve(folder)
        if found and curve:
            family_depth, run_key = key(found)
            runs.setdefault(family_depth, {})[run_key] = curve
    return runs


def collect(root: Path) -> dict:
    """{(family, depth): {lr: curve}} over the ``hwfig1.*`` run folders."""
    return _collect(root, "hwfig1.*", RUN_NAME, lambda m: ((m.group(1), int(m.group(2))), m.group(3)))


def collect_follow_ups(root: Path) -> dict:
    """{(family, depth): {(b_T, lr): curve}} over the ``hwfig1b.*`` run folders."""
    return _collect(root, "hwfig1b.*", FOLLOW_UP_NAME,
                    lambda m: ((m.group(1), int(m.group(2))), (m.group(3), m.group(4))))


def best(curve: list[float]) -> float:
    finite = [x for x in curve if math.isfinite(x)]
    return min(finite) if finite else math.inf


def pick(runs: dict) -> dict:
    """{(family, depth): lr with the lowest best training loss}."""
    return {key: min(curves, key=lambda lr: (best(curves[lr]), float(lr)))
            for key, curves in runs.items()}


def plot(runs: dict, picks: dict, path: Path, follow_ups: dict | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    depths = sorted({depth for _, depth in runs})
    fig, axes = plt.subplots(1, len(depths), figsize=(3.2 * len(depths), 3.0), sharey=True,
                             squeeze=False)
    for ax, depth in zip(axes[0], depths):
        for family, style in (("plainnet", "--"), ("highwayfc", "-")):
            if (family, depth) not in picks:
                continue
            lr = picks[(family, depth)]
            curve = runs[(family, depth)][lr]
            ax.plot(range(1, len(curve) + 1), curve, style, label=f"{LABELS[family]}, lr {lr}")
        for (family, follow_up_depth), extra in (follow_ups or {}).items():
            if follow_up_depth != depth:
                continue
            for (bias, lr), curve in extra.items():
                ax.plot(range(1, len(curve) + 1), curve, ":", label=f"{LABELS[family]}, b_T {bias}, lr {lr}")
        ax.set_yscale("log")
        ax.set_title(f"{depth} layers")
        ax.set_xlabel("epoch")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("training loss (cross-entropy)")
    fig.suptitle("Plain vs highway FC nets on Fashion-MNIST (Highway Networks Fig. 1)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.highway_fig1",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("training/runs/science"))
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    args = parser.parse_args(argv)
    runs = collect(args.root)
    if not runs:
        parser.error(f"no hwfig1.* run with a log.csv under {args.root}: run "
                     "training/science_queue.sh first")
    picks = pick(runs)
    follow_ups = collect_follow_ups(args.root)
    args.out.mkdir(parents=True, exist_ok=True)
    plot(runs, picks, args.out / "highway_fig1.png", follow_ups)
    summary = [{"family": family, "depth": depth, "lr": lr, "epochs": len(curve),
                "best_training_loss": best(curve) if math.isfinite(best(curve)) else None,
                "picked": picks[(family, depth)] == lr}
               for (family, depth), curves in sorted(runs.items()) for lr, curve in curves.items()]
    summary += [{"family": family, "depth": depth, "lr": lr, "transform_bias": float(bias),
                 "epochs": len(curve),
                 "best_training_loss": best(curve) if math.isfinite(best(curve)) else None,
                 "picked": False, "follow_up": True}
                for (family, depth), curves in sorted(follow_ups.items())
                for (bias, lr), curve in curves.items()]
    (args.out / "highway_fig1.json").write_text(json.dumps(summary, indent=2) + "\n")
    for row in summary:
        bias = f" b_T {row['transform_bias']:g}" if row.get("follow_up") else ""
        print(f"{row['family']}{row['depth']}{bias} lr {row['lr']}: best training loss "
              f"{row['best_training_loss']} over {row['epochs']} epochs"
              + (" (picked)" if row["picked"] else ""))
    print(f"wrote {args.out / 'highway_fig1.png'} and {args.out / 'highway_fig1.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
