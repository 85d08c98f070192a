"""Residual Gates Table 1 (Savarese & Figueiredo 2017, §3.1.1) as a figure: test error
against depth for PlainNets, G-PlainNets, ResNets and G-ResNets, ours over seeds beside
the paper's.

    python -m experiments.residual_gates.table1_fig [--results DIR] [--out docs/figures]

Left: the seeded runs of ``seeds_queue.sh`` section a (``rgtable.<model><d>.e20.t1.s<seed>``,
Fashion-MNIST, 20 epochs, one thread; read by ``experiments.residual_gates.seed_table``),
each seed a faint point and the mean ± std a line with error bars. Right: the paper's
Table 1 (MNIST, 100 epochs), as printed. The data sets differ, so the panels have axes of
their own. Writes ``rg_table1_seeds.png`` and ``rg_table1_seeds.json`` (per family and depth:
the seeds' errors, mean, std and the paper's number).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from experiments.residual_gates.seed_table import DEPTHS, RESULTS, table
from experiments.tools.seeds import spread

# Residual Gates Table 1: test error (%) on MNIST, by family and depth d = 2, 10, 20, 50, 100.
PAPER_TABLE1 = {
    "plainnet": (2.29, 2.22, 2.21, 60.4, 90.2),
    "resnetfc": (2.20, 1.64, 1.61, 1.62, 1.50),
    "gplainnet": (2.04, 1.78, 1.59, 1.36, 1.29),
    "gresnetfc": (2.17, 1.60, 1.57, 1.48, 1.26),
}
# Family -> (label, colour, line style, marker): gated solid, ungated dashed, each its own
# marker and a small horizontal offset, so that no curve hides another.
STYLE = {
    "plainnet": ("PlainNet", "tab:red", "--", "x", -0.06),
    "gplainnet": ("G-PlainNet", "tab:orange", "-", "o", -0.02),
    "resnetfc": ("ResNet", "tab:blue", "--", "s", 0.02),
    "gresnetfc": ("G-ResNet", "tab:green", "-", "^", 0.06),
}


def summarise(results: Path = RESULTS) -> dict:
    """Per family: depth -> the seeds' test errors (%), their mean and std, the paper's."""
    rows = table(results)
    summary = {}
    for family, paper in PAPER_TABLE1.items():
        summary[family] = {}
        for row, paper_error in zip(rows, paper):
            errors = row["cells"][family]["errors"]
            mean, std, n = spread(errors.values())
            summary[family][str(row["depth"])] = {
                "errors": {str(seed): round(error, 4) for seed, error in sorted(errors.items())},
                "mean": None if mean is None else round(mean, 4),
                "std": None if std is None else round(std, 4), "seeds": n, "paper": paper_error}
    return summary


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ours, paper) = plt.subplots(1, 2, figsize=(10, 4))
    for family, (label, colour, style, marker, offset) in STYLE.items():
        cells = summary[family]
        depths = [d for d in DEPTHS if cells[str(d)]["mean"] is not None]
        x = [d * 10 ** offset for d in depths]  # an offset on the log axis
        for depth, where in zip(depths, x):
            seeds = list(cells[str(depth)]["errors"].values())
            ours.scatter([where] * len(seeds), seeds, color=colour, marker=marker, s=12, alpha=0.35)
        if depths:
            seeds = min(cells[str(d)]["seeds"] for d in depths)
            ours.errorbar(x, [cells[str(d)]["mean"] for d in depths],
                          yerr=[cells[str(d)]["std"] or 0.0 for d in depths],
                          color=colour, linestyle=style, marker=marker, capsize=3,
                          label=f"{label} (≥ {seeds} seeds)")
        paper.plot([d * 10 ** offset for d in DEPTHS], [cells[str(d)]["paper"] for d in DEPTHS],
                   color=colour, linestyle=style, marker=marker, label=f"{label} (paper)")
    ours.set_title("here: Fashion-MNIST, 20 epochs, mean ± std over seeds", fontsize=9)
    paper.set_title("Residual Gates Table 1: MNIST, 100 epochs (as printed)", fontsize=9)
    for axis in (ours, paper):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xticks(DEPTHS, [str(d) for d in DEPTHS])
        axis.set_xlabel("depth d (hidden layers)")
        axis.set_ylabel("test error (%)")
        axis.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.residual_gates.table1_fig",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the kept run records")
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    args = parser.parse_args(argv)
    summary = summarise(args.results)
    if not any(cell["mean"] is not None for cells in summary.values() for cell in cells.values()):
        print(f"no seeded Table 1 run in {args.results}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    plot(summary, args.out / "rg_table1_seeds.png")
    (args.out / "rg_table1_seeds.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {args.out / 'rg_table1_seeds.png'} and {args.out / 'rg_table1_seeds.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
