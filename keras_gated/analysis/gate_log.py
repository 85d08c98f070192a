"""Record every Residual Gate's k and g(k) at the end of each epoch."""

from __future__ import annotations

import csv
from pathlib import Path

import keras

from keras_gated.gating import residual_gate_of, gated_blocks


def gate_readings(model: keras.Model) -> list[tuple[str, float, float]]:
    """(block name, k, g(k)) of every Residual Gate of ``model``, in block order."""
    readings = []
    for name, layer in gated_blocks(model).items():
        gate = residual_gate_of(layer)
        if gate is not None:
            k = float(keras.ops.convert_to_numpy(gate.k))
            g = float(keras.ops.convert_to_numpy(gate.gate_value()))
            readings.append((name, k, g))
    return readings


class GateLogger(keras.callbacks.Callback):
    """Write each gate's k and g(k) per epoch to ``path`` (CSV: epoch, block, k, g_k)
    and add them to the epoch's logs as ``k/<block>``, so a ``TensorBoard`` callback placed
    after this one plots them.

    Epochs already in the file are rewritten, never duplicated, when a resumed run
    repeats them.
    """

    FIELDS = ("epoch", "block", "k", "g_k")

    def __init__(self, path: str | Path):
        super().__init__()
        self.path = Path(path)

    def _kept_rows(self, epoch: int) -> list[dict]:
        if not self.path.exists():
            return []
        with self.path.open(newline="") as f:
            return [row for row in csv.DictReader(f) if int(row["epoch"]) < epoch]

    def on_epoch_end(self, epoch, logs=None):
        readings = gate_readings(self.model)
        if not readings:
            return
        rows = self._kept_rows(epoch)
        rows += [{"epoch": epoch, "block": n, "k": k, "g_k": g} for n, k, g in readings]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        with partial.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.FIELDS)
            writer.writeheader()
            writer.writerows(rows)
        partial.replace(self.path)
        if logs is not None:
            logs.update({f"k/{name}": k for name, k, _ in readings})

