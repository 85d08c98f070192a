"""What each instruction of an XLA module came from: the optimised HLO text that
``--xla_dump_to`` writes (``metadata={op_type=... op_name=...}``).

XLA fuses element-wise work across layers, so a fusion counts under the op of its root
instruction; layout copies and transposes that XLA adds without metadata count under
the convolution they feed, else as layout copies; a reduction without metadata under
the op its reducer computation is named after.
"""

from __future__ import annotations

import dataclasses
import glob
import re
from dataclasses import dataclass
from pathlib import Path

from benchmarks.op_types import (
    BN_BWD,
    BN_FWD,
    CONV_BWD_FILTER,
    CONV_BWD_INPUT,
    CONV_FWD,
    LAYOUT,
    OPTIMIZER,
    OTHER,
    classify,
)


@dataclass(frozen=True)
class HloOp:
    """What an entry instruction of an XLA module runs and which TensorFlow op it came from."""

    opcode: str
    op_type: str = ""  # "" where XLA left no metadata
    op_name: str = ""
    layout: bool = False  # a copy or transpose that XLA added (no metadata)
    reducer: str = ""  # a metadata-less reduction's computation, named after its op
    feeds: tuple[str, ...] = ()  # the entry instructions that consume it


_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%([\w.-]+) = ")


def _split_instruction(rest: str) -> tuple[str, str, str]:
    """``shape opcode(operands), attributes`` -> (opcode, operands, attributes)."""
    depth, i = 0, 0
    while i < len(rest) and (depth or rest[i] != " "):  # the shape, a tuple maybe
        depth += rest[i] in "([{"
        depth -= rest[i] in ")]}"
        i += 1
    rest = rest[i + 1:]
    opcode, _, rest = rest.partition("(")
    depth, i = 1, 0
    while i < len(rest) and depth:
        depth += rest[i] == "("
        depth -= rest[i] == ")"
        i += 1
    return opcode, rest[:i - 1], rest[i:]


def _metadata(attributes: str) -> tuple[str, str]:
    block = re.search(r"metadata=\{([^}]*)\}", attributes)
    if not block:
        return "", ""
    op_type = re.search(r'op_type="([^"]*)"', block.group(1))
    op_name = re.search(r'op_name="([^"]*)"', block.group(1))
    return (op_type.group(1) if op_type else ""), (op_name.group(1) if op_name else "")


def parse_hlo(text: str) -> dict[str, HloOp]:
    """The entry instructions of an optimised HLO module (``*after_optimizations.txt``)."""
    computations: dict[str, list[tuple[str, str, str, str]]] = {}
    roots: dict[str, str] = {}
    entry, current = None, None
    for line in text.splitlines():
        header = re.match(r"^(ENTRY\s+)?%([\w.-]+) .*\{$", line)
        if header:
            current = header.group(2)
            computations[current] = []
            entry = current if header.group(1) else entry
            continue
        match = _INSTRUCTION.match(line)
        if match and current is not None:
            opcode, operands, attributes = _split_instruction(line[match.end():])
            computations[current].append((match.group(1), opcode, operands, attributes))
            if line.lstrip().startswith("ROOT"):
                roots[current] = match.group(1)
    if entry is None:
        return {}
    ops: dict[str, HloOp] = {}
    consumers: dict[str, list[str]] = {}
    for name, opcode, operands, attributes in computations[entry]:
        for operand in re.findall(r"%([\w.-]+)", operands):
            consumers.setdefault(operand, []).append(name)
        op_type, op_name = _metadata(attributes)
        layout = False
        body = [(name, opcode, operands, attributes)]
        called = re.search(r"calls=%([\w.-]+)", attributes)
        if not op_type and called and called.group(1) in computations:
            body = computations[called.group(1)]
            root = next((i for i in body if i[0] == roots.get(called.group(1))), None)
            layout = root is not None and root[1] in ("copy", "transpose")
            if not layout:
                op_type, op_name = next((m for m in (_metadata(i[3]) for i in body) if m[0]), ("", ""))
        elif not op_type:
            layout = opcode in ("copy", "transpose")
        reducer = ""
        if not op_type and not layout:  # e.g. the partial sums XLA splits a reduction into
            reducer = next((m.group(1) for m in (re.search(r"to_apply=%([\w.-]+)", i[3]) for i in body)
                            if m), "")
        ops[name] = HloOp(opcode, op_type, op_name, layout, reducer)
    return {name: dataclasses.replace(op, feeds=tuple(consumers.get(name, ()))) for name, op in ops.items()}


def classify_reducer(reducer: str, bn_layers: frozenset[str], optimizer: str) -> str:
    """The category of a reduction from the name of its computation: TensorFlow's op name
    with ``/`` turned into ``_`` (``m_1_stage1_unit1_1_bn1_1_moments_mean-reduction.3``)."""
    if any(re.search(rf"(^|_){re.escape(layer)}_\d+_", reducer) for layer in bn_layers):
        return BN_BWD if reducer.startswith("gradient_tape") else BN_FWD
    if reducer.lower().startswith(optimizer.lower() + "_"):
        return OPTIMIZER
    return OTHER


def read_hlo_dump(directory: Path) -> dict[str, dict[str, HloOp]]:
    """``{module name: parse_hlo(...)}`` for every optimised module under an XLA dump."""
    modules = {}
    for path in glob.glob(str(Path(directory) / "*after_optimizations.txt")):
        name = Path(path).name.split(".", 1)[1].rsplit(".", 2)[0]  # module_0756.NAME.cpu_after_...
        modules[name] = parse_hlo(Path(path).read_text())
    return modules


def classify_hlo(name: str, ops: dict[str, HloOp], bn_layers: frozenset[str], optimizer: str) -> str:
    """The category of one entry instruction: its TensorFlow op's, a metadata-less
    convolution's from XLA's naming of conv gradients, a layout copy's from the
    convolution it feeds."""
    op = ops.get(name)
    if op is None:
        return OTHER
    if op.op_type:
        return classify(op.op_type, op.op_name, bn_layers, optimizer)
    if op.opcode == "convolution":
        return (CONV_BWD_FILTER if "window-dilated" in name else
                CONV_BWD_INPUT if "base-dilated" in name else CONV_FWD)
    if op.layout:
        for consumer in op.feeds:
            target = ops.get(consumer)
            if target is not None and target.opcode == "convolution":
                return classify_hlo(consumer, ops, bn_layers, optimizer)
        return LAYOUT
    if op.reducer:
        return classify_reducer(op.reducer, bn_layers, optimizer)
    return OTHER
