"""Read and set the gates of a built model.

* Residual Gates (one scalar k per block): ``gate_values`` returns the raw k (not g(k));
  ``set_gate`` assigns k; ``remove_block`` sets g(k) = 0 so that the block becomes
  exactly its shortcut path (the identity for same-shape blocks).
* Highway blocks (input-dependent gates T(x)): ``gate_values`` returns the mean
  transform-gate bias b_T; ``set_gate`` assigns that value to every b_T of the block.

A block is any layer of the model (searched through nested models) that either is a
``ResidualGate`` (FC nets, where the gate layer is the block's merge), owns one as
``residual_gate`` (``PreActUnit``), or has a ``transform_gate_bias`` (``Highway``,
``HighwayBottleneck``).
"""

from __future__ import annotations

from collections import OrderedDict

import keras
import numpy as np

from keras_gated.layers.residual_gate import ResidualGate


def _walk(model: keras.Model):
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            yield from _walk(layer)
        else:
            yield layer


def _residual_gate(layer) -> ResidualGate | None:
    if isinstance(layer, ResidualGate):
        return layer
    gate = getattr(layer, "residual_gate", None)
    return gate if isinstance(gate, ResidualGate) else None


def gated_blocks(model: keras.Model) -> "OrderedDict[str, keras.layers.Layer]":
    """Block name -> the block's layer, in model order, for every gated block."""
    blocks = OrderedDict()
    for layer in _walk(model):
        if _residual_gate(layer) is not None or hasattr(layer, "transform_gate_bias"):
            blocks[layer.name] = layer
    return blocks


def gate_variables(model: keras.Model) -> list:
    """Every Residual Gate's k variable in ``model``, in block order."""
    return [
        gate.k for gate in map(_residual_gate, gated_blocks(model).values()) if gate is not None
    ]


def gate_values(model: keras.Model) -> "OrderedDict[str, float]":
    """Block name -> k (Residual Gates) or mean transform-gate bias (Highway blocks)."""
    values = OrderedDict()
    for name, layer in gated_blocks(model).items():
        gate = _residual_gate(layer)
        if gate is not None:
            values[name] = float(keras.ops.convert_to_numpy(gate.k))
        else:
            bias = keras.ops.convert_to_numpy(layer.transform_gate_bias)
            values[name] = float(np.mean(bias))
    return values


def _block(model: keras.Model, block_name: str):
    blocks = gated_blocks(model)
    if block_name not in blocks:
        names = ", ".join(blocks) if blocks else "(this model has no gated blocks)"
        raise ValueError(f"No gated block named {block_name!r}. Gated blocks: {names}.")
    return blocks[block_name]


def set_gate(model: keras.Model, block_name: str, k: float) -> None:
    """Set a Residual Gate's k, or every transform-gate bias of a Highway block, to ``k``."""
    layer = _block(model, block_name)
    gate = _residual_gate(layer)
    if gate is not None:
        gate.k.assign(float(k))
        return
    bias = layer.transform_gate_bias
    if not hasattr(bias, "assign"):
        raise ValueError(
            f"Block {block_name!r} has no transform gate (a carry-only Highway layer); "
            "its carry bias cannot be set through set_gate."
        )
    bias.assign(np.full(tuple(bias.shape), float(k), dtype=bias.dtype))


def remove_block(model: keras.Model, block_name: str) -> None:
    """Make a gated block exactly its shortcut path: g(k) = 0.

    Raises ValueError for sigmoid gates (g never reaches 0) and for Highway blocks,
    whose input-dependent gate T(x) cannot be set to 0 by a parameter.
    """
    layer = _block(model, block_name)
    gate = _residual_gate(layer)
    if gate is None:
        raise ValueError(
            f"Block {block_name!r} is a Highway block: its gate T(x) depends on the input "
            "and reaches 0 only as its bias goes to −inf, so it cannot be removed exactly. "
            "Lower its bias with set_gate to make it carry more."
        )
    gate.k.assign(gate.removal_k())
