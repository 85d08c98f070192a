"""Parameter counts the papers state or imply, from the registered models (built with
fresh weights, nothing trained):

    python -m experiments.tools.param_counts [--quick]

- Highway Networks §3.1: FC nets of 10 to 100 layers with 50 units per highway layer and
  71 per plain layer, "that way the number of parameters is roughly the same for both"
  (28×28×1 inputs, as MNIST; the plain nets without batch norm, as the runs of Fig. 1);
- Highway Networks Table 1: Highway 2 (``highwaynet``, Fitnet 4's 19 layers) has ~2.3M;
- Greff et al. 2017 §5.1: the 50-layer convolutional Highway net (``highwaynet50``) sized
  to match ResNet-50 (``resnet50``);
- Residual Gates §3.2: a gated net adds one k per block, "15 and 12 parameters" to the
  ResNet with n = 5 (``gresnet32`` against ``preactresnet32``) and to the Wide ResNet
  (4,10) (``gwrn_28_10`` against ``wrn_28_10``): printed as the difference.

``--quick`` leaves out the ImageNet-sized nets and WRN-28-10 (a minute of one CPU core to
build).
"""

from __future__ import annotations

import argparse
import sys

MNIST = {"input_shape": (28, 28, 1), "classes": 10}
PLAIN_71 = {**MNIST, "units": 71, "batch_norm": False}

# (what the paper says, first model and its arguments, second model and its arguments)
PAIRS = [(f"HW §3.1, d = {d}: 50 highway units ≈ 71 plain units", f"highwayfc{d}", MNIST,
          f"plainnet{d}", PLAIN_71) for d in (10, 20, 50, 100)]
IMAGENET_PAIRS = [("Greff17 §5.1: Highway-50 sized as ResNet-50", "highwaynet50", {},
                   "resnet50", {})]
SINGLES = [("HW Table 1: Highway 2, ~2.3M", "highwaynet", {})]
# (what the paper says, gated model, its ungated twin): the difference is the claim
DIFFERENCES = [("RG §3.2: G-ResNet (n = 5) adds 15", "gresnet32", "preactresnet32")]
LARGE_DIFFERENCES = [("RG §3.2: G-WRN (4,10) adds 12", "gwrn_28_10", "wrn_28_10")]


def count(name: str, arguments: dict) -> int:
    """Trainable parameters of the registered model ``name`` built with ``arguments``."""
    import numpy as np

    from keras_gated import create_model

    model = create_model(name, **arguments)
    return sum(int(np.prod(weight.shape)) for weight in model.trainable_weights)


def pair_line(claim: str, first: str, a: dict, second: str, b: dict) -> str:
    """A Markdown row: the two counts and the first as a % of the second."""
    n_first, n_second = count(first, a), count(second, b)
    return (f"| {claim} | {first}: {n_first:,} | {second}: {n_second:,} | "
            f"{100.0 * n_first / n_second:.1f} % |")


def difference_line(claim: str, gated: str, ungated: str) -> str:
    """A Markdown row: both counts and the gated net's extra parameters."""
    n_gated, n_ungated = count(gated, {}), count(ungated, {})
    return (f"| {claim} | {gated}: {n_gated:,} | {ungated}: {n_ungated:,} | "
            f"+{n_gated - n_ungated:,} parameters |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.tools.param_counts",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="leave out the ImageNet nets")
    args = parser.parse_args(argv)
    print("| claim | first | second | first / second |")
    print("| --- | --- | --- | --- |")
    for pair in PAIRS + ([] if args.quick else IMAGENET_PAIRS):
        print(pair_line(*pair))
    for claim, name, arguments in SINGLES:
        print(f"| {claim} | {name}: {count(name, arguments):,} | — | — |")
    for difference in DIFFERENCES + ([] if args.quick else LARGE_DIFFERENCES):
        print(difference_line(*difference))
    return 0


if __name__ == "__main__":
    sys.exit(main())
