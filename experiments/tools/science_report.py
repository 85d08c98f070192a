"""Where the paper experiments' runs stand, as Markdown table rows.

    python -m experiments.tools.science_report [--root DIR] [--evaluate] NAME...
    python -m experiments.tools.science_report --update docs/science.md [--evaluate]

For each run: finished (``metrics.json``: test accuracy and error of the last epoch, final
validation accuracy when a split was held out), diverged (stopped by a NaN/inf loss: the
epoch), collapsed or held (its ``status.json``), running (the last logged epoch) or not
started; the mean k over every Residual Gate at the last logged epoch (``gates.csv``); the
lowest training loss of any epoch (``log.csv``, Highway Networks Fig. 1 reports the best
training cost); and the command that reproduces it. A run trained into
``experiments/in_flight/<paper>/<run>`` is read from its kept records,
``experiments/<paper>/results/<run>``, when they exist (``experiments.tools.records``).
``--evaluate`` re-measures each finished run's test accuracy with ``keras-gated evaluate``
on its final backup weights (in the folder it trained into; the command is printed beside
the number) and refuses a disagreement over 0.1 point. ``--update DOC`` rewrites, in every
Markdown table of DOC, the cells under the headers ``ours: test error ...``, ``ours: mean
k`` and ``ours: best training loss`` of each row whose command names a run (``--out
ROOT/NAME``), and the date of the line ``(status as of ...)``. Without ``--evaluate``
nothing here imports Keras.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

from experiments.tools.records import (
    best_training_loss,
    diverged_epoch,
    logged_epochs,
    mean_k,
    read_json,
    results_folder,
    status,
)

TOLERANCE = 0.001  # accuracy, as training/release.py
DEFAULT_ROOT = "experiments/in_flight"


def final_weights(folder: Path) -> Path | None:
    pointer = read_json(folder / "backup" / "latest.json")
    return folder / "backup" / pointer["weights"] if pointer else None


def evaluate_command(metrics: dict, weights: Path) -> str:
    """``keras-gated evaluate`` of ``weights`` for the run ``metrics`` records: its model,
    data set (``--dataset`` of its command) and ``--model-arg`` constructor arguments."""
    found = re.search(r"--dataset (\S+)", metrics.get("command", ""))
    parts = ["keras-gated", "evaluate", metrics["model"], "--weights", str(weights),
             "--dataset", found.group(1) if found else "fashion_mnist"]
    for name, value in (metrics.get("model_args") or {}).items():
        # JSON gave str, bool, int or float: a str is written as is (what the flag parses).
        parts += ["--model-arg", f"{name}={value if isinstance(value, str) else repr(value)}"]
    return shlex.join(parts)


def evaluate(command: str) -> float:
    """The test accuracy printed by ``command`` (a ``keras-gated evaluate``), run as is."""
    result = subprocess.run(shlex.split(command), capture_output=True, text=True, check=True)
    for line in result.stdout.splitlines():
        if line.startswith("test accuracy:"):
            return float(line.split(":", 1)[1])
    raise RuntimeError(f"no test accuracy in the output of {command}")


def report(out: Path, *, re_evaluate: bool) -> dict:
    """What the run trained into ``out`` has recorded, as one dict: read from its kept
    records (``results_folder``) when there are any, else from ``out``; its weights from
    ``out``."""
    kept = results_folder(out)
    folder = kept if kept.is_dir() else out
    row: dict = {"name": out.name, "folder": str(folder)}
    k, k_epoch = mean_k(folder)
    row["mean_k"], row["k_epoch"] = k, k_epoch
    row["best_loss"], row["best_loss_epoch"] = best_training_loss(folder)
    metrics_path = folder / "metrics.json"
    if not metrics_path.is_file():
        diverged = diverged_epoch(folder)
        recorded = status(folder)
        if diverged is not None:
            row["status"] = f"diverged (loss NaN/inf in epoch {diverged}; no test error)"
        elif recorded in ("diverged", "collapsed", "held"):
            row["status"] = f"{recorded} (see {folder / 'status.json'})"
        elif folder.is_dir():
            row["status"] = f"running ({logged_epochs(folder)} epochs logged)"
        else:
            row["status"] = "not started"
        return row
    metrics = json.loads(metrics_path.read_text())
    row.update(status="finished", test_accuracy=metrics["test_accuracy"],
               epochs=metrics["epochs"], command=metrics["command"],
               val_split=metrics.get("val_split", "test"),
               val_accuracy=metrics.get("val_accuracy"), model=metrics["model"])
    weights = final_weights(out)
    if weights is None and re_evaluate:
        # The queues empty an ended run's backup: nothing to measure again here.
        print(f"{row['name']}: weights not kept in {out}: not re-measured (metrics.json as "
              "recorded; re-train the run to re-measure it)", file=sys.stderr)
        row["evaluated_accuracy"] = None
    if weights is not None:
        row["evaluate_command"] = evaluate_command(metrics, weights)
        if re_evaluate:
            measured = evaluate(row["evaluate_command"])
            row["evaluated_accuracy"] = measured
            if abs(measured - metrics["test_accuracy"]) > TOLERANCE:
                raise SystemExit(f"{folder}: keras-gated evaluate gives {measured:.4f}, "
                                 f"metrics.json {metrics['test_accuracy']:.4f}")
    return row


def markdown(row: dict) -> str:
    k = f"{row['mean_k']:.2f}" if row.get("mean_k") is not None else "—"
    if row["status"] != "finished":
        return f"| `{row['name']}` | {row['status']} | — | {k} | — |"
    accuracy = row.get("evaluated_accuracy") or row["test_accuracy"]
    val = (f"; val {100 * row['val_accuracy']:.2f} % ({row['val_split']})"
           if row.get("val_accuracy") is not None else "")
    return (f"| `{row['name']}` | {100 * accuracy:.2f} % | {100 * (1 - accuracy):.2f} %{val} | "
            f"{k} | `{row['command']}` |")


OUT_FLAG = re.compile(r"--out (\S+?)`")
STATUS_DATE = re.compile(r"\(status as of [^)]*\)")


def error_cell(row: dict) -> str:
    if row["status"] != "finished":
        return row["status"]
    accuracy = row.get("evaluated_accuracy") or row["test_accuracy"]
    return f"{100 * (1 - accuracy):.2f} % ({100 * accuracy:.2f} % acc.)"


def k_cell(row: dict) -> str:
    k = row.get("mean_k")
    return f"{k:.2f}" if k is not None and math.isfinite(k) else "—"


def loss_cell(row: dict) -> str:
    if row.get("best_loss") is None:
        return row["status"] if row["status"] != "finished" else "—"
    shown = f"{row['best_loss']:.4f} (epoch {row['best_loss_epoch']})"
    return shown if row["status"] == "finished" else f"{shown}; {row['status']}"


def update_document(text: str, root: Path, *, re_evaluate: bool, now: str) -> str:
    """``text`` with the ours-columns of every row that names a run under ``root`` filled
    from that run (see the module docstring)."""
    lines = text.split("\n")
    columns: dict[str, int] = {}
    for i, line in enumerate(lines):
        if not line.startswith("|"):
            columns = {}
            continue
        cells = line.split(" | ")
        if not columns and any(c.strip("| ").startswith("ours: ") for c in cells):
            columns = {c.strip("| ").split(" (")[0]: j for j, c in enumerate(cells)}
            continue
        found = OUT_FLAG.search(line)
        if not found or not found.group(1).startswith(str(root)):
            continue
        row = report(Path(found.group(1)), re_evaluate=re_evaluate)
        for header, cell in (("ours: test error", error_cell(row)), ("ours: mean k", k_cell(row)),
                             ("ours: best training loss", loss_cell(row))):
            if header in columns:
                cells[columns[header]] = cell
        lines[i] = " | ".join(cells)
    return STATUS_DATE.sub(f"(status as of {now})", "\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.tools.science_report",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="run folder names under --root")
    parser.add_argument("--update", type=Path, metavar="DOC",
                        help="fill the ours-columns of DOC's tables from the runs they name")
    parser.add_argument("--root", default=DEFAULT_ROOT,
                        help="where the runs were trained into (default: %(default)s)")
    parser.add_argument("--evaluate", action="store_true",
                        help="re-measure finished runs with keras-gated evaluate")
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    args = parser.parse_args(argv)
    if args.update is None and not args.names:
        parser.error("name run folders, or pass --update DOC")
    if args.update is not None:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        text = args.update.read_text()
        args.update.write_text(update_document(text, Path(args.root), re_evaluate=args.evaluate,
                                               now=now))
        print(f"updated {args.update}")
    for name in args.names:
        row = report(Path(args.root) / name, re_evaluate=args.evaluate)
        print(json.dumps(row) if args.json else markdown(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
