"""Residual Gates Fig. 3 from the kept records of the Table 1 runs (``queue.sh`` here):
the training loss per epoch of PlainNets, G-PlainNets, ResNets and G-ResNets at each
depth d.

    python -m experiments.residual_gates.fig3_train_loss [--root experiments/residual_gates/results] \
        [--out docs/figures]

A run is any run folder under ``ROOT`` whose ``fingerprint.json`` records one of the
four fully connected families (``plainnet<d>``, ``gplainnet<d>``, ``resnetfc<d>``,
``gresnetfc<d>``) with no other model argument (the k₀ variants are Table 2's), on the
data set of the Table 1 runs. The settings come from the fingerprint, never from the
folder name. Writes ``rg_fig3_train_loss.png`` (one panel per depth, the four families'
training-loss curves, one line per seed, each family with its own colour, line style and
marker so that no curve hides another) and ``rg_fig3_train_loss.json`` (per depth and
family: the seeds, each run's losses per epoch, and the last epoch's loss).

The paper prints Fig. 3 as curves without numbers; what it claims from them, that the
gap between a gated net and its ungated twin grows with depth and that PlainNets do not
train at d = 50 and 100 while G-PlainNets do, is compared in docs/science.md.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from experiments.tools.records import fingerprint, loss, rows

# Family name -> (label, line style, marker); the gated nets are drawn solid.
FAMILIES = {
    "plainnet": ("PlainNet", "--", "x"),
    "gplainnet": ("G-PlainNet", "-", "o"),
    "resnetfc": ("ResNet", "--", "s"),
    "gresnetfc": ("G-ResNet", "-", "^"),
}
COLOURS = {"plainnet": "tab:red", "gplainnet": "tab:orange", "resnetfc": "tab:blue",
           "gresnetfc": "tab:green"}
MODEL = re.compile(r"^(gplainnet|plainnet|gresnetfc|resnetfc)(\d+)$")
DATASET = "fashion_mnist"


def family_and_depth(model: str) -> tuple[str, int] | None:
    """``"gplainnet50"`` -> ``("gplainnet", 50)``; None for any other model name."""
    match = MODEL.match(model)
    return (match.group(1), int(match.group(2))) if match else None


def collect(root: Path) -> list[dict]:
    """The Fig. 3 runs under ``root`` with a logged training loss, sorted by depth,
    family and seed."""
    runs = []
    for folder in sorted(p.parent for p in root.glob("*/fingerprint.json")):
        recorded = fingerprint(folder) or {}
        found = family_and_depth(str(recorded.get("model", "")))
        if found is None or recorded.get("dataset") != DATASET or recorded.get("model_args"):
            continue
        losses = [loss(row) for row in rows(folder / "log.csv")]
        if not losses:
            continue
        family, depth = found
        runs.append({"run": folder.name, "family": family, "depth": depth,
                     "seed": recorded.get("seed"), "train_loss": losses})
    return sorted(runs, key=lambda r: (r["depth"], list(FAMILIES).index(r["family"]), str(r["seed"])))


def summarise(runs: list[dict]) -> list[dict]:
    """Per depth: each family's seeds, curves and last-epoch losses."""
    summary = []
    for depth in sorted({run["depth"] for run in runs}):
        families = {}
        for family in FAMILIES:
            mine = [run for run in runs if run["depth"] == depth and run["family"] == family]
            if mine:
                families[family] = {
                    "runs": [run["run"] for run in mine],
                    "seeds": [run["seed"] for run in mine],
                    "train_loss": [run["train_loss"] for run in mine],
                    "last_loss": [run["train_loss"][-1] for run in mine],
                }
        summary.append({"depth": depth, "families": families})
    return summary


def _finite(values: list[float]) -> list[float]:
    return [v if math.isfinite(v) else None for v in values]


def plot(summary: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(summary), figsize=(3.3 * len(summary), 3.3), squeeze=False)
    for ax, depth in zip(axes[0], summary):
        for family, record in depth["families"].items():
            label, style, marker = FAMILIES[family]
            for i, curve in enumerate(record["train_loss"]):
                # Markers at staggered epochs, the dashed (ungated) curves on top: where two
                # curves coincide both stay visible.
                ax.plot(range(1, len(curve) + 1), _finite(curve), style, marker=marker, markersize=4,
                        color=COLOURS[family], markevery=(list(FAMILIES).index(family), 4),
                        zorder=3 if style == "--" else 2, label=label if i == 0 else None)
        ax.set_yscale("log")
        ax.set_xlabel("epoch")
        ax.set_title(f"d = {depth['depth']}", fontsize=9)
        ax.xaxis.get_major_locator().set_params(integer=True)
    axes[0][0].set_ylabel("training loss (log scale)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("Training loss, Fashion-MNIST (Residual Gates Fig. 3 setting; one line per seed)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.residual_gates.fig3_train_loss",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("experiments/residual_gates/results"))
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    args = parser.parse_args(argv)
    runs = collect(args.root)
    if not runs:
        parser.error(f"no Table 1 run with a log.csv under {args.root}: run "
                     "experiments/residual_gates/queue.sh first")
    summary = summarise(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    plot(summary, args.out / "rg_fig3_train_loss.png")
    (args.out / "rg_fig3_train_loss.json").write_text(
        json.dumps(summary, indent=2, allow_nan=True) + "\n")
    for depth in summary:
        last = ", ".join(f"{FAMILIES[f][0]} {min(r['last_loss']):.4f}" for f, r in depth["families"].items())
        print(f"d = {depth['depth']}: last-epoch training loss {last}")
    print(f"wrote {args.out / 'rg_fig3_train_loss.png'} and {args.out / 'rg_fig3_train_loss.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
