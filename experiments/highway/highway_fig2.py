"""Highway Networks Fig. 2 (Srivastava et al. 2015, §4) for the released
`highwayfc50.fashion_mnist`: the inner workings of a trained 50-layer highway net.

    python -m experiments.highway.highway_fig2 [--model highwayfc50.fashion_mnist] \
        [--examples 10000] [--split test] [--out docs/figures]

The paper's four columns, each drawn as a heatmap of blocks (rows) by units (columns):

1. the transform-gate bias b_T of every unit (all started at -2);
2. the mean transform-gate activity T(x) over the examples;
3. T(x) for one example (the paper: "very sparse");
4. the block outputs y for the same example (the paper: "stripes", most of the change in
   the first ≈ 10 layers for MNIST).

And, below them, what each column shows as numbers per block: the mean bias; the mean T;
the fraction of a block's gates open (T > 0.5) per example; and how much each block
changes its input, the mean over examples and units of |y - x| (x the block's input,
y its output: a unit with |y - x| small carries its input through, a stripe of column 4),
with the cumulative share of the total change, against the paper's ≈ 10 layers.

Writes ``highway_fig2.png`` and ``highway_fig2.json`` (every number, rounded) into
``--out``. The paper averages over 10,000 training examples (its caption; its text says
"10K random samples"); the default here is the 10,000 Fashion-MNIST test images
(``--split train`` draws 10,000 training images instead). About a minute of one CPU core.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from experiments.highway.fig2_biases import summary, transform_biases

START = -2.0          # b_T at initialisation, as the paper's MNIST net
OPEN_ABOVE = 0.5      # a gate counts as open (transforming more than carrying) when T > 0.5
CLOSED_BELOW = 0.1    # and as closed when T < 0.1
CHANGED_ABOVE = 0.1   # a unit counts as changed by a block when |y - x| > 0.1 (H is tanh: 5 % of its range)
PAPER_CHANGE_LAYERS = 10  # HW §4: "Most of the change in outputs happens in the early layers (≈ 10 for MNIST)"


def _r(value, digits: int = 4):
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_r(v, digits) for v in value]
    return round(float(value), digits)


def blocks_holding(share: float, change_per_block: np.ndarray) -> int:
    """The fewest first blocks whose change adds up to ``share`` of the total."""
    cumulative = np.cumsum(change_per_block) / change_per_block.sum()
    return int(np.searchsorted(cumulative, share - 1e-12) + 1)


def fig2(model, x, y, *, example: int) -> tuple[dict, dict]:
    """``(numbers, maps)``: the figure's numbers (JSON-ready) and its four heatmaps
    (blocks x units arrays) for ``model`` over the examples ``x`` (labels ``y``), with
    the single example ``x[example]``."""
    from keras_gated.analysis import highway_activity, highway_trace

    biases = transform_biases(model)
    trace = highway_trace(model, x)
    activity = highway_activity(model, x, closed_below=CLOSED_BELOW)
    names = list(trace)
    t = np.stack([trace[n]["t"] for n in names], axis=1)                     # (N, blocks, units)
    change = np.stack([np.abs(trace[n]["output"] - trace[n]["input"]) for n in names], axis=1)
    outputs = np.stack([trace[n]["output"][example] for n in names])        # (blocks, units)

    open_per_example = (t > OPEN_ABOVE).mean(axis=(1, 2))                   # (N,)
    closed_per_example = (t < CLOSED_BELOW).mean(axis=(1, 2))
    mean_t_per_block = np.array([activity[n]["mean_t"] for n in names])
    bias_per_block = biases.mean(axis=1)
    change_per_block = change.mean(axis=(0, 2))
    example_change = change[example].mean(axis=1)
    numbers = {
        "model": model.name,
        "examples": int(len(x)),
        "blocks": names,
        "thresholds": {"open_above": OPEN_ABOVE, "closed_below": CLOSED_BELOW,
                       "changed_above": CHANGED_ABOVE},
        "biases": {**summary(biases, START), "per_block_mean": _r(bias_per_block)},
        "mean_t": {
            "mean": _r(t.mean()),
            "per_block": _r(mean_t_per_block),
            "closed_fraction_per_block": _r([activity[n]["closed_fraction"] for n in names]),
            "correlation_with_bias": _r(np.corrcoef(bias_per_block, mean_t_per_block)[0, 1], 3),
        },
        "per_example": {
            "open_fraction_mean": _r(open_per_example.mean()),
            "open_fraction_min": _r(open_per_example.min()),
            "open_fraction_max": _r(open_per_example.max()),
            "closed_fraction_mean": _r(closed_per_example.mean()),
            "open_fraction_per_block": _r((t > OPEN_ABOVE).mean(axis=(0, 2))),
        },
        "single_example": {
            "index": int(example), "label": int(y[example]),
            "open_fraction": _r(open_per_example[example]),
            "closed_fraction": _r(closed_per_example[example]),
            "mean_t": _r(t[example].mean()),
            "mean_abs_change_per_block": _r(example_change),
            "blocks_for_90_percent_of_change": blocks_holding(0.9, example_change),
        },
        "change": {
            "mean_abs_change_per_block": _r(change_per_block),
            "changed_fraction_per_block": _r((change > CHANGED_ABOVE).mean(axis=(0, 2))),
            "blocks_for_50_percent_of_change": blocks_holding(0.5, change_per_block),
            "blocks_for_90_percent_of_change": blocks_holding(0.9, change_per_block),
            "share_of_change_in_first_10_blocks": _r(change_per_block[:PAPER_CHANGE_LAYERS].sum()
                                                     / change_per_block.sum()),
        },
    }
    maps = {"bias": biases, "mean_t": t.mean(axis=0), "example_t": t[example], "example_output": outputs,
            "open_per_example": open_per_example}
    return numbers, maps


def plot(numbers: dict, maps: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(16, 7.5))
    example = numbers["single_example"]
    heatmaps = (
        ("bias", f"transform-gate bias b_T (start {START:g})", "viridis", None),
        ("mean_t", f"mean T(x) over {numbers['examples']:,} images", "viridis", (0, 1)),
        ("example_t", f"T(x), one image (#{example['index']}, class {example['label']})", "viridis", (0, 1)),
        ("example_output", "block outputs y, the same image", "coolwarm", None),
    )
    for ax, (key, title, cmap, limits) in zip(axes[0], heatmaps):
        image = ax.imshow(maps[key], aspect="auto", cmap=cmap, interpolation="nearest",
                          vmin=limits[0] if limits else None, vmax=limits[1] if limits else None)
        fig.colorbar(image, ax=ax, fraction=0.046)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("unit")
        ax.set_ylabel("block (layer)")

    blocks = np.arange(1, len(numbers["blocks"]) + 1)
    bias, activity, change = axes[1, 0], axes[1, 1], axes[1, 3]
    bias.plot(blocks, numbers["biases"]["per_block_mean"], marker="o", ms=3, label="ours: mean b_T per block")
    bias.axhline(START, color="grey", ls="--", lw=1, label=f"start ({START:g}, as the paper's MNIST net)")
    bias.set_ylabel("b_T")
    activity.plot(blocks, numbers["mean_t"]["per_block"], marker="o", ms=3, label="ours: mean T(x)")
    activity.plot(blocks, numbers["per_example"]["open_fraction_per_block"], ls="--", marker="s", ms=3,
                  label=f"ours: fraction of gates with T > {OPEN_ABOVE:g}")
    activity.set_ylim(0, 1)
    activity.set_ylabel("gate activity")

    sparse = axes[1, 2]
    sparse.hist(maps["open_per_example"], bins=40, range=(0, 1), color="tab:blue",
                label=f"ours: {numbers['examples']:,} images")
    sparse.axvline(example["open_fraction"], color="black", ls="--", lw=1,
                   label=f"ours: image #{example['index']}")
    sparse.set_xlabel(f"fraction of an image's {maps['bias'].size:,} gates with T > {OPEN_ABOVE:g}")
    sparse.set_ylabel("images")
    sparse.set_title("sparsity of T(x) per image (HW §4: \"very sparse\")", fontsize=9)

    share = np.cumsum(numbers["change"]["mean_abs_change_per_block"])
    share = share / share[-1]
    change.plot(blocks, share, marker="o", ms=3, label="ours: cumulative share of mean |y − x|")
    example_share = np.cumsum(example["mean_abs_change_per_block"])
    change.plot(blocks, example_share / example_share[-1], ls="--", marker="^", ms=3,
                label=f"ours: the same, image #{example['index']}")
    change.plot(blocks, numbers["change"]["changed_fraction_per_block"], ls="-.", marker="s", ms=3,
                label=f"ours: fraction of units with |y − x| > {CHANGED_ABOVE:g}")
    change.axvline(PAPER_CHANGE_LAYERS, color="tab:red", ls=":", lw=1.5,
                   label="paper (HW Fig. 2, MNIST): most change\nin the first ≈ 10 layers")
    change.set_ylim(0, 1.5)  # the legend sits above the curves, which end at 1
    change.set_yticks(np.linspace(0, 1, 6))
    change.set_ylabel("share of the change / of the units")
    for ax in (bias, activity, change):
        ax.set_xlabel("block (layer)")
    for ax in (bias, activity, sparse):
        ax.legend(fontsize=7)
    change.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{numbers['model']} on Fashion-MNIST: inner workings (Highway Networks Fig. 2)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.highway.highway_fig2",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="highwayfc50.fashion_mnist")
    parser.add_argument("--dataset", default="fashion_mnist")
    parser.add_argument("--split", default="test")
    parser.add_argument("--examples", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0, help="draws the single example (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    args = parser.parse_args(argv)

    import keras_gated
    from keras_gated.analysis.report import load_examples

    model = keras_gated.create_model(args.model)
    x, y = load_examples(args.dataset, args.examples, split=args.split)
    example = int(np.random.default_rng(args.seed).integers(len(x)))
    numbers, maps = fig2(model, x, y, example=example)
    numbers["dataset"], numbers["split"] = args.dataset, args.split
    args.out.mkdir(parents=True, exist_ok=True)
    plot(numbers, maps, args.out / "highway_fig2.png")
    (args.out / "highway_fig2.json").write_text(json.dumps(numbers, indent=2) + "\n")
    for key in ("biases", "mean_t", "per_example", "single_example", "change"):
        shown = {k: v for k, v in numbers[key].items() if not isinstance(v, list)}
        print(key, json.dumps(shown))
    print(f"wrote {args.out / 'highway_fig2.png'} and {args.out / 'highway_fig2.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
