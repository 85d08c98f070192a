"""Highway Networks Fig. 2, first column, for the released `highwayfc50.fashion_mnist`:
the transform-gate bias b_T of every block after training (all started at -2).

    python -m experiments.highway.fig2_biases

Prints, as JSON: the mean, minimum and maximum bias, the fraction below the -2 start
(the paper: "most biases actually decreased further during training"), the mean per
third of the 50 blocks, and the correlation of a block's mean bias with its depth. Reads
the released weights only (no data, no training; seconds of one CPU core). The whole figure,
with the gate activity and block outputs, is ``python -m experiments.highway.highway_fig2``.
"""

from __future__ import annotations

import json

import numpy as np


def transform_biases(model) -> np.ndarray:
    """(blocks, units) transform-gate biases of the Highway blocks ``block1 … blockN``."""
    blocks = sorted((layer for layer in model.layers if layer.name.startswith("block")),
                    key=lambda layer: int(layer.name[len("block"):]))
    return np.stack([np.asarray(layer.transform_gate.bias) for layer in blocks])


def summary(biases: np.ndarray, start: float = -2.0) -> dict:
    per_block = biases.mean(axis=1)
    thirds = np.array_split(per_block, 3)
    return {
        "blocks": int(biases.shape[0]), "units": int(biases.shape[1]), "start": start,
        "mean": round(float(biases.mean()), 4), "min": round(float(biases.min()), 4),
        "max": round(float(biases.max()), 4),
        "fraction_below_start": round(float((biases < start).mean()), 4),
        "mean_per_third": [round(float(t.mean()), 4) for t in thirds],
        "depth_correlation": round(float(np.corrcoef(np.arange(len(per_block)), per_block)[0, 1]), 3),
    }


def main() -> None:
    from keras_gated.models import HighwayFC

    model = HighwayFC(50, weights="fashion_mnist")
    print(json.dumps(summary(transform_biases(model)), indent=2))


if __name__ == "__main__":
    main()
