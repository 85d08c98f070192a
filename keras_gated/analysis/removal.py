"""Block removal (Residual Gates §4, Fig. 5; Veit et al. 2016): test accuracy with blocks
removed, one at a time and cumulatively.

Removing a block sets g(k) = 0, so the block becomes its shortcut path. For an ungated
net the same is done on its exact gated twin (``keras_gated.gate``: k = 1 changes
nothing until a block is removed). Only blocks whose shortcut is the identity are
removable here: a block that changes the shape, or that shares its pre-activation with
its shortcut, would become a different layer rather than disappear.
"""

from __future__ import annotations

from collections.abc import Sequence

import keras
import numpy as np

from keras_gated.gating import residual_gate_of, gate_values, gated_blocks, set_gate
from keras_gated.models.prune import as_gated, removable_blocks

ORDERS = ("gate", "random", "position")


def accuracy(model: keras.Model, x: np.ndarray, y: np.ndarray, batch_size: int = 256) -> float:
    """Top-1 accuracy of ``model`` on ``(x, y)`` in inference mode."""
    predictions = model.predict(x, batch_size=batch_size, verbose=0)
    return float(np.mean(np.argmax(predictions, axis=-1) == np.asarray(y).reshape(-1)))


def _check_blocks(names: Sequence[str], allowed: Sequence[str]) -> None:
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise ValueError(
            f"Block {unknown[0]!r} cannot be removed to the identity; removable blocks: "
            f"{', '.join(allowed) or '(none)'}."
        )


class _Removed:
    """Context: the named blocks of a gated model removed, k restored afterwards."""

    def __init__(self, model: keras.Model, names: Sequence[str]):
        self.model, self.names = model, list(names)
        self.saved = gate_values(model)

    def __enter__(self):
        for name in self.names:
            set_gate(self.model, name, residual_gate_of(gated_blocks(self.model)[name]).removal_k())
        return self.model

    def __exit__(self, *exc):
        for name in self.names:
            set_gate(self.model, name, self.saved[name])


def single_removal_accuracies(model: keras.Model, x, y, *, blocks: Sequence[str] | None = None,
                              batch_size: int = 256) -> dict[str, float]:
    """Block -> accuracy with that block alone removed."""
    gated = as_gated(model)
    allowed = removable_blocks(gated)
    names = allowed if blocks is None else list(blocks)
    _check_blocks(names, allowed)
    results = {}
    for name in names:
        with _Removed(gated, [name]):
            results[name] = accuracy(gated, x, y, batch_size)
    return results


def removal_order(model: keras.Model, order: str, seed: int = 0) -> list[str]:
    """The removable blocks in the order a removal curve drops them.

    ``"gate"``: lowest |g(k)| first (the paper's criterion); ``"random"``: a seeded
    permutation; ``"position"``: from the first block to the last.
    """
    if order not in ORDERS:
        raise ValueError(f"Unknown removal order {order!r}; choose one of {', '.join(ORDERS)}.")
    gated = as_gated(model)
    names = removable_blocks(gated)
    if order == "position":
        return names
    if order == "random":
        return [names[i] for i in np.random.default_rng(seed).permutation(len(names))]
    blocks = gated_blocks(gated)
    g = {n: abs(float(keras.ops.convert_to_numpy(residual_gate_of(blocks[n]).gate_value()))) for n in names}
    return sorted(names, key=lambda n: (g[n], names.index(n)))


def removal_curve(model: keras.Model, x, y, *, order: str = "gate", seeds: Sequence[int] = (0,),
                  max_blocks: int | None = None, batch_size: int = 256) -> dict:
    """Accuracy after removing 0, 1, ..., n blocks cumulatively.

    Returns ``{"removed": [0..n], "accuracy": [...], "std": [...], "order": [...]}``:
    for ``order="random"`` the mean and standard deviation over ``seeds``, otherwise one
    curve (std 0). Removing nothing gives the model's own accuracy.
    """
    gated = as_gated(model)
    curves, orders = [], []
    for seed in (seeds if order == "random" else seeds[:1]):
        names = removal_order(gated, order, seed)[:max_blocks]
        orders.append(names)
        curve = [accuracy(gated, x, y, batch_size)]
        for count in range(1, len(names) + 1):
            with _Removed(gated, names[:count]):
                curve.append(accuracy(gated, x, y, batch_size))
        curves.append(curve)
    values = np.asarray(curves)
    return {
        "removed": list(range(values.shape[1])),
        "accuracy": values.mean(axis=0).tolist(),
        "std": values.std(axis=0).tolist(),
        "order": orders[0] if len(orders) == 1 else orders,
    }
