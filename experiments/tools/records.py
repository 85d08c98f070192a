"""A run's records, as ``python -m training.train`` writes them into its folder and as an
experiment keeps them in ``experiments/<paper>/results/<run>/``: ``fingerprint.json`` (the
run's settings), ``log.csv`` (one row per epoch), ``gates.csv`` (every gate's k after each
epoch), ``metrics.json`` (a finished run) and ``status.json`` (finished, diverged,
collapsed, held). Nothing here imports Keras.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

# What a finished (or stopped) run keeps in git: its text records, never its weights.
KEPT_FILES = ("log.csv", "gates.csv", "metrics.json", "fingerprint.json", "run_state.json")


def read_json(path: Path) -> Any:
    """The JSON in ``path``, or None when there is no such file."""
    return json.loads(path.read_text()) if path.is_file() else None


def fingerprint(folder: Path) -> dict | None:
    """The settings the run recorded (``fingerprint.json``), or None."""
    return read_json(folder / "fingerprint.json")


def status(folder: Path) -> str | None:
    """``status.json``'s status (finished, diverged, collapsed, held), or None."""
    recorded = read_json(folder / "status.json")
    return recorded.get("status") if recorded else None


def rows(path: Path) -> list[dict]:
    """The rows of a CSV file as dicts; [] when there is no such file."""
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def loss(row: dict) -> float:
    """The row's training loss (NaN when it was not logged)."""
    value = row.get("loss")
    return float(value) if value not in (None, "") else math.nan


def logged_epochs(folder: Path) -> int:
    return len(rows(folder / "log.csv"))


def diverged_epoch(folder: Path) -> int | None:
    """The 1-based epoch whose logged training loss is NaN/inf (training stops there), or None."""
    for row in rows(folder / "log.csv"):
        if row.get("loss") not in (None, "") and not math.isfinite(loss(row)):
            return int(row["epoch"]) + 1
    return None


def best_training_loss(folder: Path) -> tuple[float | None, int | None]:
    """(lowest training loss in ``log.csv``, its 1-based epoch); (None, None) without one.
    A NaN loss never counts as the lowest."""
    losses = [(loss(row), int(row["epoch"]) + 1) for row in rows(folder / "log.csv")]
    losses = [pair for pair in losses if not math.isnan(pair[0])]
    return min(losses) if losses else (None, None)


def mean_k(folder: Path) -> tuple[float | None, int | None]:
    """(mean k over the gates, 1-based epoch) at the last epoch of ``gates.csv``; (None, None)."""
    found = rows(folder / "gates.csv")
    if not found:
        return None, None
    last = max(int(r["epoch"]) for r in found)
    ks = [float(r["k"]) for r in found if int(r["epoch"]) == last]
    return sum(ks) / len(ks), last + 1


def results_folder(out: Path) -> Path:
    """Where the records of the run trained into ``out`` are kept: a run in flight,
    ``experiments/in_flight/<paper>/<run>``, keeps them in
    ``experiments/<paper>/results/<run>``; any other folder is its own record."""
    parts = out.parts
    if "in_flight" not in parts:
        return out
    at = parts.index("in_flight")
    return Path(*parts[:at], *parts[at + 1:at + 2], "results", *parts[at + 2:])
