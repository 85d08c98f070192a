"""Is the source's teaching a measured gain? Gate-guided compression of the 100-epoch
``gresnet20.cifar10`` to half its MACs, fine-tuned for 30 epochs from learning rate 0.05,
with the source as teacher (knowledge distillation, α = 0.9 at temperature 4) and
without, over seeds.

    python -m experiments.compression.teacher_seeds [--results DIR] [--json]

Each arm collects ``<arm>`` (seed 0) and ``<arm>-s<seed>`` from ``results/``; a run counts
once it has its ``metrics.json``. Per arm: each seed's test accuracy, the mean ± sample
standard deviation, how far the mean lies below the source (the goal is at most 1.5
points), which seeds end within it and each seed's training accuracy in its last epoch.
The gap (taught − untaught mean) is *significant* as ``experiments.tools.seeds`` says:
3 seeds a side and Welch's two-sided p under 5 %.
Every run must have removed the same blocks from the same source, or the arms would
differ in more than the teacher; the table refuses otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from experiments.tools.records import read_json
from experiments.tools.seeds import gap, gap_text, spread, spread_text

RESULTS = Path(__file__).resolve().parent / "results"
ARMS = {"taught": "gresnet20.e100-m05-kd", "untaught": "gresnet20.e100-m05-lr05"}
GOAL_POINTS = 1.5  # the compressed net may end at most this far below its source


def _seed(arm: str, name: str) -> int | None:
    """The seed of run ``name`` in ``arm`` (0 for the bare name), None when not the arm's."""
    if name == arm:
        return 0
    found = re.fullmatch(re.escape(arm) + r"-s(\d+)", name)
    return int(found.group(1)) if found else None


def arm_runs(results: Path, arm: str) -> list[dict]:
    """The arm's finished runs in seed order: seed, test and source accuracy (%), blocks
    removed and the last epoch's training accuracy (%, None when not recorded)."""
    runs = []
    for folder in sorted(results.iterdir()) if results.is_dir() else []:
        seed = _seed(arm, folder.name)
        metrics = read_json(folder / "metrics.json") if seed is not None else None
        if metrics is None:
            continue
        record = (read_json(folder / "compression.json") or {}).get("record", {})
        finetune = (record.get("history") or {}).get("finetune") or []
        last = finetune[-1] if finetune else {}
        runs.append({"run": folder.name, "seed": seed,
                     "test": 100.0 * metrics["test_accuracy"],
                     "source": 100.0 * metrics["source_test_accuracy"],
                     "removed": sorted(record.get("removed", [])),
                     "train": 100.0 * last["accuracy"] if "accuracy" in last else None})
    return sorted(runs, key=lambda run: run["seed"])


def comparison(results: Path = RESULTS) -> dict:
    """Both arms' runs and spreads, their gap to the source and to each other."""
    arms = {label: arm_runs(results, arm) for label, arm in ARMS.items()}
    every = [run for runs in arms.values() for run in runs]
    if not every:
        raise ValueError(f"no finished run of {' or '.join(ARMS.values())} in {results}: "
                         "run experiments/compression/queue.sh first.")
    if len({(run["source"], tuple(run["removed"])) for run in every}) > 1:
        raise ValueError("the runs differ in their source or in the blocks they removed, so "
                         "the arms differ in more than the teacher: compare runs of one "
                         "source and budget.")
    source = every[0]["source"]
    summary = {}
    for label, runs in arms.items():
        mean, std, n = spread(run["test"] for run in runs)
        summary[label] = {"runs": runs, "mean": mean, "std": std, "n": n,
                          "below_source": None if mean is None else source - mean,
                          "within_goal": [run["seed"] for run in runs
                                          if source - run["test"] <= GOAL_POINTS + 1e-9]}
    found = gap([run["test"] for run in arms["taught"]], [run["test"] for run in arms["untaught"]])
    return {"source": source, "removed": every[0]["removed"], "arms": summary, "gap": found}


def markdown(found: dict) -> str:
    """The comparison as the page prints it: one row per arm, then the gap."""
    removed = ", ".join(found["removed"])
    lines = [f"Source: {found['source']:.2f} %; removed in every run: {removed}.",
             "",
             "| arm | run | seeds: test accuracy (%) | mean ± std (n) | below the source "
             f"| within {GOAL_POINTS} points | training accuracy, last epoch (%) |",
             "|---|---|---|---|---|---|---|"]
    for label, arm in found["arms"].items():
        seeds = ", ".join(f"{run['seed']}: {run['test']:.2f}" for run in arm["runs"]) or "—"
        below = "—" if arm["below_source"] is None else f"{arm['below_source']:.2f}"
        within = f"{len(arm['within_goal'])} of {arm['n']}"
        train = ", ".join("—" if run["train"] is None else f"{run['train']:.1f}"
                          for run in arm["runs"]) or "—"
        lines.append(f"| {label} | `{ARMS[label]}` | {seeds} | "
                     f"{spread_text(run['test'] for run in arm['runs'])} | {below} | {within} "
                     f"| {train} |")
    lines += ["", f"taught − untaught: {gap_text(found['gap'])}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the folder of finished "
                        "runs (default: experiments/compression/results)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    args = parser.parse_args(argv)
    try:
        found = comparison(args.results)
    except ValueError as error:
        print(f"teacher_seeds: {error}", file=sys.stderr)
        return 2
    print(json.dumps(found, indent=2) if args.json else markdown(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
