"""The HighwayFC-50 search's pick: the searched (activation, lr) with the highest final
validation accuracy, from the kept records of the search runs.

    python experiments/highway/lr_search.py RESULTS "relu tanh" 0.001 0.003 0.01 0.03

Ties go to the smaller lr; a run whose loss went NaN (``status.json``: diverged) counts
as diverged; a pair whose full run collapsed (``RESULTS/highwayfc50.<act>.lr<lr>.full.
collapsed``) is skipped. Prints ``"act lr"`` and writes ``RESULTS/highwayfc50.search.json``,
or prints nothing while a search run is unfinished (or every pair failed). Run as a
script by ``queue.sh``; it imports nothing beyond the standard library.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def search_name(act: str, lr: str) -> str:
    return f"highwayfc50.he.{act}.lr{lr}.val10"


def collapsed_name(act: str, lr: str) -> str:
    return f"highwayfc50.{act}.lr{lr}.full.collapsed"


def _status(folder: Path) -> str | None:
    path = folder / "status.json"
    return json.loads(path.read_text()).get("status") if path.is_file() else None


def pick(results: Path, acts: list[str], lrs: list[str]) -> str | None:
    """``"act lr"`` of the best searched pair (see the module docstring), or None."""
    found: dict[str, dict | None] = {}
    for act in acts:
        for lr in lrs:
            folder = results / search_name(act, lr)
            key = f"{act} {lr}"
            if (folder / "metrics.json").is_file():
                metrics = json.loads((folder / "metrics.json").read_text())
                found[key] = {"val_accuracy": metrics["val_accuracy"],
                              "val_split": metrics["val_split"], "command": metrics["command"]}
            elif _status(folder) == "diverged":
                found[key] = None
    failed = [key for key in found if (results / collapsed_name(*key.split())).is_dir()]
    finite = {k: r for k, r in found.items() if r is not None and k not in failed}
    if len(found) < len(acts) * len(lrs) or not finite:
        return None
    best = max(finite, key=lambda k: (finite[k]["val_accuracy"], -float(k.split()[1])))
    (results / "highwayfc50.search.json").write_text(json.dumps(
        {"best": {"activation": best.split()[0], "lr": float(best.split()[1])},
         "init": "he_normal", "transform_bias": -2, "by": "final-epoch val_accuracy",
         "failed_full_runs": failed, "runs": found}, indent=2) + "\n")
    return best


if __name__ == "__main__":
    chosen = pick(Path(sys.argv[1]), sys.argv[2].split(), sys.argv[3:])
    if chosen:
        print(chosen)
