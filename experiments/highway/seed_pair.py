"""Highway Networks Fig. 1 at d = 50, made fair and seeded: the highway net and the plain
net, each trained with its own searched activation and learning rate
(``seeds_queue.sh`` sections a and b), over their seeds.

    python -m experiments.highway.seed_pair [--results DIR] [--prefix reinit.] [--json]
    python -m experiments.highway.seed_pair --repeat reinit. [--results DIR] [--json]

A family's runs are ``hwfig1s.<family>50.s<seed>.e10`` in ``results/`` (10 epochs on the
whole training split, one thread). Per family: the test error (``1 − test_accuracy`` of
``metrics.json``, %) and the best training loss (the lowest ``loss`` of ``log.csv``, the
quantity Fig. 1 plots), mean ± std over seeds; and each highway-minus-plain gap, with
Welch's p and whether it is significant as ``experiments.tools.seeds`` says (3 seeds a side,
two-sided p under 5 %). With ``--prefix reinit.`` the highway side is its repeat from
independent initial weights per layer (``reinit_queue.sh`` s); the plain side keeps its runs,
whose layers always drew their own initial weights. With ``--repeat reinit.`` the highway
net's repeat is set against its first runs instead, seed by seed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from experiments.tools.records import best_training_loss, read_json
from experiments.tools.seeds import gap, gap_text, spread_text

RESULTS = Path(__file__).resolve().parent / "results"
FAMILIES = ("highwayfc", "plainnet")
DEPTH = 50
EPOCHS = 10


def family_runs(results: Path, family: str, depth: int = DEPTH, epochs: int = EPOCHS,
                prefix: str = "") -> dict:
    """Seed -> {"error": test error %, "loss": best training loss} of the family's
    finished runs (named with ``prefix`` in front)."""
    pattern = re.compile(rf"^{re.escape(prefix)}hwfig1s\.{family}{depth}\.s(\d+)\.e{epochs}$")
    runs = {}
    for folder in sorted(results.glob(f"{prefix}hwfig1s.{family}{depth}.s*.e{epochs}")):
        match = pattern.match(folder.name)
        metrics = read_json(folder / "metrics.json") if match else None
        if metrics is None:
            continue
        loss, _epoch = best_training_loss(folder)
        runs[int(match.group(1))] = {"error": 100.0 * (1.0 - float(metrics["test_accuracy"])),
                                     "loss": loss}
    return runs


QUANTITIES = ("error", "loss")


def compared(runs: dict, first: str, second: str) -> dict:
    """``runs`` (two sets of runs by seed) and the first-minus-second gap of each quantity
    over the seeds that have it."""
    values = {side: {key: [r[key] for r in found.values() if r[key] is not None]
                     for key in QUANTITIES} for side, found in runs.items()}
    return {"runs": runs,
            "gaps": {key: gap(values[first][key], values[second][key]) for key in QUANTITIES}}


def pair(results: Path = RESULTS, highway_prefix: str = "") -> dict:
    """Both families' runs (the highway net's named with ``highway_prefix`` in front), and
    the highway-minus-plain gap of each quantity."""
    runs = {family: family_runs(results, family,
                                prefix=highway_prefix if family == "highwayfc" else "")
            for family in FAMILIES}
    return compared(runs, "highwayfc", "plainnet")


def repeat(results: Path = RESULTS, prefix: str = "reinit.") -> dict:
    """The highway net's runs named with ``prefix`` in front against its first runs: both
    sets of runs and the repeat-minus-first gap of each quantity."""
    return compared({"repeat": family_runs(results, "highwayfc", prefix=prefix),
                     "first": family_runs(results, "highwayfc")}, "repeat", "first")


def repeat_markdown(found: dict) -> str:
    """The repeat against the first runs as a Markdown table, each seed's value listed."""
    lines = [f"| highway, d = {DEPTH}, {EPOCHS} epochs | repeat | first runs | repeat − first |",
             "| --- | --- | --- | --- |"]
    for key, label, digits in (("error", "test error %", 2), ("loss", "best training loss", 4)):
        cells = []
        for side in ("repeat", "first"):
            by_seed = found["runs"][side]
            listed = ", ".join(f"{by_seed[s][key]:.{digits}f}" for s in sorted(by_seed)
                               if by_seed[s][key] is not None)
            values = [r[key] for r in by_seed.values() if r[key] is not None]
            cells.append(f"{spread_text(values, digits)}: {listed}" if listed else "—")
        lines.append(f"| {label} | {cells[0]} | {cells[1]} | {gap_text(found['gaps'][key], digits)} |")
    return "\n".join(lines)


def markdown(found: dict) -> str:
    """The pair as a Markdown table: one row per quantity."""
    lines = [f"| d = {DEPTH}, {EPOCHS} epochs | highway | plain | highway − plain |",
             "| --- | --- | --- | --- |"]
    for key, label, digits in (("error", "test error %", 2), ("loss", "best training loss", 4)):
        cells = [spread_text([r[key] for r in found["runs"][family].values() if r[key] is not None],
                             digits) for family in FAMILIES]
        lines.append(f"| {label} | {cells[0]} | {cells[1]} | {gap_text(found['gaps'][key], digits)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.highway.seed_pair",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the kept run records")
    parser.add_argument("--prefix", default="",
                        help="the highway runs' name prefix (reinit.: the repeat from "
                             "independent initial weights)")
    parser.add_argument("--repeat", metavar="PREFIX",
                        help="set the highway runs named with PREFIX in front against the "
                             "first runs, instead of the plain net")
    parser.add_argument("--json", action="store_true", help="every number, as JSON")
    args = parser.parse_args(argv)
    if args.repeat:
        found = repeat(args.results, args.repeat)
        print(json.dumps(found, indent=1) if args.json else repeat_markdown(found))
        return 0
    found = pair(args.results, args.prefix)
    print(json.dumps(found, indent=1) if args.json else markdown(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
