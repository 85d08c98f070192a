"""The figures of the kept ``keras-gated analyze`` results, redrawn from their
``analysis.json`` with the papers' numbers beside ours: Residual Gates Fig. 5 (removal
curves), Table 2 / Fig. 4 and 7 (k per block), §3.1.2 (pruning time), and Greff et al.
2017 Fig. 3 (estimation error).

    python -m experiments.residual_gates.analysis_figures [--figures docs/figures] [--out docs/figures]

Reads, under ``--figures``, ``gresnetfc50_analysis.json``, ``gresnetfc100_analysis.json``,
``gresnet20_cifar10/analysis.json`` and ``gwrn_16_2_cifar10/analysis.json`` (written by
the ``keras-gated analyze`` commands of docs/science.md), and writes their PNGs under
``--out`` with the names docs/science.md shows. Needs no weights and no data (seconds).

The paper's values are drawn as marked points or lines labelled "paper (...)". Residual
Gates Fig. 5 is a G-ResNet-100 with 50 blocks on MNIST; its numbers are placed at the same
fraction of the blocks removed (40 % of 25 blocks is 10) on the right-hand panel, which
gives each curve's accuracy as a fraction of its unpruned net's: the paper's as a fraction
of its own unpruned accuracy (Table 1), ours of ours, so that MNIST and Fashion-MNIST
compare; the left-hand panel is our accuracy alone. Residual Gates Fig. 7 prints no k
values, only a pattern (the lowest k at the blocks that open a stage, the peak at the last
block), marked above those blocks of the CIFAR nets.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from keras_gated.analysis import plots

# Residual Gates (Savarese & Figueiredo 2017), MNIST, 50 residual blocks (d = 100).
RG_G_RESNET_100 = 1 - 0.0126     # Table 1: G-ResNet-100 test error 1.26 %
RG_RESNET_100 = 1 - 0.0150       # Table 1: ResNet-100 test error 1.50 %
RG_ABOVE_AFTER_40 = 0.96         # §3.1.2: G-ResNet "above 96 % even after removing 40 % of the layers"
RG_RESNET_AFTER_40 = 0.60        # §3.1.2: ResNet "only around 60 % when removing 40 % of the layers"
RG_RELATIVE_DROP_AFTER_60 = 0.08  # abstract, §1: 30 of 50 blocks at random, "relative decrease of 8 %"
RG_TABLE2_MEAN_K = {50: 1.04, 100: 0.67}  # Table 2: mean k of G-ResNets, d = 50 and 100
RG_PRUNED_TIME = 0.60            # §3.1.2: "in 60 % of the time after removing 40 % of the layers"
GREFF17_MEAN_ERROR = 0.0         # Greff et al. 2017 Fig. 3: mean estimation error "close to zero", stages 1-3

FIGURES = {  # analysis file -> (depth d of the paper's Table 2 for this net or None, PNG names)
    "gresnetfc50_analysis.json": (50, {"removal": "gresnetfc50_removal.png", "gates": "gresnetfc50_gates.png",
                                       "prune": "gresnetfc50_prune.png"}),
    "gresnetfc100_analysis.json": (100, {"removal": "gresnetfc100_removal.png",
                                         "gates": "gresnetfc100_gates.png"}),
    "gresnet20_cifar10/analysis.json": (None, {
        "removal": "gresnet20_cifar10/removal.png", "gates": "gresnet20_cifar10/gates.png",
        "prune": "gresnet20_cifar10/prune.png", "estimation_error": "gresnet20_cifar10/estimation_error.png"}),
    "gwrn_16_2_cifar10/analysis.json": (None, {
        "removal": "gwrn_16_2_cifar10/removal.png", "gates": "gwrn_16_2_cifar10/gates.png",
        "prune": "gwrn_16_2_cifar10/prune.png", "estimation_error": "gwrn_16_2_cifar10/estimation_error.png"}),
}


def fig5_reference(blocks: int) -> dict:
    """Residual Gates Fig. 5's numbers for a net of ``blocks`` removable blocks, at the
    same fractions of its blocks (40 % and 60 %), as fractions of the paper's unpruned
    accuracy (G-ResNet-100 98.74 %, ResNet-100 98.50 %, Table 1)."""
    at_40, at_60 = 0.4 * blocks, 0.6 * blocks
    return {
        "paper (RG §3.1.2, Fig. 5): G-ResNet-100, MNIST; > 96 % of 98.74 % at 40 % removed":
            {"removed": [at_40], "kept": [RG_ABOVE_AFTER_40 / RG_G_RESNET_100]},
        "paper (RG abstract): G-ResNet-100, 8 % relative decrease at 60 % removed at random":
            {"removed": [at_60], "kept": [1 - RG_RELATIVE_DROP_AFTER_60]},
        "paper (RG §3.1.2, Fig. 5): ResNet-100, MNIST; ≈ 60 % of 98.50 % at 40 % removed at random":
            {"removed": [at_40], "kept": [RG_RESNET_AFTER_40 / RG_RESNET_100]},
    }


def gates_reference(depth: int | None) -> dict | None:
    """Residual Gates Table 2's mean k of the G-ResNet of the same depth (MNIST), if any."""
    if depth not in RG_TABLE2_MEAN_K:
        return None  # Fig. 7 (CIFAR) gives a pattern, no values: see gates_marks
    return {f"paper (RG Table 2): mean k {RG_TABLE2_MEAN_K[depth]:.2f}, G-ResNet d = {depth}, MNIST":
            RG_TABLE2_MEAN_K[depth]}


def gates_marks(depth: int | None, blocks: list[str]) -> dict | None:
    """Residual Gates Fig. 7's pattern on a CIFAR net's blocks (``stage<i>_unit<j>``): the
    lowest k at the first unit of each stage (the paper's blocks 1, 5 and 9), the peak at
    the last block; None for the MNIST nets (Table 2 gives them a value)."""
    if depth is not None:
        return None
    openers = [block for block in blocks if block.endswith("_unit1")]
    return {"paper (RG Fig. 7, G-WRN (4,10), CIFAR-10): lowest k, the first block of each stage": openers,
            "paper (RG Fig. 7): the peak, the last block": [blocks[-1]]}


def prune_reference(points: list[dict]) -> dict:
    return {"paper (RG §3.1.2): 60 % of the unpruned time with 40 % of the layers removed":
            {"seconds_per_image": RG_PRUNED_TIME * points[0]["seconds_per_image"]}}


def draw(analysis: dict, depth: int | None, names: dict, out: Path) -> list[Path]:
    """The PNGs of one analysis file, with the papers' references."""
    written = []
    model = analysis["model"]
    if "removal" in names:
        curves = analysis["removal_curves"]
        blocks = max(max(curve["removed"]) for curve in curves.values())
        reference = fig5_reference(blocks) if depth else None
        written.append(plots.plot_removal_relative(
            curves, out / names["removal"],
            f"{model}: block removal, {analysis['examples']} test images", reference=reference))
    if "gates" in names:
        written.append(plots.plot_gate_values(analysis["gate_values"], out / names["gates"],
                                              f"{model}: learned gates",
                                              reference=gates_reference(depth),
                                              marks=gates_marks(depth, list(analysis["gate_values"]))))
    if "prune" in names:
        written.append(plots.plot_prune_tradeoff(analysis["prune"], out / names["prune"],
                                                 reference=prune_reference(analysis["prune"])))
    if "estimation_error" in names:
        written.append(plots.plot_estimation_error(
            analysis["estimation_error"], out / names["estimation_error"],
            reference={"paper (Greff17 Fig. 3): mean ≈ 0 in stages 1–3 (ResNet-50, ImageNet)": GREFF17_MEAN_ERROR}))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.residual_gates.analysis_figures",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--figures", type=Path, default=Path("docs/figures"),
                        help="where the analysis files are (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    args = parser.parse_args(argv)
    for name, (depth, names) in FIGURES.items():
        path = args.figures / name
        if not path.is_file():
            parser.error(f"{path} is missing: run the keras-gated analyze command of docs/science.md")
        for written in draw(json.loads(path.read_text()), depth, names, args.out):
            print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
