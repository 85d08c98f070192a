"""Residual Gates §2.1 by computation: how far a freshly initialised n×n weight matrix
starts from W = 0 (where a residual layer is the identity), against the distance of the
gate parameter k from k = 0 (where a gated layer is the identity).

    python -m experiments.tools.init_distance [--sizes 50 100 ...] [--seed 0]

For each width n and each of Keras's ``glorot_uniform`` (the FC nets' Dense default) and
``he_normal``: the component-wise sum of squares ΣW² (the paper's "component wise sum of
the expected distance", Θ(n) since each of the n² entries has variance Θ(1/n)) and the
Euclidean distance ‖W‖ = √ΣW², each divided by n and by √n so that the growth reads off
as a constant column. k starts at 1 whatever n is (k₀ = 1), a distance of 1.
"""

from __future__ import annotations

import argparse
import math
import sys

SIZES = (50, 100, 200, 400, 800, 1600)
INITIALIZERS = ("glorot_uniform", "he_normal")


def distances(n: int, initializer: str, seed: int = 0) -> dict:
    """ΣW² and ‖W‖ of one n×n matrix drawn by the Keras initializer ``initializer``."""
    import keras
    import numpy as np

    config = {"class_name": initializer, "config": {"seed": seed}}
    weights = np.asarray(keras.initializers.get(config)((n, n)), dtype=np.float64)
    squares = float(np.sum(weights ** 2))
    return {"n": n, "initializer": initializer, "sum_of_squares": squares,
            "euclidean": math.sqrt(squares)}


def markdown(sizes=SIZES, seed: int = 0) -> str:
    """One row per width and initializer: ΣW², ΣW²/n, ‖W‖, ‖W‖/√n, and k's distance."""
    lines = ["| n | initializer | ΣW² | ΣW² / n | ‖W‖ | ‖W‖ / √n | k₀ − 0 |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for n in sizes:
        for initializer in INITIALIZERS:
            found = distances(n, initializer, seed)
            lines.append(f"| {n} | {initializer} | {found['sum_of_squares']:.1f} | "
                         f"{found['sum_of_squares'] / n:.3f} | {found['euclidean']:.2f} | "
                         f"{found['euclidean'] / math.sqrt(n):.3f} | 1 |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.tools.init_distance",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(markdown(args.sizes, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
