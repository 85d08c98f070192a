"""Residual Gates Table 7 from the kept records of its runs (``queue.sh`` here): Wide
ResNets without batch norm, gated and not, on CIFAR-10.

    python -m experiments.residual_gates.table7_fig [--root experiments/residual_gates/results] \
        [--out docs/figures]

A Table 7 run is any run folder under ``ROOT`` whose ``fingerprint.json`` records
``wrn_16_2`` or ``gwrn_16_2`` on ``cifar10`` with ``batch_norm=False``; its settings are
read from the fingerprint: ``k_init`` (k₀; the paper's 1 when not given), the base
learning rate (``lr``; the recipe's 0.1 when not given), the gradient clipping norm
(``clip_norm``) and the seed. A run with another setting (other model arguments, a
held-out validation split) is not one of the table's and is skipped. Writes
``table7.png``: the test accuracy after each epoch of every run that kept a finite loss
(the recipes validate on the test split), the runs stopped by a NaN/inf loss listed under
it, and the k of every block after each epoch of each gated run that kept a finite loss
(the unit u = g(k)·f(x) + x with g(k) = max(k, 0): k ≤ 0 turns the residual branch off);
and ``table7.json``: per run its settings, the epoch it diverged in or its last test
accuracy, and k per block at its last epoch.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from experiments.tools.records import diverged_epoch, fingerprint, loss, rows

# Residual Gates Table 7 (CIFAR-10, no batch norm, 200 epochs): the WRNs (2,4), (4,10)
# and (8,1) end at 90.0 % test error; their gated twins at 5.36, 4.48 and 6.57 %.
PAPER_UNGATED_ERROR = 90.0
PAPER_GATED_ERRORS = (5.36, 4.48, 6.57)

FAMILIES = {"wrn_16_2": "wrn", "gwrn_16_2": "gwrn"}
NAMED_MODEL_ARGS = {"batch_norm", "k_init"}
SETTING_LABELS = {"k": "k₀ {}", "lr": "lr {}", "clip": "clip {}", "seed": "seed {}"}


def _number(value) -> str:
    """``0.1`` -> ``"0.1"``, ``1.0`` -> ``"1"``: a setting as a run name writes it."""
    return f"{value:g}"


def settings(recorded: dict) -> dict[str, str] | None:
    """The Table 7 settings a run's fingerprint records, ``{"k": "0.1", "lr": "0.01"}``
    (only those that differ from the paper's: k₀ 1, the recipe's lr, no clipping, seed 0);
    None when the run is not a Table 7 run."""
    model_args = recorded.get("model_args") or {}
    if (recorded.get("model") not in FAMILIES or recorded.get("dataset") != "cifar10"
            or model_args.get("batch_norm") is not False or set(model_args) - NAMED_MODEL_ARGS
            or recorded.get("validation_split") is not None):
        return None
    chosen = {}
    for name, value in (("k", model_args.get("k_init")), ("lr", recorded.get("lr")),
                        ("clip", recorded.get("clip_norm")), ("seed", recorded.get("seed") or None)):
        if value is not None:
            chosen[name] = _number(value)
    return chosen


def label(family: str, chosen: dict[str, str]) -> str:
    net = "G-WRN-16-2" if family == "gwrn" else "WRN-16-2"
    parts = [SETTING_LABELS[name].format(value) for name, value in chosen.items()]
    return net + (f" ({', '.join(parts)})" if parts else " (paper: lr 0.1" + (", k₀ 1)" if family == "gwrn" else ")"))


def test_accuracy_curve(folder: Path) -> list[float]:
    """``val_accuracy`` (the test split in these runs) per epoch with a finite loss."""
    curve = []
    for row in rows(folder / "log.csv"):
        if not math.isfinite(loss(row)):
            break
        curve.append(float(row["val_accuracy"]))
    return curve


def gate_curves(folder: Path) -> dict[str, list[float]]:
    """{block: [k after epoch 1, 2, ...]} from the run's ``gates.csv``, finite epochs only."""
    curves: dict[str, list[float]] = {}
    for row in sorted(rows(folder / "gates.csv"), key=lambda r: int(r["epoch"])):
        if math.isfinite(float(row["k"])):
            curves.setdefault(row["block"], []).append(float(row["k"]))
    return curves


def last_k(folder: Path) -> dict[str, float]:
    found = rows(folder / "gates.csv")
    if not found:
        return {}
    last = max(int(r["epoch"]) for r in found)
    return {r["block"]: round(float(r["k"]), 4) if math.isfinite(float(r["k"])) else None
            for r in found if int(r["epoch"]) == last}


def collect(root: Path) -> list[dict]:
    """One record per Table 7 run folder under ``root`` that has logged an epoch."""
    runs = []
    for folder in sorted(path for path in root.iterdir() if path.is_dir()) if root.is_dir() else []:
        recorded = fingerprint(folder)
        if recorded is None or not rows(folder / "log.csv"):
            continue
        chosen = settings(recorded)
        if chosen is None:
            if recorded.get("model") in FAMILIES:
                print(f"skipping {folder}: not a Table 7 setting (fingerprint.json)", file=sys.stderr)
            continue
        family = FAMILIES[recorded["model"]]
        curve = test_accuracy_curve(folder)
        runs.append({
            "run": folder.name, "family": family, "settings": chosen, "epochs": recorded["epochs"],
            "label": label(family, chosen), "diverged_in_epoch": diverged_epoch(folder),
            "test_accuracy": curve, "k_last_epoch": last_k(folder),
            "gates": gate_curves(folder),
        })
    return runs


def plot(runs: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gated = [run for run in runs if run["gates"] and run["test_accuracy"]]
    fig, axes = plt.subplots(1, 1 + len(gated), figsize=(4.2 * (1 + len(gated)), 5.0), squeeze=False)
    below = dict(loc="upper center", bbox_to_anchor=(0.5, -0.22))  # legends under the axes: no curve hidden
    accuracy_ax = axes[0][0]
    for run in sorted(runs, key=lambda run: run["family"] != "gwrn"):  # gated runs first
        if run["test_accuracy"]:
            style = "-" if run["family"] == "gwrn" else "--"
            epochs = range(1, len(run["test_accuracy"]) + 1)
            gated_run = run["family"] == "gwrn"  # drawn first and wider: coinciding twins stay visible
            accuracy_ax.plot(epochs, [100 * a for a in run["test_accuracy"]], style, marker="o" if gated_run else "s",
                             markersize=4 if gated_run else 3, lw=2.2 if gated_run else 1.0, label=run["label"])
    accuracy_ax.axhline(100 - PAPER_UNGATED_ERROR, color="black", linewidth=1.2, linestyle="-.",
                        label=f"paper (RG Table 7): WRNs without BN, {PAPER_UNGATED_ERROR} % error")
    accuracy_ax.axhspan(100 - max(PAPER_GATED_ERRORS), 100 - min(PAPER_GATED_ERRORS), color="black", alpha=0.25,
                        label="paper (RG Table 7): G-WRNs without BN, 200 epochs, "
                              + "/".join(f"{e:g}" for e in PAPER_GATED_ERRORS) + " % error")
    diverged = [f"{run['label']}: epoch {run['diverged_in_epoch']}" for run in runs
                if run["diverged_in_epoch"]]
    if diverged:
        accuracy_ax.text(0.02, 0.98, "loss NaN/inf in\n" + "\n".join(diverged), transform=accuracy_ax.transAxes,
                         fontsize=5.5, va="top")
    for ax in axes[0]:
        ax.xaxis.get_major_locator().set_params(integer=True)
    accuracy_ax.set_xlabel("epoch")
    accuracy_ax.set_ylabel("CIFAR-10 test accuracy (%)")
    accuracy_ax.set_ylim(0, 160)  # the list of diverged runs sits above 100 %, over no curve
    accuracy_ax.set_yticks(range(0, 101, 20))
    accuracy_ax.legend(fontsize=6, **below)
    accuracy_ax.set_title("no batch norm: test accuracy", fontsize=9)
    for ax, run in zip(axes[0][1:], gated):
        for index, (block, curve) in enumerate(run["gates"].items()):
            ax.plot(range(1, len(curve) + 1), curve, marker="os^vDx"[index % 6], ls=("-", "--", "-.", ":")[index % 4],
                    markersize=3, label=block)
        low = min(0.0, *(min(curve) for curve in run["gates"].values()))
        ax.axhspan(low - 0.1, 0, color="grey", alpha=0.15, label="k ≤ 0: gate closed")
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xlabel("epoch")
        ax.set_ylabel("k (gate g(k) = max(k, 0))")
        ax.set_title(run["label"], fontsize=8)
        ax.legend(fontsize=6, ncol=2, **below)
    fig.suptitle("Wide ResNets without batch norm (Residual Gates Table 7)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.residual_gates.table7_fig", description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("experiments/residual_gates/results"))
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    args = parser.parse_args(argv)
    runs = collect(args.root)
    if not runs:
        parser.error(f"no Table 7 run with a log.csv under {args.root}: run "
                     "experiments/residual_gates/queue.sh first")
    args.out.mkdir(parents=True, exist_ok=True)
    plot(runs, args.out / "table7.png")
    summary = [{key: run[key] for key in ("run", "family", "settings", "epochs", "diverged_in_epoch",
                                          "test_accuracy", "k_last_epoch")} for run in runs]
    (args.out / "table7.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    for run in runs:
        state = (f"diverged in epoch {run['diverged_in_epoch']}" if run["diverged_in_epoch"]
                 else f"test accuracy {run['test_accuracy'][-1]:.4f} after {len(run['test_accuracy'])} epochs")
        print(f"{run['run']}: {state}")
    print(f"wrote {args.out / 'table7.png'} and {args.out / 'table7.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
