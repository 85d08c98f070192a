"""Residual Gates Tables 1 and 2 (Savarese & Figueiredo 2017, §3.1.1) with seeds: each
cell's test error and mean k over its seeded runs, and whether each gated-vs-ungated gap
is significant (Welch's t-test, its p-value printed).

    python -m experiments.residual_gates.seed_table [--results DIR] [--json | --first-runs]
    python -m experiments.residual_gates.seed_table --pair gplainnet resnetfc   # any two families
    python -m experiments.residual_gates.seed_table --k      # Table 2: mean k over seeds
    python -m experiments.residual_gates.seed_table --loss   # Fig. 3: last training loss
    python -m experiments.residual_gates.seed_table --pair resnetfc_preact resnetfc   # §3.1's pre-activation nets

A cell (family, depth d) collects the runs ``rgtable.<model><d>.e20.t1.s<seed>`` of
``seeds_queue.sh`` (one thread each) from ``results/``; the first, two-thread run of the
cell (``rgtable.<model><d>.e20``, the page's original number) is shown beside them and
left out of the mean. Test error is ``1 − test_accuracy`` of each run's ``metrics.json``,
in %; mean k is the mean over the net's gates at the last epoch (``gates.csv``). The family
``resnetfc_preact`` is ``resnetfc`` built with ``preactivation=True`` (§3.1: "with
pre-activation units the FC ResNets did worse"), its runs named
``rgtable.resnetfc<d>.preact.e20.t1.s<seed>``; it has no first run.

A gap (gated minus ungated mean error) is *significant* as ``experiments.tools.seeds``
says: 3 seeds a side and Welch's two-sided p under 5 %; otherwise *within noise*.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from experiments.tools.records import loss, mean_k, read_json, rows
from experiments.tools.seeds import MIN_SEEDS, gap, gap_text, spread, spread_text

RESULTS = Path(__file__).resolve().parent / "results"
DEPTHS = (2, 10, 20, 50, 100)
PAIRS = (("gresnetfc", "resnetfc"), ("gplainnet", "plainnet"))  # (gated, ungated)
FAMILIES = ("plainnet", "resnetfc", "gplainnet", "gresnetfc", "resnetfc_preact")
VARIANTS = {"resnetfc_preact": ("resnetfc", ".preact")}  # family -> (model, name infix)


def _error(folder: Path) -> float | None:
    metrics = folder / "metrics.json"
    if not metrics.is_file():
        return None
    return 100.0 * (1.0 - float(read_json(metrics)["test_accuracy"]))


def cell(results: Path, model: str, depth: int, epochs: int = 20) -> dict:
    """One cell: its seeded runs' test errors (%) and mean k, by seed, and the first run."""
    base, infix = VARIANTS.get(model, (model, ""))
    name = f"rgtable.{base}{depth}{infix}.e{epochs}"
    pattern = re.compile(re.escape(name) + r"\.t1\.s(\d+)$")
    errors, ks, losses = {}, {}, {}
    for folder in sorted(results.glob(f"{name}.t1.s*")):
        match = pattern.match(folder.name)
        error = _error(folder) if match else None
        if error is None:
            continue
        seed = int(match.group(1))
        errors[seed] = error
        k, _epoch = mean_k(folder)
        if k is not None:
            ks[seed] = k
        logged = rows(folder / "log.csv")
        if logged:
            losses[seed] = loss(logged[-1])
    return {"model": model, "depth": depth, "runs": name + ".t1.s<seed>", "errors": errors,
            "mean_k": ks, "last_loss": losses, "first_run": _error(results / name)}


def compare(gated: dict, ungated: dict) -> dict:
    """The gap of mean test errors (gated − ungated, points) Welch's p and whether it is significant."""
    return gap(gated["errors"].values(), ungated["errors"].values())


def table(results: Path = RESULTS) -> list[dict]:
    """Every depth's cells and their gated-vs-ungated comparisons."""
    rows = []
    for depth in DEPTHS:
        cells = {model: cell(results, model, depth) for model in FAMILIES}
        rows.append({"depth": depth, "cells": cells,
                     "gaps": {gated: compare(cells[gated], cells[ungated])
                              for gated, ungated in PAIRS}})
    return rows


def _cell_text(found: dict) -> str:
    return spread_text(found["errors"].values())


def _gap_text(found: dict) -> str:
    return gap_text(found)


def markdown(rows: list[dict]) -> str:
    """The seeded Table 1 as Markdown: test error % mean ± std (seeds) per cell, each gap."""
    lines = ["| d | G-ResNet-FC | ResNet-FC | gap | G-PlainNet | PlainNet | gap |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        cells, gaps = row["cells"], row["gaps"]
        lines.append(f"| {row['depth']} | " + " | ".join(
            [_cell_text(cells["gresnetfc"]), _cell_text(cells["resnetfc"]), _gap_text(gaps["gresnetfc"]),
             _cell_text(cells["gplainnet"]), _cell_text(cells["plainnet"]), _gap_text(gaps["gplainnet"])])
            + " |")
    return "\n".join(lines)


def pair_markdown(rows: list[dict], first: str, second: str) -> str:
    """Two families' cells at every depth and the gap of their mean errors (first −
    second), e.g. Table 1's G-PlainNets against ResNets."""
    lines = [f"| d | {first} | {second} | gap |", "| --- | --- | --- | --- |"]
    for row in rows:
        a, b = row["cells"][first], row["cells"][second]
        lines.append(f"| {row['depth']} | {_cell_text(a)} | {_cell_text(b)} | "
                     f"{_gap_text(compare(a, b))} |")
    return "\n".join(lines)


def k_markdown(rows: list[dict]) -> str:
    """Table 2: the mean k at the last epoch of each gated cell, mean ± std over seeds, and
    the G-PlainNet-minus-G-ResNet-FC gap of the means (Welch's p, whether it is
    significant): RG §3.1.1 reads the two families' mean k as significantly different."""
    lines = ["| d | G-ResNet-FC mean k | G-PlainNet mean k | G-PlainNet − G-ResNet-FC |",
             "| --- | --- | --- | --- |"]
    for row in rows:
        res, plain = (row["cells"][model]["mean_k"].values() for model in ("gresnetfc", "gplainnet"))
        lines.append(f"| {row['depth']} | {spread_text(res)} | {spread_text(plain)} | "
                     f"{gap_text(gap(plain, res))} |")
    return "\n".join(lines)


def loss_markdown(rows: list[dict]) -> str:
    """Fig. 3: the last epoch's training loss of every cell, mean ± std over seeds, and the
    gated-minus-ungated gap of each pair (Welch's p, whether it is significant)."""
    lines = ["| d | G-ResNet-FC | ResNet-FC | gap | G-PlainNet | PlainNet | gap |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        cells = row["cells"]
        texts = []
        for gated, ungated in PAIRS:
            a, b = cells[gated]["last_loss"].values(), cells[ungated]["last_loss"].values()
            texts += [spread_text(a, 3), spread_text(b, 3), gap_text(gap(a, b), 3)]
        lines.append(f"| {row['depth']} | " + " | ".join(texts) + " |")
    return "\n".join(lines)


def first_run_differences(rows: list[dict], seed: int = 0) -> list[tuple[str, float, float]]:
    """(cell, first run's error, seed ``seed``'s error) of every cell that has both and
    trains (both errors under 50 %): how far one re-run of the same command lands."""
    found = []
    for row in rows:
        for model, data in row["cells"].items():
            again = data["errors"].get(seed)
            if data["first_run"] is not None and again is not None and max(data["first_run"], again) < 50:
                found.append((f"{model}{row['depth']}", data["first_run"], again))
    return found


def first_run_markdown(found: list[tuple[str, float, float]]) -> str:
    """The first runs against their one-thread re-runs, with the median and largest gap."""
    lines = ["| cell | first run (2 threads): test error % | seed 0, 1 thread | difference |",
             "| --- | --- | --- | --- |"]
    lines += [f"| {name} | {a:.2f} | {b:.2f} | {b - a:+.2f} |" for name, a, b in found]
    gaps = sorted(abs(b - a) for _, a, b in found)
    if gaps:
        middle = len(gaps) // 2
        median = gaps[middle] if len(gaps) % 2 else (gaps[middle - 1] + gaps[middle]) / 2
        lines.append(f"\n{len(gaps)} cells: median |difference| {median:.2f}, largest {gaps[-1]:.2f} points")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.residual_gates.seed_table",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the kept run records")
    parser.add_argument("--json", action="store_true", help="every number, as JSON")
    parser.add_argument("--first-runs", action="store_true",
                        help="each cell's first (two-thread) run against its seed-0 re-run")
    parser.add_argument("--pair", nargs=2, choices=FAMILIES, metavar="FAMILY",
                        help="two families' cells and their gap (first minus second)")
    parser.add_argument("--k", action="store_true", help="Table 2: mean k over seeds")
    parser.add_argument("--loss", action="store_true",
                        help="Fig. 3: the last epoch's training loss over seeds")
    args = parser.parse_args(argv)
    rows = table(args.results)
    if args.pair:
        print(pair_markdown(rows, *args.pair))
    elif args.k:
        print(k_markdown(rows))
    elif args.loss:
        print(loss_markdown(rows))
    elif args.first_runs:
        print(first_run_markdown(first_run_differences(rows)))
    else:
        print(json.dumps(rows, indent=1, default=str) if args.json else markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
