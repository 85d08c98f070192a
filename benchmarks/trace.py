"""Where a training step's time goes: the op events of a TensorFlow profiler trace
(``*.xplane.pb``), grouped by op type (``benchmarks.op_types``).

Without XLA every TensorFlow kernel is one trace event named ``op_name:OpType``. With XLA
(``jit_compile=True``) the events are the compiled module's HLO instructions (stat
``hlo_op``), classified by what ``benchmarks.hlo`` reads from the optimised HLO.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path

from benchmarks.hlo import HloOp, classify_hlo
from benchmarks.op_types import CATEGORIES, CONV_CATEGORIES, OUTSIDE, classify

TF_OP_EVENT = re.compile(r"^([\w./-]+):(\w+)$")  # "scope/name:OpType"
STEP_EVENT = "multi_step_on_iterator"  # Keras's TensorFlow training step

# Ops that only call a function whose own ops are traced too: never counted themselves.
CALL_OPS = frozenset("StatefulPartitionedCall PartitionedCall XlaLaunch XlaLaunchV2 _XlaRun "
                     "_XlaCompile While StatelessWhile If StatelessIf".split())


@dataclass
class OpEvent:
    """One op execution: TensorFlow kernel or XLA instruction, times in picoseconds."""

    line: int
    name: str
    category: str
    kernel: bool  # a convolution's own kernel (not a layout copy of its operands)
    start: int
    end: int
    hlo: bool = False  # an XLA instruction (never nests in another)
    self_ps: int = 0  # the duration less that of ops nested in it on the same thread


def load_xspace(logdir: Path):
    """The newest ``*.xplane.pb`` under a ``tf.profiler`` log directory."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    paths = sorted(glob.glob(str(Path(logdir) / "**" / "*.xplane.pb"), recursive=True))
    if not paths:
        raise FileNotFoundError(f"No *.xplane.pb under {logdir}: the profiler wrote no trace.")
    space = xplane_pb2.XSpace()
    space.ParseFromString(Path(paths[-1]).read_bytes())
    return space


def _stat(plane, stat) -> str | int:
    for field in ("str_value", "int64_value", "uint64_value"):
        if stat.HasField(field):
            return getattr(stat, field)
    if stat.HasField("ref_value"):
        return plane.stat_metadata[stat.ref_value].name
    return ""


def _async_ends(plane, flow_stat) -> dict[int, int]:
    """XLA:CPU runs a thunk asynchronously (a convolution, a parallel loop) past the end of
    its trace event; it marks completion with an ``end: NAME`` event whose flow id (stat
    ``_c``) is the starting event's (stat ``_p``). ``{flow id: end time in ps}``."""
    ends: dict[int, int] = {}
    for line in plane.lines:
        base = line.timestamp_ns * 1000
        for event in line.events:
            if plane.event_metadata[event.metadata_id].name.startswith("end: "):
                for stat in event.stats:
                    if stat.metadata_id == flow_stat:
                        ends[_stat(plane, stat)] = base + event.offset_ps + event.duration_ps
    return ends


def collect(space, hlo_modules: dict[str, dict[str, HloOp]], bn_layers: frozenset[str],
            optimizer: str) -> tuple[list[OpEvent], list[tuple[int, int]]]:
    """The op events of the host plane (input-pipeline threads left out) and the
    ``(start, end)`` of every training step. An XLA instruction runs from its event's
    start to its ``end:`` event, if later."""
    plane = next(p for p in space.planes if p.name == "/host:CPU")
    stat_ids = {v.name: k for k, v in plane.stat_metadata.items()}
    hlo_stat, module_stat = stat_ids.get("hlo_op"), stat_ids.get("hlo_module")
    ends = _async_ends(plane, stat_ids.get("_c")) if hlo_stat is not None else {}
    events, steps = [], []
    for index, line in enumerate(plane.lines):
        if line.name.startswith("tf_data"):
            continue
        base = line.timestamp_ns * 1000
        for event in line.events:
            name = plane.event_metadata[event.metadata_id].name
            start = base + event.offset_ps
            end = start + event.duration_ps
            if name == STEP_EVENT:
                steps.append((start, end))
                continue
            stats = {s.metadata_id: s for s in event.stats}
            if hlo_stat in stats:
                hlo = str(_stat(plane, stats[hlo_stat]))
                module = str(_stat(plane, stats[module_stat])) if module_stat in stats else ""
                flow = _stat(plane, stats[stat_ids["_p"]]) if stat_ids.get("_p") in stats else None
                end = max(end, ends.get(flow, end))
                ops = hlo_modules.get(module, {})
                op = ops.get(hlo)
                events.append(OpEvent(index, hlo, classify_hlo(hlo, ops, bn_layers, optimizer),
                                      op is not None and op.opcode == "convolution", start, end,
                                      hlo=True))
                continue
            match = TF_OP_EVENT.match(name)
            if match and match.group(2) not in CALL_OPS:
                category = classify(match.group(2), match.group(1), bn_layers, optimizer)
                events.append(OpEvent(index, name, category, category in CONV_CATEGORIES, start, end))
    return events, steps


def _set_self_times(events: list[OpEvent]) -> None:
    by_line: dict[int, list[OpEvent]] = {}
    for event in events:
        event.self_ps = event.end - event.start
        if not event.hlo:  # asynchronous XLA instructions overlap without nesting
            by_line.setdefault(event.line, []).append(event)
    for line in by_line.values():
        stack: list[OpEvent] = []
        for event in sorted(line, key=lambda e: (e.start, -e.end)):
            while stack and stack[-1].end <= event.start:
                stack.pop()
            if stack:
                stack[-1].self_ps -= event.end - event.start
            stack.append(event)


def _wall_shares(events: list[OpEvent]) -> tuple[list[float], int]:
    """Each event's share of the wall time, every stretch of time split evenly between
    the ops running in it, and the time in which any op runs."""
    shares = [0.0] * len(events)
    boundaries = sorted([(e.start, 0, i) for i, e in enumerate(events)] +
                        [(e.end, 1, i) for i, e in enumerate(events)])
    active: set[int] = set()
    busy, previous = 0, None
    for time, is_end, index in boundaries:
        if active and time > previous:
            busy += time - previous
            for running in active:
                shares[running] += (time - previous) / len(active)
        previous = time
        if is_end:
            active.discard(index)
        else:
            active.add(index)
    return shares, busy


def breakdown(events: list[OpEvent], steps: list[tuple[int, int]], top: int = 12) -> dict:
    """Per category: op time per step (ms), and wall time per step (ms) and share of the
    steps' wall time (%).

    The steps' wall time (first step's start to last step's end) is split between the
    ops running at each moment, evenly where several run side by side on different
    threads, and ``outside ops`` (Python, dispatch, input, idle): the shares add up to
    100 %. ``concurrency``: op time over the time in which any op runs."""
    if not steps:
        raise ValueError(f"No {STEP_EVENT!r} event in the trace: no training step was profiled.")
    first, last = min(s for s, _ in steps), max(e for _, e in steps)
    inside = [e for e in events if e.start >= first and e.end <= last]
    _set_self_times(inside)
    shares, busy = _wall_shares(inside)
    window, count = last - first, len(steps)
    categories = {}
    for category in CATEGORIES[:-1]:
        members = [(e, share) for e, share in zip(inside, shares) if e.category == category]
        wall = sum(share for _, share in members)
        categories[category] = {
            "op_ms_per_step": sum(e.self_ps for e, _ in members) / count / 1e9,
            "kernel_ms_per_step": sum(e.self_ps for e, _ in members if e.kernel) / count / 1e9,
            "wall_ms_per_step": wall / count / 1e9,
            "kernel_wall_ms_per_step": sum(share for e, share in members if e.kernel) / count / 1e9,
            "percent": 100 * wall / window}
    categories[OUTSIDE] = {"op_ms_per_step": 0.0, "kernel_ms_per_step": 0.0,
                           "wall_ms_per_step": (window - busy) / count / 1e9,
                           "kernel_wall_ms_per_step": 0.0, "percent": 100 * (window - busy) / window}
    total_self = sum(e.self_ps for e in inside)
    per_op: dict[str, list] = {}
    for event in inside:
        entry = per_op.setdefault(event.name.replace("StatefulPartitionedCall/", ""), [event.category, 0])
        entry[1] += event.self_ps
    ranked = sorted(per_op.items(), key=lambda item: -item[1][1])[:top]
    return {"steps": count, "step_ms": window / count / 1e9, "concurrency": total_self / max(busy, 1),
            "categories": categories,
            "top_ops": [{"op": name, "category": cat, "ms_per_step": ps / count / 1e9}
                        for name, (cat, ps) in ranked]}
