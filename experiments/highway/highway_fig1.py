"""Highway Networks Fig. 1 from the kept records of its runs (``queue.sh`` here): training
loss per epoch of plain and highway FC nets at each depth, for the best learning rate of each.

    python -m experiments.highway.highway_fig1 [--root experiments/highway/results] \
        [--out docs/figures] [--epochs 10]

A Fig. 1 run is any run folder under ``ROOT`` whose ``fingerprint.json`` records a
``plainnet<depth>`` or ``highwayfc<depth>`` trained with ``highway_mnist_fc`` for
``--epochs`` epochs on the whole training split, He-initialised with tanh units; its
learning rate and transform bias (b_T) are read from the fingerprint. As in the paper
(which picked each configuration's hyper-parameters by random search on the best training
error), each (family, depth) shows the learning rate whose lowest training loss is lowest;
a run whose loss went NaN keeps its finite epochs. Highway runs with another b_T than the
main runs' (-2) are follow-ups, drawn dotted beside them. Writes ``highway_fig1.png`` (one
panel per depth, loss on a log scale) and ``highway_fig1.json`` (every run's best loss,
the pick).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from experiments.tools.records import fingerprint, loss, rows

MODEL = re.compile(r"^(plainnet|highwayfc)(\d+)$")
RECIPE = "highway_mnist_fc"
MAIN_TRANSFORM_BIAS = -2
PAPER_ORDER_OF_MAGNITUDE = 10  # HW §3.1: d = 100 ends "about 1 order of magnitude better" than d = 10
LABELS = {"plainnet": "plain (71 units, no BN)", "highwayfc": "highway (50 units)"}


def loss_curve(folder: Path) -> list[float]:
    """Training loss per logged epoch (NaN where the loss went NaN)."""
    return [loss(row) for row in rows(folder / "log.csv")]


def fig1_run(recorded: dict, epochs: int) -> tuple[str, int, str, float | None] | None:
    """``(family, depth, lr, b_T)`` of a Fig. 1 run from its fingerprint (b_T None for a
    plain net), or None when the run is not one."""
    found = MODEL.match(str(recorded.get("model")))
    recipe = recorded.get("recipe") or {}
    model_args = recorded.get("model_args") or {}
    if (not found or recipe.get("name") != RECIPE or recorded.get("epochs") != epochs
            or recorded.get("validation_split") is not None or recorded.get("lr") is None
            or model_args.get("kernel_initializer") != "he_normal"
            or model_args.get("activation") != "tanh"):
        return None
    family, depth = found.group(1), int(found.group(2))
    bias = model_args.get("transform_bias") if family == "highwayfc" else None
    return family, depth, f"{recorded['lr']:g}", bias


# The seeded re-runs of seeds_queue.sh (one folder per seed of a picked setting) are the
# spread of the fair comparison, not points of the lr sweep this figure draws.
SEEDED_PREFIX = "hwfig1s."


def collect_all(root: Path, epochs: int) -> tuple[dict, dict]:
    """``(runs, follow_ups)``: {(family, depth): {lr: curve}} of the main runs and
    {(family, depth): {(b_T, lr): curve}} of the highway runs with another b_T (the seeded
    re-runs, ``hwfig1s.*``, left out)."""
    runs: dict = {}
    follow_ups: dict = {}
    folders = sorted(path for path in root.iterdir()
                     if path.is_dir() and not path.name.startswith(SEEDED_PREFIX)) if root.is_dir() else []
    for folder in folders:
        recorded = fingerprint(folder)
        found = fig1_run(recorded, epochs) if recorded else None
        curve = loss_curve(folder)
        if not found or not curve:
            continue
        family, depth, lr, bias = found
        if bias is None or bias == MAIN_TRANSFORM_BIAS:
            runs.setdefault((family, depth), {})[lr] = curve
        else:
            follow_ups.setdefault((family, depth), {})[(f"{bias:g}", lr)] = curve
    return runs, follow_ups


def best(curve: list[float]) -> float:
    finite = [x for x in curve if math.isfinite(x)]
    return min(finite) if finite else math.inf


def pick(runs: dict) -> dict:
    """{(family, depth): lr with the lowest best training loss}."""
    return {key: min(curves, key=lambda lr: (best(curves[lr]), float(lr)))
            for key, curves in runs.items()}


def paper_reference(runs: dict, picks: dict, depth: int) -> float | None:
    """At d = 100, where the paper's 100-layer highway net ends: "about 1 order of
    magnitude better than the 10-layer one" (HW §3.1), i.e. our 10-layer highway net's
    best training loss divided by 10; None at other depths or without a 10-layer run."""
    if depth != 100 or ("highwayfc", 10) not in picks:
        return None
    return best(runs[("highwayfc", 10)][picks[("highwayfc", 10)]]) / PAPER_ORDER_OF_MAGNITUDE


def plot(runs: dict, picks: dict, path: Path, follow_ups: dict | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    depths = sorted({depth for _, depth in runs})
    fig, axes = plt.subplots(1, len(depths), figsize=(3.2 * len(depths), 4.0), sharey=True,
                             squeeze=False)
    for ax, depth in zip(axes[0], depths):
        # The highway curve first and widest, so that a plain curve on top of it (both at
        # chance) leaves it visible.
        for family, style, marker, width in (("highwayfc", "-", "s", 2.5), ("plainnet", "--", "o", 1.2)):
            if (family, depth) not in picks:
                continue
            lr = picks[(family, depth)]
            curve = runs[(family, depth)][lr]
            ax.plot(range(1, len(curve) + 1), curve, style, marker=marker, ms=3, lw=width,
                    label=f"{LABELS[family]}, lr {lr}")
        for (family, follow_up_depth), extra in (follow_ups or {}).items():
            if follow_up_depth != depth:
                continue
            for (bias, lr), curve in extra.items():
                ax.plot(range(1, len(curve) + 1), curve, ":", marker="^", ms=3,
                        label=f"{LABELS[family]}, b_T {bias}, lr {lr}")
        reference = paper_reference(runs, picks, depth)
        if reference is not None:
            ax.axhline(reference, color="black", ls="-.", lw=1.2,
                       label=f"paper (HW §3.1): ≈ 10× below the 10-layer\nhighway net (ours / 10 = {reference:.3f})")
        ax.set_yscale("log")
        ax.set_title(f"{depth} layers")
        ax.set_xlabel("epoch")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3))  # below: no curve hidden
    axes[0][0].set_ylabel("training loss (cross-entropy)")
    fig.suptitle("Plain vs highway FC nets on Fashion-MNIST (Highway Networks Fig. 1)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.highway.highway_fig1",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("experiments/highway/results"))
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    parser.add_argument("--epochs", type=int, default=10, help="the runs' epochs (default: %(default)s)")
    args = parser.parse_args(argv)
    runs, follow_ups = collect_all(args.root, args.epochs)
    if not runs:
        parser.error(f"no Fig. 1 run with a log.csv under {args.root}: run "
                     "experiments/highway/queue.sh first")
    picks = pick(runs)
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
