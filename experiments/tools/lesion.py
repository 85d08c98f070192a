"""Greff et al. 2017 §4.4 from a committed analysis: the accuracy lost when one block is
removed (``single_removal`` of an ``analysis.json`` written by ``keras-gated analyze``),
block by block and as a mean per stage, with the mildest and the worst removal.

    python -m experiments.tools.lesion docs/figures/gresnet20_cifar10/analysis.json

A block named ``stage<s>_unit<u>`` belongs to stage s; a block of a net without stages
(``block<i>`` of an FC net) is its own stage, ``all``. Accuracies are in %, drops in points
of the net's own test accuracy on the analysed images.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from experiments.tools.records import read_json

STAGE = re.compile(r"^(stage\d+)_")


def stage_of(block: str) -> str:
    """The stage a block belongs to: ``stage2`` for ``stage2_unit3``, else ``all``."""
    match = STAGE.match(block)
    return match.group(1) if match else "all"


def drops(analysis: dict) -> dict:
    """The net's accuracy, each block's accuracy and drop when it alone is removed, the
    mean and largest drop per stage, and the mildest and worst removal (all in %)."""
    full = 100.0 * float(analysis["accuracy"])
    blocks = {name: 100.0 * float(value) for name, value in analysis["single_removal"].items()}
    by_block = {name: {"accuracy": acc, "drop": full - acc} for name, acc in blocks.items()}
    stages: dict[str, list[float]] = {}
    for name, found in by_block.items():
        stages.setdefault(stage_of(name), []).append(found["drop"])
    mildest = min(by_block, key=lambda name: by_block[name]["drop"])
    worst = max(by_block, key=lambda name: by_block[name]["drop"])
    return {"accuracy": full, "blocks": by_block,
            "stages": {stage: {"mean": sum(v) / len(v), "max": max(v), "n": len(v)}
                       for stage, v in stages.items()},
            "mildest": mildest, "worst": worst}


def markdown(found: dict) -> str:
    """The per-stage drops as a Markdown table, then the mildest and the worst removal."""
    lines = ["| stage | blocks | mean drop (points) | largest drop (points) |",
             "| --- | --- | --- | --- |"]
    lines += [f"| {stage} | {s['n']} | {s['mean']:.2f} | {s['max']:.2f} |"
              for stage, s in found["stages"].items()]
    blocks, full = found["blocks"], found["accuracy"]
    lines.append("")
    for label in ("mildest", "worst"):
        name = found[label]
        lines.append(f"{label} removal: {name}, {blocks[name]['accuracy']:.2f} % of "
                     f"{full:.2f} % (drop {blocks[name]['drop']:.2f} points)")
    return "\n".join(lines)


def read_analysis(path: Path) -> dict:
    """The analysis in ``path``; a missing file, invalid JSON or an analysis without
    ``single_removal`` is refused in one sentence (a ``ValueError``)."""
    try:
        analysis = read_json(path)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON ({error}): give the analysis.json that "
                         "`keras-gated analyze` wrote.") from None
    if analysis is None:
        raise ValueError(f"{path} does not exist: give the analysis.json that "
                         "`keras-gated analyze` wrote.")
    if not isinstance(analysis, dict) or "single_removal" not in analysis:
        raise ValueError(f"{path} has no single_removal: give an analysis.json that "
                         "`keras-gated analyze` wrote with the block removals.")
    return analysis


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.tools.lesion",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("analysis", type=Path, help="an analysis.json with single_removal")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    args = parser.parse_args(argv)
    from keras_gated.errors import run_command  # one sentence and an exit code on failure

    def run() -> int:
        print(markdown(drops(read_analysis(args.analysis))))
        return 0

    return run_command("experiments.tools.lesion", run, debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
