"""The compression measurements as one figure: test accuracy against counted MACs and
against measured CPU time per image relative to the source's, for each source net, its
compressed nets (the method and each baseline, at each budget) and the source itself.

Each run times its compressed net and its source in the same process, in interleaved
rounds, and the figure draws their ratio (the source once, at 1): absolute times of runs
measured under different loads do not compare. A ratio is drawn only where the run's two
nets of one architecture (the pruned net before fine-tuning and the compressed net) timed
within 15 % of each other (``keras_gated.analysis.report.timed_alike``): a load that came and went during the rounds times
them apart, and then the ratio is not the nets' either.

    python -m experiments.compression.tradeoff [--results DIR] [--out PATH]

Reads every finished run's ``compression.json`` in ``results/`` (written by ``keras-gated
compress``: ``measured`` holds the source and the compressed net, timed in the same
process by interleaved rounds) and writes ``docs/figures/compression_tradeoff.png`` with
its numbers beside it (``.json``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
OUT = ROOT / "docs" / "figures" / "compression_tradeoff.png"
TAUGHT = ", taught by the source"  # a run whose fine-tuning distilled the source's outputs
MARKERS = {"source": "*", "pressure": "o", "pressure" + TAUGHT: "P", "lowest": "s",
           "random": "^", "scratch": "D"}


def points(results: Path = RESULTS) -> list[dict]:
    """One point per finished run: source weights, method, budget, and the measured
    accuracy, counted MACs and time per image of the compressed net and of its source."""
    found = []
    for path in sorted(results.glob("*/compression.json")):
        numbers = json.loads(path.read_text())
        record, measured = numbers["record"], numbers["measured"]
        source = json.loads((path.parent / "metrics.json").read_text()).get("source_weights", "")
        # A released id can be trained again: its accuracy tells the two sources apart.
        source = f"{source}, {100 * measured['source']['accuracy']:.2f} %"
        found.append({
            "run": path.parent.name,
            "source": source,
            "method": record["method"] + (TAUGHT if record.get("distillation") else ""),
            "budget": record["budget"],
            "removed": record["removed"],
            "compressed": {k: measured["compressed"][k]
                           for k in ("accuracy", "macs", "seconds_per_image")},
            "source_net": {k: measured["source"][k]
                           for k in ("accuracy", "macs", "seconds_per_image")},
            "timed_alike": timed_alike(measured),
        })
    return found


def timed_alike(measured: dict) -> bool:
    """Whether the run's two nets of one architecture (before and after fine-tuning) timed
    alike (``keras_gated.analysis.report.timed_alike``)."""
    from keras_gated.analysis import report

    before = measured.get("removed, not fine-tuned", {}).get("seconds_per_image")
    return before is not None and report.timed_alike(before, measured["compressed"]["seconds_per_image"])


def relative_time(point: dict) -> float:
    """The compressed net's time per image as a fraction of its source's, timed alike."""
    return point["compressed"]["seconds_per_image"] / point["source_net"]["seconds_per_image"]


def draw(found: list[dict], out: Path = OUT) -> Path:
    """Accuracy against MMACs (left) and against time per image relative to the source
    (right), one colour per source."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sources = sorted({p["source"] for p in found})
    colours = dict(zip(sources, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.6), sharey=True)
    for ax, key, label in ((axes[0], "macs", "counted MMACs per image"),
                           (axes[1], "time", "CPU time per image / the source's (same process, one core)")):
        shown = set()
        for point in found:
            colour = colours[point["source"]]
            x = {"source": point["source_net"]["macs"] * 1e-6 if key == "macs" else 1.0,
                 "compressed": point["compressed"]["macs"] * 1e-6 if key == "macs"
                 else relative_time(point)}
            for net, method, at in ((point["source_net"], "source", x["source"]),
                                    (point["compressed"], point["method"], x["compressed"])):
                name = f"{point['source']}: {method}"
                if method == "source" and name in shown:
                    continue  # the source once (its accuracy is the same in every run)
                if key == "time" and method != "source" and not point["timed_alike"]:
                    continue  # timed under a changing load: its ratio is not the nets
                ax.plot(at, net["accuracy"], MARKERS.get(method, "x"),
                        color=colour, markersize=9 if method == "source" else 6,
                        fillstyle="none" if method in ("lowest", "random") else "full",
                        label=None if name in shown else name)
                shown.add(name)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    left_out = sum(not p["timed_alike"] for p in found)
    if left_out:
        axes[1].set_title(f"{left_out} of {len(found)} runs left out: timed under a changing load",
                          fontsize=8)
    axes[0].set_ylabel("CIFAR-10 test accuracy")
    # Below both panels, clear of the points: the left panel draws every run.
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7, frameon=False)
    fig.suptitle("keras-gated compress: accuracy against cost (experiments/compression/results)")
    fig.tight_layout(rect=(0, 0.06 + 0.025 * math.ceil(len(labels) / 3), 1, 1))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    out.with_suffix(".json").write_text(json.dumps(found, indent=1) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.compression.tradeoff",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    found = points(args.results)
    if not found:
        print(f"no finished run in {args.results}", file=sys.stderr)
        return 1
    print(f"wrote {draw(found, args.out)} ({len(found)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
