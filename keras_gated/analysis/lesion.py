"""Lesioning, shuffling and the per-stage estimation error of Greff, Srivastava &
Schmidhuber 2017 (*Highway and Residual Networks learn Unrolled Iterative Estimation*,
§4 and Fig. 3).

* Lesioning a block replaces it by its carry/shortcut: g(k) = 0 for a Residual Gate,
  T = 0 for a coupled Highway layer (y = x).
* Shuffling permutes the same-shape blocks of a stage (each stage's first,
  dimension-changing block stays first).
* The estimation error of block l in a stage is ‖x_l − x_L‖ / ‖x_L‖, x_L the stage's
  last block output, averaged over the data: unrolled iterative estimation predicts it
  falls steadily through the stage.
"""

from __future__ import annotations

import copy
import itertools
from collections import OrderedDict
from collections.abc import Sequence

import keras
import numpy as np

from keras_gated.analysis.removal import _Removed, accuracy
from keras_gated.models.prune import as_gated, inputs_of, removable_blocks
from keras_gated.gating import residual_gate_of, gated_blocks
from keras_gated.layers.block import Block, block_stages, stage_label
from keras_gated.layers.highway import Highway
from keras_gated.layers.highway_bottleneck import HighwayBottleneck

CLOSED_BIAS = -1e4  # sigmoid(-1e4) is exactly 0 in float32


def stage_of(model: keras.Model, block: str) -> str | None:
    """The stage label of ``model``'s block ``block``: ``stage2``, ``conv3`` (ImageNet
    nets); None for a block without a stage (fully-connected nets)."""
    stage = block_stages(model.layers).get(block)
    return None if stage is None else stage_label(model.get_layer(block), stage)


def stages(model: keras.Model) -> "OrderedDict[str, list[str]]":
    """Stage -> its gated/residual blocks in order (FC nets: one stage, ``"all"``)."""
    numbers = block_stages(model.layers)
    result: OrderedDict[str, list[str]] = OrderedDict()
    for layer in _blocks(model):
        stage = numbers.get(layer.name)
        result.setdefault("all" if stage is None else stage_label(layer, stage), []).append(layer.name)
    return result


def _blocks(model: keras.Model) -> list[keras.layers.Layer]:
    """The gated blocks, or for an ungated net its blocks."""
    gated = list(gated_blocks(model).values())
    if gated:
        return gated
    return [layer for layer in model.layers if isinstance(layer, Block)]


def _lesionable_highway(layer) -> bool:
    """A coupled Highway layer or bottleneck: T = 0 leaves its carry, y = c(x)."""
    return isinstance(layer, HighwayBottleneck) or (
        isinstance(layer, Highway) and layer.variant == "coupled")


def lesion_accuracies(model: keras.Model, x, y, *, batch_size: int = 256) -> dict[str, float]:
    """Block -> accuracy with that block lesioned (replaced by its carry or shortcut)."""
    highway = [(n, l) for n, l in gated_blocks(model).items()
               if residual_gate_of(l) is None and _lesionable_highway(l)]
    if not highway:
        gated = as_gated(model)
        results = {}
        for name in removable_blocks(gated):
            with _Removed(gated, [name]):
                results[name] = accuracy(gated, x, y, batch_size)
        return results
    results = {}
    for name, layer in highway:
        if layer.compute_output_shape(layer.input.shape) != tuple(layer.input.shape):
            continue  # a shape-changing block has no identity carry to fall back to
        bias = layer.transform_gate_bias
        saved = keras.ops.convert_to_numpy(bias).copy()
        bias.assign(np.full(saved.shape, CLOSED_BIAS, saved.dtype))
        try:
            results[name] = accuracy(model, x, y, batch_size)
        finally:
            bias.assign(saved)
    return results


def _permuted_model(model: keras.Model, order: dict[str, list[str]]) -> keras.Model:
    """A copy of a single-path model whose blocks run in ``order`` within each segment."""
    config = copy.deepcopy(model.get_config())
    by_name = {c["name"]: c for c in config["layers"]}
    for original, permuted in order.items():
        names = original.split("|")
        first_input = copy.deepcopy(inputs_of(by_name[names[0]])[0])
        consumers = [c for c in config["layers"] if any(h[0] == names[-1] for h in inputs_of(c))]
        outputs = config["output_layers"]
        histories = [by_name[n] for n in permuted]
        for i, layer_config in enumerate(histories):
            source = first_input if i == 0 else [permuted[i - 1], 0, 0]
            for history in inputs_of(layer_config):
                history[:] = list(source)
        for consumer in consumers:
            for history in inputs_of(consumer):
                if history[0] == names[-1]:
                    history[0] = permuted[-1]
        if outputs and outputs[0] == names[-1]:
            outputs[0] = permuted[-1]
    shuffled = model.__class__.from_config(config)
    by_path = {v.path: v for v in model.weights}
    for variable in shuffled.weights:
        variable.assign(keras.ops.convert_to_numpy(by_path[variable.path]))
    return shuffled


def shuffled_orders(blocks: Sequence[str], seeds: Sequence[int]) -> list[list[str]]:
    """Orders of ``blocks`` other than their own, one per seed: every such order when
    there are no more of them than seeds (two blocks: only the swap), else one random
    order per seed (redrawn until it differs from the original)."""
    others = [list(p) for p in itertools.permutations(blocks) if list(p) != list(blocks)]
    if len(others) <= len(seeds):
        return others
    orders = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        order = list(blocks)
        while order == list(blocks):
            order = [blocks[i] for i in rng.permutation(len(blocks))]
        orders.append(order)
    return orders


def shuffle_accuracies(model: keras.Model, x, y, *, seeds: Sequence[int] = (0, 1, 2),
                       batch_size: int = 256) -> dict[str, dict]:
    """Stage -> accuracy (mean, std over the orders) with its same-shape blocks run in
    orders other than their own (``shuffled_orders``; Greff et al. 2017, Fig. 3)."""
    removable = set(removable_blocks(model)) | {
        name for name, layer in gated_blocks(model).items()
        if residual_gate_of(layer) is None and _lesionable_highway(layer)
        and tuple(layer.input.shape) == tuple(layer.output.shape)
    }
    results = {}
    for stage, names in stages(model).items():
        movable = [n for n in names if n in removable]
        if len(movable) < 2 or stage == "all":
            continue
        orders = shuffled_orders(movable, seeds)
        values = [accuracy(_permuted_model(model, {"|".join(movable): order}), x, y, batch_size)
                  for order in orders]
        results[stage] = {"mean": float(np.mean(values)), "std": float(np.std(values)),
                          "blocks": movable, "orders": orders, "accuracies": values}
    return results


def estimation_error(model: keras.Model, x, *, batch_size: int = 256) -> dict[str, dict]:
    """Per stage, how far each block's output x_l is from the stage's last one, x_L.

    Greff et al. 2017 (Eq. 1, Fig. 3): blocks of a stage iteratively estimate the same
    representation, so the estimation error x_l − x_L should be zero in expectation and
    its spread should shrink along the stage. For each block: ``signed_mean``, the mean
    over the units (height, width, channels) of the mean over the data of x_l − x_L, and
    ``signed_std``, the mean over the units of its standard deviation over the data (the
    paper's two curves); ``per_block``, the mean over the data of ‖x_l − x_L‖ / ‖x_L‖
    (scale-free). ``mean``/``std``: of ``per_block`` over the blocks before the last.
    """
    groups = {s: n for s, n in stages(model).items() if s != "all" and len(n) > 1}
    names = [n for block_names in groups.values() for n in block_names]
    probe = keras.Model(model.inputs, [model.get_layer(n).output for n in names])
    outputs = probe.predict(x, batch_size=batch_size, verbose=0)
    by_name = dict(zip(names, outputs))
    results = {}
    for stage, block_names in groups.items():
        final = by_name[block_names[-1]].reshape(len(x), -1)
        norm = np.linalg.norm(final, axis=1) + 1e-12
        differences = [by_name[n].reshape(len(x), -1) - final for n in block_names]
        errors = [float(np.mean(np.linalg.norm(d, axis=1) / norm)) for d in differences]
        results[stage] = {
            "blocks": block_names, "per_block": errors,
            "signed_mean": [float(np.mean(d.mean(axis=0))) for d in differences],
            "signed_std": [float(np.mean(d.std(axis=0))) for d in differences],
            "mean": float(np.mean(errors[:-1])), "std": float(np.std(errors[:-1])),
        }
    return results
