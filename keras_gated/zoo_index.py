"""The zoo at a glance: markdown tables of the released and the planned checkpoints.

``keras-gated list --pretrained --markdown`` prints them; ``training.release --register``
writes them into the README between the ``<!-- zoo -->`` markers, and
``tests/test_zoo_index.py`` fails when the README and ``pretrained_cfgs.py`` disagree.
Every number comes from a config's ``metrics`` (what ``keras-gated evaluate`` reproduces).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from keras_gated.flops import ASSUMED_GPU
from keras_gated.planned import PLANNED
from keras_gated.weights import PretrainedCfg

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


def _backend(metrics: dict) -> str:
    """``"TF"``, ``"JAX"``, ``"PyTorch"`` (or the name as recorded, ``"?"`` when missing)."""
    name = metrics.get("backend", "?")
    return _BACKENDS.get(name, name)


def _hours(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{math.ceil(seconds / 60)} min"


def released_table(cfgs: Iterable[PretrainedCfg]) -> str:
    """One row per released weight: accuracy, data, budget and where it was trained."""
    rows = [
        "| weight id | test accuracy | data (test images) | recipe, epochs | trained with |",
        "| --- | --- | --- | --- | --- |",
    ]
    for cfg in sorted(cfgs, key=lambda c: (c.tag, c.weight_id)):
        m = cfg.metrics
        recipe = cfg.recipe.split(" ", 1)[0] if cfg.recipe else "?"
        rows.append(
            f"| `{cfg.weight_id}` | {accuracy_text(m)}{CAVEAT_MARK if cfg.caveat else ''} | {cfg.dataset} "
            f"({m.get('num_examples', 0):,}) | {recipe}, {m.get('epochs', '?')} | "
            f"{_backend(m)} · {m.get('hardware', '?')} · {_hours(m.get('wall_time_s'))} |"
        )
    return "\n".join(rows)


TWIN_HEADING = "Twin comparison"


def check_twins(cfgs: Iterable[PretrainedCfg]) -> None:
    """Twins share data, recipe, epochs, backend and training command but for the model."""
    cfgs = list(cfgs)
    if len(cfgs) < 2 or len({c.weight_id for c in cfgs}) != len(cfgs):
        raise ValueError(f"Twins are two or more different weights, got {[c.weight_id for c in cfgs]}.")

    def setup(cfg: PretrainedCfg) -> tuple:
        command = cfg.command.replace(f"--model {cfg.arch} ", "--model MODEL ")
        return (cfg.tag, cfg.recipe, cfg.metrics.get("epochs"), cfg.metrics.get("backend"), command)

    first = setup(cfgs[0])
    for cfg in cfgs[1:]:
        if setup(cfg) != first:
            raise ValueError(
                f"{cfg.weight_id} and {cfgs[0].weight_id} are not twins: their data, recipe, "
                f"epochs, backend or command (seed included) differ: {setup(cfg)} vs {first}."
            )


def twin_note(cfgs: Iterable[PretrainedCfg]) -> str:
    """Markdown comparing twins: checkpoints trained with the same recipe, budget, seed
    and data that differ in one thing (e.g. gated vs ungated); ``check_twins`` first."""
    cfgs = list(cfgs)
    check_twins(cfgs)
    rows = ["| weight id | test accuracy | epochs | backend | wall time |",
            "| --- | --- | --- | --- | --- |"]
    for cfg in cfgs:
        m = cfg.metrics
        rows.append(f"| `{cfg.weight_id}` | {accuracy_text(m)} | "
                    f"{m.get('epochs', '?')} | {_backend(m)} | "
                    f"{_hours(m.get('wall_time_s'))} |")
    evaluate = " and ".join(f"`keras-gated evaluate {c.arch} --weights {c.tag} --dataset {c.tag}`"
                            for c in cfgs)
    return ("\n".join(rows) + "\n\nSame recipe, epoch budget, seed and data; one run each, "
            "so the run-to-run spread at this budget is not measured here (wall times depend "
            f"on what else shared the machine). Reproduce the accuracies with {evaluate}.")


def planned_table() -> str:
    """One row per planned checkpoint: the paper's number and the estimated compute."""
    rows = [
        "| weight id | recipe, epochs | the paper's number | estimated training compute |",
        "| --- | --- | --- | --- |",
    ]
    for weight_id, planned in sorted(PLANNED.items()):
        estimate = planned.compute_estimate()
        rows.append(
            f"| `{weight_id}` | {planned.recipe}, {planned.epochs} | {planned.expect} | "
            f"≈ {math.ceil(estimate.gpu_hours * 10) / 10} GPU-hours (estimate: "
            f"{estimate.forward_macs / 1e9:.2f} counted GMACs per image on an {ASSUMED_GPU}) |"
        )
    return "\n".join(rows)


def readme_block(cfgs: Iterable[PretrainedCfg]) -> str:
    """The README's zoo section: released table, then planned table, between markers."""
    return f"{BEGIN}\n{released_table(cfgs)}\n\n{PLANNED_INTRO}\n\n{planned_table()}\n{END}"


def replace_readme_block(readme_text: str, cfgs: Iterable[PretrainedCfg]) -> str:
    """``readme_text`` with its zoo tables rewritten from ``cfgs``."""
    if BEGIN not in readme_text or END not in readme_text:
        raise ValueError(f"The README has no {BEGIN!r} ... {END!r} block to write the "
                         "zoo tables into; add the two marker lines.")
    start = readme_text.index(BEGIN)
    stop = readme_text.index(END, start) + len(END)
    return readme_text[:start] + readme_block(cfgs) + readme_text[stop:]
