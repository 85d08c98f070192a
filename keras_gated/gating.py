"""Gate a trained ResNet: the gated twin of an ungated net, every weight copied.

``gate(model)`` turns a pre-activation ResNet, a Wide ResNet or a ResNet-50 into its gated
twin (Savarese & Figueiredo 2017): every residual block gets one Residual Gate,
u = g(k)·f_r(x) + s(x) (ResNet-50: u = ReLU(g(k)·F(x) + s(x))), with k started at 1.
Since g(1) = 1 for g = ReLU or the identity, the twin computes exactly what the
original computes; from there k can be fine-tuned, read, and used to remove or prune
blocks (formerly ``keras_gated.gates``). Works on any model built from keras-gated's
gateable blocks (``keras_gated.layers.Block`` classes that declare ``gateable``, such
as ``PreActUnit`` and ``ResNetBottleneck``) and on the residual merges a family declares
(``FamilySpec.residual_merge``), including published weights brought in with
``keras_gated.convert``. The gated twin's name comes from the families' declared
``twins``.
"""

from __future__ import annotations

import keras

from keras_gated.layers.block import Block
from keras_gated.registry import families

EXACT_GATES = ("relu", "identity")  # g(1) = 1: the twin starts as the original


def twin_name(name: str) -> str:
    """``preactresnet20`` -> ``gresnet20``, ``wrn_16_2`` -> ``gwrn_16_2``; else ``name_gated``."""
    return families.twin_name(name)


def gateable_layers(model: keras.Model) -> tuple[list[keras.layers.Layer], list[keras.layers.Layer]]:
    """(the gateable blocks, the declared residual merges) of ``model``, in model order."""
    blocks = [layer for layer in model.layers if isinstance(layer, Block) and layer.gateable]
    merges = [layer for layer in model.layers if families.is_residual_merge(layer)]
    return blocks, merges


def can_gate(model: keras.Model) -> bool:
    """Whether ``gate`` finds anything to gate in ``model``."""
    blocks, merges = gateable_layers(model)
    return bool(blocks or merges)


def __getattr__(name: str):
    """The tables this module kept before the families declared their twins and blocks."""
    tables = {
        "TWIN_PREFIXES": lambda: tuple(t for s in families.specs() for t in s.twins),
        "GATEABLE_BLOCKS": lambda: tuple(
            cls.__name__ for cls in _subclasses(Block) if cls.__dict__.get("gateable")),
    }
    if name not in tables:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _WARNED:
        import warnings

        _WARNED.add(name)
        warnings.warn(f"keras_gated.gating.{name} is deprecated: the families declare it "
                      "(keras_gated.registry.families, keras_gated.layers.Block).",
                      DeprecationWarning, stacklevel=2)
    return tables[name]()


_WARNED: set[str] = set()


def _subclasses(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_subclasses(sub))]


def gate(model: keras.Model, gate: str = "relu") -> keras.Model:
    """The gated twin of ``model``: one Residual Gate (k = 1) per residual block.

    Args:
        model: a functional keras-gated model with ungated residual blocks
            (``PreActResNet``, ``WideResNet``, ``ResNet50``, or one converted from
            published weights).
        gate: the gating function, ``"relu"`` (the paper's) or ``"identity"``; both give
            g(1) = 1, so the twin's outputs equal the original's.

    Returns:
        A new model, named after the gated family (``gresnet20``, ``gwrn_16_2``,
        ``gresnet50``); ``model`` is left untouched.
    """
    if gate not in EXACT_GATES:
        raise ValueError(
            f"gate={gate!r} would change the function (g(1) != 1); use 'relu' or 'identity'."
        )
    if not hasattr(model, "get_config") or not isinstance(model, keras.Model):
        raise TypeError(f"gate() takes a keras.Model, got {type(model).__name__}.")
    block_layers, merge_layers = gateable_layers(model)
    if not block_layers and not merge_layers:
        raise ValueError(
            f"{model.name} has no residual blocks to gate (gateable blocks such as PreActUnit "
            "or ResNetBottleneck layers, or residual Add merges); gate() works on pre-act "
            "ResNets, Wide ResNets, ResNet-50 and residual FC nets."
        )
    config = model.get_config()
    by_name = {c["config"]["name"]: c for c in config.get("layers", [])}
    blocks = [by_name[layer.name] for layer in block_layers]
    merges = [by_name[layer.name] for layer in merge_layers]
    already = [c["config"]["name"] for c in blocks if c["config"].get("gate") is not None]
    if already:
        raise ValueError(f"{model.name} is gated already (block {already[0]!r} has a gate).")
    for block in blocks:
        block["config"]["gate"] = gate
    for merge in merges:
        merge.update({
            "module": None, "class_name": "keras_gated>ResidualGate",
            "registered_name": "keras_gated>ResidualGate",
            "config": {"name": merge["config"]["name"], "gate": gate, "form": "residual",
                       "dtype": merge["config"].get("dtype"), "trainable": True},
        })
    config["name"] = twin_name(model.name)
    gated = model.__class__.from_config(config)
    _copy_weights(model, gated)
    gated.class_names = getattr(model, "class_names", None)
    return gated


def _copy_weights(source: keras.Model, target: keras.Model) -> None:
    """Every variable of ``source`` into the variable of ``target`` with the same path."""
    by_path = {v.path: v for v in source.weights}
    copied = 0
    for variable in target.weights:
        original = by_path.get(variable.path)
        if original is None:
            if not variable.path.endswith(("/gate/k", "/k")):
                raise AssertionError(f"{variable.path} has no counterpart in {source.name}")
            continue
        variable.assign(keras.ops.convert_to_numpy(original))
        copied += 1
    if copied != len(by_path):
        raise AssertionError(f"copied {copied} of {len(by_path)} variables of {source.name}")


# --- Reading and setting the gates of a built model (formerly ``keras_gated.gates``) ---
#
# * Residual Gates (one scalar k per block): ``gate_values`` returns the raw k (not g(k));
#   ``set_gate`` assigns k; ``remove_block`` sets g(k) = 0 so that the block becomes
#   exactly its shortcut path (the identity for same-shape blocks).
# * Highway blocks (input-dependent gates T(x)): ``gate_values`` returns the mean
#   transform-gate bias b_T; ``set_gate`` assigns that value to every b_T of the block.
#
# A block is any layer of the model (searched through nested models) that either is a
# ``ResidualGate`` (FC nets, where the gate layer is the block's merge), owns one as
# ``residual_gate`` (``PreActUnit``), or has a ``transform_gate_bias`` (``Highway``,
# ``HighwayBottleneck``).

from collections import OrderedDict  # noqa: E402

import numpy as np  # noqa: E402

from keras_gated.layers.residual_gate import ResidualGate  # noqa: E402


def _walk(model: keras.Model):
    if isinstance(model, keras.distillation.Distiller):  # its gates are the student's:
        yield from _walk(model.student)  # the teacher is frozen
        return
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            yield from _walk(layer)
        else:
            yield layer


def residual_gate_of(layer) -> ResidualGate | None:
    """The Residual Gate of ``layer`` (the gate itself, or a block's ``residual_gate``),
    or None when the layer has no gate."""
    if isinstance(layer, ResidualGate):
        return layer
    gate = getattr(layer, "residual_gate", None)
    return gate if isinstance(gate, ResidualGate) else None


def gated_blocks(model: keras.Model) -> "OrderedDict[str, keras.layers.Layer]":
    """Block name -> the block's layer, in model order, for every gated block."""
    blocks = OrderedDict()
    for layer in _walk(model):
        if residual_gate_of(layer) is not None or hasattr(layer, "transform_gate_bias"):
            blocks[layer.name] = layer
    return blocks


def gate_variables(model: keras.Model) -> list:
    """Every Residual Gate's k variable in ``model``, in block order."""
    return [
        gate.k for gate in map(residual_gate_of, gated_blocks(model).values()) if gate is not None
    ]


def gate_values(model: keras.Model) -> "OrderedDict[str, float]":
    """Block name -> k (Residual Gates) or mean transform-gate bias (Highway blocks)."""
    values = OrderedDict()
    for name, layer in gated_blocks(model).items():
        gate = residual_gate_of(layer)
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
    gate = residual_gate_of(layer)
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
    gate = residual_gate_of(layer)
    if gate is None:
        raise ValueError(
            f"Block {block_name!r} is a Highway block: its gate T(x) depends on the input "
            "and reaches 0 only as its bias goes to −inf, so it cannot be removed exactly. "
            "Lower its bias with set_gate to make it carry more."
        )
    gate.k.assign(gate.removal_k())
