"""The zoo at a glance: markdown tables of the released and the planned checkpoints.

``keras-gated list --pretrained --markdown`` prints them; ``training.release --register``
writes them into the README between the ``<!-- zoo -->`` markers, and a test fails when
the README and the registered configs disagree. Every number comes from a config's
``metrics`` (what ``keras-gated evaluate`` reproduces).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from keras_gated.flops import ASSUMED_GPU
from keras_gated.weights.config import PretrainedCfg
from keras_gated.weights.planned import compute_estimate

BEGIN = "<!-- zoo (written by `python -m training.release --register`; do not edit) -->"
END = "<!-- zoo end -->"
PLANNED_INTRO = ("Planned: these need a GPU host. Asking for one raises an error with the exact "
                 "command; no stand-in weights are shipped.")

_BACKENDS = {"tensorflow": "TF", "jax": "JAX", "torch": "PyTorch"}


CAVEAT_MARK = " (caveat: see its card)"  # a PretrainedCfg with a caveat: e.g. did not converge


def accuracy_text(metrics: dict) -> str:
    """``"86.54 %"``, or ``"?"`` for a config without a measured accuracy."""
    accuracy = metrics.get("test_accuracy")
    return "?" if accuracy is None else f"{100 * accuracy:.2f} %"


def backend_label(metrics: dict) -> str:
    """``"TF"``, ``"JAX"``, ``"PyTorch"`` (or the name as recorded, ``"?"`` when missing)."""
    name = metrics.get("backend", "?")
    return _BACKENDS.get(name, name)


def wall_time_text(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{math.ceil(seconds / 60)} min"


def released_table(cfgs: Iterable[PretrainedCfg]) -> str:
    """One row per released weight: accuracy, data, budget and where it was trained."""
    rows = [
        "| weight id | test accuracy | data (test images) | recipe, epochs | trained with |",
        "| --- | --- | --- | --- | --- |",
    ]
    for cfg in sorted((c for c in cfgs if c.released), key=lambda c: (c.tag, c.weight_id)):
        m = cfg.metrics
        recipe = m.get("recipe", "?")
        rows.append(
            f"| `{cfg.weight_id}` | {accuracy_text(m)}{CAVEAT_MARK if cfg.caveat else ''} | {cfg.dataset} "
            f"({m.get('num_examples', 0):,}) | {recipe}, {m.get('epochs', '?')} | "
            f"{backend_label(m)} · {m.get('hardware', '?')} · {wall_time_text(m.get('wall_time_s'))} |"
        )
    return "\n".join(rows)


def planned_table(cfgs: Iterable[PretrainedCfg]) -> str:
    """One row per planned config: the paper's number and the estimated compute."""
    rows = [
        "| weight id | recipe, epochs | the paper's number | estimated training compute |",
        "| --- | --- | --- | --- |",
    ]
    for cfg in sorted(cfgs, key=lambda c: c.weight_id):
        plan, estimate = cfg.plan, compute_estimate(cfg)
        rows.append(
            f"| `{cfg.weight_id}` | {plan.recipe}, {plan.epochs} | {plan.expect} | "
            f"≈ {math.ceil(estimate.gpu_hours * 10) / 10} GPU-hours (estimate: "
            f"{estimate.forward_macs / 1e9:.2f} counted GMACs per image on an {ASSUMED_GPU}) |"
        )
    return "\n".join(rows)


def readme_block(cfgs: Iterable[PretrainedCfg]) -> str:
    """The README's zoo section: released table, then planned table, between markers."""
    cfgs = list(cfgs)
    planned = [c for c in cfgs if not c.released]
    return (f"{BEGIN}\n{released_table(cfgs)}\n\n{PLANNED_INTRO}\n\n{planned_table(planned)}"
            f"\n{END}")


def replace_readme_block(readme_text: str, cfgs: Iterable[PretrainedCfg]) -> str:
    """``readme_text`` with its zoo tables rewritten from ``cfgs``."""
    if BEGIN not in readme_text or END not in readme_text:
        raise ValueError(f"The README has no {BEGIN!r} ... {END!r} block to write the "
                         "zoo tables into; add the two marker lines.")
    start = readme_text.index(BEGIN)
    stop = readme_text.index(END, start) + len(END)
    return readme_text[:start] + readme_block(cfgs) + readme_text[stop:]
