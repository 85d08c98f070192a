"""Prune removed blocks: a new, smaller model without them (Residual Gates §4). The
compressed architectures (``keras_gated.models.compressed``) are built with it, and the
analyses (``keras_gated.analysis``) use it and ``removable_blocks``.

Setting g(k) = 0 makes a block compute its shortcut but still spends its compute. ``prune``
rebuilds the model's graph with the block replaced by its shortcut input, and drops every
layer that then feeds nothing (an FC block's branch layers). The result equals the gated
model with those gates at 0 and runs faster, with fewer parameters.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping

import keras

from keras_gated.gating import can_gate, gate, gated_blocks, residual_gate_of
from keras_gated.layers.block import Block
from keras_gated.layers.residual_gate import ResidualGate


def as_gated(model: keras.Model) -> keras.Model:
    """``model`` itself if it has Residual Gates (or nothing to gate), else its exact
    gated twin."""
    if any(residual_gate_of(layer) is not None for layer in gated_blocks(model).values()):
        return model
    if can_gate(model):
        return gate(model)
    return model


def is_identity_block(layer) -> bool:
    """Whether ``layer`` is a block that removal turns into its identity shortcut."""
    return isinstance(layer, Block) and layer.removable


def removable_blocks(model: keras.Model) -> list[str]:
    """Names of the blocks that removal turns into the identity, in model order."""
    return [name for name, layer in gated_blocks(as_gated(model)).items() if is_identity_block(layer)]


def _histories(node) -> list:
    """Every ``keras_history`` list inside a serialized inbound node (mutable)."""
    found = []
    if isinstance(node, Mapping):
        if "keras_history" in node:
            found.append(node["keras_history"])
        for value in node.values():
            found += _histories(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            found += _histories(value)
    return found


def inputs_of(layer_config: dict) -> list[list]:
    """The ``keras_history`` entries (layer, node, tensor) a serialized layer is called on,
    as the lists inside ``layer_config`` (editing one rewires the layer)."""
    return _histories(layer_config.get("inbound_nodes", []))


def prune(model: keras.Model, blocks: Iterable[str], name: str | None = None) -> keras.Model:
    """A new model without ``blocks`` (each replaced by its identity shortcut).

    Args:
        model: a functional keras-gated model (gated or not; blocks are removed as if
            their gates were 0).
        blocks: names of removable blocks (``keras_gated.analysis.removable_blocks``).
    Returns:
        A new model (its own copies of the kept weights) whose outputs equal ``model``'s
        with those blocks' g(k) = 0.
    """
    blocks = list(dict.fromkeys(blocks))
    allowed = removable_blocks(model)
    for block in blocks:
        if block not in allowed:
            raise ValueError(
                f"Block {block!r} cannot be pruned to the identity; removable blocks: "
                f"{', '.join(allowed) or '(none)'}."
            )
    source = model if all(b in gated_blocks(model) for b in blocks) else as_gated(model)
    config = copy.deepcopy(source.get_config())
    by_name = {c["name"]: c for c in config["layers"]}
    replacement = {}
    for block in blocks:
        layer = gated_blocks(source)[block]
        if not is_identity_block(layer):  # guarded above; kept for clarity
            raise ValueError(f"Block {block!r} is not an identity block.")
        inputs = inputs_of(by_name[block])
        # A block whose gate is a sub-layer has one input; a block that is its own gate
        # (an FC net's merge) has two, [branch, shortcut].
        shortcut = inputs[1] if isinstance(layer, ResidualGate) else inputs[0]
        replacement[block] = list(shortcut)

    def resolve(history: list) -> list:
        while history[0] in replacement:
            history = replacement[history[0]]
        return history

    for layer_config in config["layers"]:
        for history in inputs_of(layer_config):
            history[:] = resolve(list(history))
    for key in ("output_layers", "input_layers"):
        config[key] = _resolve_outputs(config[key], resolve)
    extras = config.get("keras_gated")  # a GatedModel's feature map (forward_features)
    if extras and extras.get("feature_layer") in replacement:
        extras["feature_layer"] = resolve([extras["feature_layer"], 0, 0])[0]
    # Keep only the layers the outputs still reach.
    needed, frontier = set(), [o[0] for o in _flat_outputs(config["output_layers"])]
    while frontier:
        current = frontier.pop()
        if current in needed:
            continue
        needed.add(current)
        frontier += [h[0] for h in inputs_of(by_name[current])]
    config["layers"] = [c for c in config["layers"] if c["name"] in needed]
    config["name"] = name or f"{source.name}_pruned"
    pruned = source.__class__.from_config(config)
    by_path = {v.path: v for v in source.weights}
    for variable in pruned.weights:
        variable.assign(keras.ops.convert_to_numpy(by_path[variable.path]))
    pruned.class_names = getattr(model, "class_names", None)
    return pruned


def _flat_outputs(outputs) -> list:
    if outputs and isinstance(outputs[0], str):
        return [outputs]
    return [o for o in outputs]


def _resolve_outputs(outputs, resolve):
    if outputs and isinstance(outputs[0], str):
        return resolve(list(outputs))
    return [resolve(list(o)) for o in outputs]

