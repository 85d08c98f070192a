"""Residual Gates make block removal exact: g(k) = 0 turns a block into its shortcut.

    python examples/gate_removal.py [--weights cifar10]

Builds a gated ResNet-20 (with released weights when given), then removes its same-shape
units one at a time and reports how far the predictions move on the bundled CIFAR-10
test images (Savarese & Figueiredo 2017, Fig. 5 studies accuracy under removal).
"""

from __future__ import annotations

import argparse

import numpy as np

import keras_gated as kg
from keras_gated.evaluation import demo_images


def main(argv=None) -> dict:
    """Print and return the accuracy with every unit (``"accuracy"``) and, per removed
    unit, its k, the accuracy without it and the mean total-variation change of the
    predictions (``"removed"``: {unit: (k, accuracy, change)})."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weights", default=None, help="e.g. cifar10 (default: random init)")
    args = parser.parse_args(argv)

    images, labels, _ = demo_images()
    x = images.astype("float32")
    model = kg.GResNet20(weights=args.weights)
    base = np.asarray(model.predict(x, verbose=0))
    print("k per unit:", {name: round(k, 3) for name, k in kg.gate_values(model).items()})
    accuracy = float(np.mean(base.argmax(1) == labels))
    print(f"accuracy with every unit: {accuracy:.0%}")
    removed = {}
    for name, k in kg.gate_values(model).items():
        unit = model.get_layer(name)
        if unit.changes_shape:  # a downsampling unit's shortcut is a projection, not x
            continue
        kg.remove_block(model, name)
        probs = np.asarray(model.predict(x, verbose=0))
        kg.set_gate(model, name, k)  # put it back
        change = float(np.abs(probs - base).sum(axis=1).mean() / 2)
        removed[name] = (k, float(np.mean(probs.argmax(1) == labels)), change)
        print(f"without {name:<13} accuracy {removed[name][1]:4.0%}, "
              f"mean total-variation change of the predictions {change:.3f}")
    return {"accuracy": accuracy, "removed": removed}


if __name__ == "__main__":
    main()
