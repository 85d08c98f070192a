"""Residual Gates Fig. 5 at d = 100 with seeds (Savarese & Figueiredo 2017, §3.1.2): how
much of its accuracy a G-ResNet-FC-100 and its ungated twin keep when blocks are removed
after training, over seeded pairs of 100-epoch runs.

    python -m experiments.residual_gates.fig5_seeds [--results DIR] [--json] [--out DIR]

A seed's pair is ``fig5.d100.e100.s<seed>/analysis.json`` (``keras-gated analyze
gresnetfc100 --twin resnetfc100``, written by ``seeds_queue.sh``: 2,000 test images, three
random removal orders shared by both nets). For N removed blocks (20, 25, 30 of 50) it
reads each net's accuracy left, relative to its own full accuracy, as the paper does
("a relative decrease of 8 %"):

    kept(N) = acc(N) / acc(0),  acc(N) the mean over the random orders,

and, for the gated net, the same in the order of the learned k (lowest |g(k)| first, the
paper's "greedy"). Each number is then a mean ± std over seeds, and two arms' gap is
significant as ``experiments.tools.seeds`` says (3 seeds a side, Welch's two-sided p under
5 %): gated against ungated under random removal (the paper: the G-ResNet keeps far more)
and greedy against random for the gated net (the paper: very little difference).

The same pairs answer two neighbours of Fig. 5: Fig. 4's k per block (the mean learned k
over blocks 1–17, 18–34 and 35–50, and over the last five, from ``gate_values``: the paper
sees k fall, then rise towards the end) and Fig. 3's training losses at d = 100 (each run's
last-epoch training loss, ``log.csv``).

``--out DIR`` draws ``rg_fig5_seeds.png`` (the accuracy kept against the blocks removed:
each arm's mean over seeds with its std as a band, the paper's three numbers as markers)
and writes ``rg_fig5_seeds.json`` (the curves and the paper's numbers).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from experiments.tools.records import loss, read_json, rows
from experiments.tools.seeds import gap, gap_text, spread

RESULTS = Path(__file__).resolve().parent / "results"
REMOVED = (20, 25, 30)
GATED, UNGATED = "gresnetfc100", "resnetfc100"
# The paper's Fig. 5 numbers (§3.1.2, MNIST, 100 epochs), as accuracy kept in % of each
# net's own (Table 1: G-ResNet-100 1.26 % error, ResNet-100 1.50 %): "above 96 %" after 20
# blocks (a lower bound), "a relative decrease of 8 %" after 30 (abstract, §1), and the
# ungated net "only around 60 %" after 20.
PAPER_KEPT = {
    "gated random": {"20": round(100 * 96 / 98.74, 1), "30": 92.0},
    "ungated random": {"20": round(100 * 60 / 98.50, 1)},
}
# Arm -> (label, colour, line style): no two share a colour or a style.
STYLE = {"gated random": ("G-ResNet-FC-100, random", "tab:green", "-"),
         "ungated random": ("ResNet-FC-100, random", "tab:blue", "--"),
         "gated lowest k": ("G-ResNet-FC-100, lowest |g(k)| first", "tab:purple", ":")}
CURVES = {"gated random": f"{GATED}, random", "ungated random": f"{UNGATED}, random",
          "gated lowest k": f"{GATED}, lowest |g(k)| first"}


def kept_curve(analysis: dict, arm: str) -> list[float]:
    """One arm's accuracy kept (% of its net's own) at every number of blocks removed."""
    curve = analysis["removal_curves"][CURVES[arm]]
    own = float(analysis["accuracy"] if arm.startswith("gated") else analysis["twin"]["accuracy"])
    return [100.0 * float(a) / own for a in curve["accuracy"]]


def pair(analysis: dict) -> dict:
    """One seed's numbers: full accuracies and kept fractions (%) at each N removed."""
    removed = analysis["removal_curves"][CURVES["gated random"]]["removed"]
    kept = {arm: kept_curve(analysis, arm) for arm in CURVES}
    return {"accuracy": {GATED: 100.0 * float(analysis["accuracy"]),
                         UNGATED: 100.0 * float(analysis["twin"]["accuracy"])},
            "kept": {n: {arm: kept[arm][removed.index(n)] for arm in CURVES} for n in REMOVED}}


THIRDS = {"blocks 1-17": range(1, 18), "blocks 18-34": range(18, 35),
          "blocks 35-50": range(35, 51), "last five": range(46, 51)}


def k_by_part(analysis: dict) -> dict[str, float]:
    """The gated net's mean learned k over each part of its 50 blocks (Fig. 4)."""
    ks = analysis["gate_values"]
    return {part: sum(float(ks[f"block{i}"]) for i in blocks) / len(blocks)
            for part, blocks in THIRDS.items()}


def analyses(results: Path, epochs: int = 100) -> dict[int, dict]:
    """Every seed's ``analysis.json``, by seed."""
    pattern = re.compile(rf"fig5\.d100\.e{epochs}\.s(\d+)$")
    found = {}
    for folder in sorted(results.glob(f"fig5.d100.e{epochs}.s*")):
        match = pattern.match(folder.name)
        if match and (folder / "analysis.json").is_file():
            found[int(match.group(1))] = read_json(folder / "analysis.json")
    return found


def seeds(results: Path, epochs: int = 100) -> dict[int, dict]:
    """Every analysed seed's numbers, by seed."""
    return {seed: {**pair(analysis), "k": k_by_part(analysis)}
            for seed, analysis in analyses(results, epochs).items()}


def run_test_accuracy(results: Path, model: str, seed: int, epochs: int = 100) -> float | None:
    """The run's own test accuracy (%) on the full test split (its metrics.json)."""
    metrics = results / f"fig5.{model}.e{epochs}.s{seed}" / "metrics.json"
    return 100.0 * float(read_json(metrics)["test_accuracy"]) if metrics.is_file() else None


def last_loss(results: Path, model: str, seed: int, epochs: int = 100) -> float | None:
    """The run's training loss at its last logged epoch (its log.csv)."""
    logged = rows(results / f"fig5.{model}.e{epochs}.s{seed}" / "log.csv")
    return loss(logged[-1]) if logged else None


def summary(results: Path, epochs: int = 100) -> dict:
    by_seed = seeds(results, epochs)
    values = lambda removed, arm: [s["kept"][removed][arm] for s in by_seed.values()]  # noqa: E731
    tests = {model: [a for seed in by_seed if (a := run_test_accuracy(results, model, seed, epochs))
                     is not None] for model in (GATED, UNGATED)}
    out = {"seeds": sorted(by_seed), "epochs": epochs, "by_seed": by_seed,
           "test_accuracy": {m: dict(zip(("mean", "std", "n"), spread(v))) for m, v in tests.items()},
           "k": {part: dict(zip(("mean", "std", "n"), spread(s["k"][part] for s in by_seed.values())))
                 for part in THIRDS},
           "removed": {}}
    losses = {model: [v for seed in by_seed if (v := last_loss(results, model, seed, epochs))
                      is not None] for model in (GATED, UNGATED)}
    out["test_accuracy"]["gated vs ungated"] = gap(tests[GATED], tests[UNGATED])
    out["last_loss"] = {m: dict(zip(("mean", "std", "n"), spread(v))) for m, v in losses.items()}
    out["last_loss"]["gated vs ungated"] = gap(losses[GATED], losses[UNGATED])
    out["last_loss"]["by seed"] = {model: {seed: last_loss(results, model, seed, epochs)
                                           for seed in by_seed} for model in (GATED, UNGATED)}
    for removed in REMOVED:
        arms = {arm: dict(zip(("mean", "std", "n"), spread(values(removed, arm))))
                for arm in ("gated random", "ungated random", "gated lowest k")}
        out["removed"][removed] = {
            **arms,
            "gated vs ungated (random)": gap(values(removed, "gated random"),
                                             values(removed, "ungated random")),
            "lowest k vs random (gated)": gap(values(removed, "gated lowest k"),
                                              values(removed, "gated random")),
        }
    return out


def table(results: Path, epochs: int = 100) -> str:
    found = summary(results, epochs)
    text = lambda arm: _spread_text(arm, 1)  # noqa: E731
    tests = found["test_accuracy"]
    lines = [f"Fig. 5 at d = 100, {epochs} epochs, seeds {found['seeds']}: test accuracy "
             f"G-ResNet-FC-100 {_spread_text(tests[GATED])} %, ResNet-FC-100 "
             f"{_spread_text(tests[UNGATED])} %; accuracy kept (% of each net's own, 2,000 test "
             "images) after N blocks of 50 are removed:",
             "",
             "| N removed (`python -m experiments.residual_gates.fig5_seeds`) | gated, random "
             "| ungated, random | gated − ungated | gated, lowest k first | lowest k − random |",
             "|---|---|---|---|---|---|"]
    for removed, row in found["removed"].items():
        lines.append(
            f"| {removed} | {text(row['gated random'])} | {text(row['ungated random'])} "
            f"| {gap_text(row['gated vs ungated (random)'], 1)} | {text(row['gated lowest k'])} "
            f"| {gap_text(row['lowest k vs random (gated)'], 1)} |")
    k = ", ".join(f"{part} {_spread_text(arm)}" for part, arm in found["k"].items())
    losses = found["last_loss"]
    lines += ["", f"Mean learned k of G-ResNet-FC-100 (Fig. 4): {k}.",
              f"Training loss at the last epoch (Fig. 3 at d = 100): G-ResNet-FC-100 "
              f"{_spread_text(losses[GATED], 3)}, ResNet-FC-100 {_spread_text(losses[UNGATED], 3)}; "
              f"gap {gap_text(losses['gated vs ungated'], 3)}.",
              "Training loss at the last epoch by seed: " + "; ".join(
                  f"{model} " + ", ".join(f"s{seed} {value:.3f}" for seed, value in by_seed.items()
                                          if value is not None)
                  for model, by_seed in losses["by seed"].items()) + ".",
              f"Test accuracy gap (gated − ungated, full test split): "
              f"{gap_text(tests['gated vs ungated'])}."]
    return "\n".join(lines)


def _spread_text(arm: dict, digits: int = 2) -> str:
    """``mean ± std (n)`` of a summary's arm, as ``spread_text`` prints values."""
    if arm["mean"] is None:
        return "—"
    std = f" ± {arm['std']:.{digits}f}" if arm["std"] is not None else ""
    return f"{arm['mean']:.{digits}f}{std} ({arm['n']})"


def curves(results: Path, epochs: int = 100) -> dict:
    """Per arm: the accuracy kept (% of the net's own) at every number of blocks removed,
    per seed, with the mean and std over seeds; and the paper's numbers."""
    per_seed: dict[str, dict[int, list[float]]] = {arm: {} for arm in CURVES}
    removed: list[int] = []
    for seed, analysis in analyses(results, epochs).items():
        removed = list(analysis["removal_curves"][CURVES["gated random"]]["removed"])
        for arm in CURVES:
            per_seed[arm][seed] = [round(v, 3) for v in kept_curve(analysis, arm)]
    out = {"removed": removed, "paper": PAPER_KEPT, "arms": {}}
    for arm, by_seed in per_seed.items():
        columns = list(zip(*by_seed.values()))
        stats = [spread(column) for column in columns]
        out["arms"][arm] = {"seeds": {str(k): v for k, v in sorted(by_seed.items())},
                            "mean": [round(m, 3) for m, _, _ in stats],
                            "std": [round(sd or 0.0, 3) for _, sd, _ in stats]}
    return out


def plot(found: dict, path: Path, epochs: int = 100) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axis = plt.subplots(figsize=(7, 4.2))
    removed = found["removed"]
    for arm, (label, colour, style) in STYLE.items():
        curve = found["arms"][arm]
        seeds = len(curve["seeds"])
        low = [m - s for m, s in zip(curve["mean"], curve["std"])]
        high = [m + s for m, s in zip(curve["mean"], curve["std"])]
        axis.fill_between(removed, low, high, color=colour, alpha=0.15, linewidth=0)
        axis.plot(removed, curve["mean"], color=colour, linestyle=style,
                  label=f"{label} (mean ± std, {seeds} seeds)")
    markers = {"gated random": "^", "ungated random": "v"}
    for arm, points in found["paper"].items():
        label, colour, _ = STYLE[arm]
        axis.scatter([int(n) for n in points], list(points.values()), color=colour,
                     marker=markers[arm], s=60, edgecolors="black", zorder=3,
                     label=f"{label.split(',')[0]}, random: the paper (MNIST)")
    axis.set_xlabel("blocks removed (of 50)")
    axis.set_ylabel("accuracy kept (% of the net's own)")
    axis.set_title(f"Residual Gates Fig. 5 at d = 100: Fashion-MNIST, {epochs} epochs, "
                   "2,000 test images, 3 random orders per seed", fontsize=8)
    axis.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--out", type=Path, help="draw rg_fig5_seeds.png and its JSON here")
    args = parser.parse_args(argv)
    if not seeds(args.results, args.epochs):
        print(f"no fig5.d100.e{args.epochs}.s<seed>/analysis.json in {args.results}",
              file=sys.stderr)
        return 1
    if args.out is not None:
        found = curves(args.results, args.epochs)
        args.out.mkdir(parents=True, exist_ok=True)
        plot(found, args.out / "rg_fig5_seeds.png", args.epochs)
        (args.out / "rg_fig5_seeds.json").write_text(json.dumps(found, indent=2) + "\n")
        print(f"wrote {args.out / 'rg_fig5_seeds.png'} and {args.out / 'rg_fig5_seeds.json'}")
    elif args.json:
        print(json.dumps(summary(args.results, args.epochs), indent=2))
    else:
        print(table(args.results, args.epochs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
