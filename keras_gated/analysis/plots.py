"""The papers' figures as PNG files (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    _pyplot().close(fig)
    return path


# Reference values (a paper's numbers, given by the caller) are drawn in these styles, so
# that they stand apart from the measured curves.
_REFERENCE_COLORS = ("black", "tab:red", "tab:purple", "tab:brown")
_REFERENCE_MARKERS = ("*", "X", "P", "D")
_REFERENCE_LINES = ("-.", ":", (0, (5, 2)), (0, (1, 3)))

# Measured curves cycle through markers and line styles, and the first ones drawn are the
# widest, so that a curve that coincides with an earlier one leaves the earlier one visible.
_MARKERS = ("o", "s", "^", "v", "D", "x", "P")
_LINES = ("-", "--", "-.", ":")


def plot_gate_values(values: Mapping[str, float], path: str | Path, title: str = "",
                     reference: Mapping[str, float] | None = None,
                     marks: Mapping[str, Sequence[str]] | None = None) -> Path:
    """k per block, in model order (Residual Gates Fig. 4 and 7). ``reference``: label ->
    a value of k drawn as a horizontal line (e.g. a paper's mean k). ``marks``: label ->
    the blocks a paper singles out (e.g. Fig. 7's lowest k and its peak), each marked
    above its bar."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(values)), 3.5))
    names = list(values)
    ax.bar(range(len(values)), list(values.values()), color="tab:blue", label="learned k")
    ax.set_xticks(range(len(values)), names, rotation=90, fontsize=7)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    for index, (label, value) in enumerate((reference or {}).items()):
        ax.axhline(value, color=_REFERENCE_COLORS[index % 4], ls=_REFERENCE_LINES[index % 4], lw=1.5,
                   label=label)
    top = max([float(v) for v in values.values()] + [1.0])
    for index, (label, blocks) in enumerate((marks or {}).items()):
        where = [names.index(block) for block in blocks]
        ax.plot(where, [float(values[block]) + 0.06 * top for block in blocks], ls="none",
                marker=_REFERENCE_MARKERS[(index + 1) % 4], ms=9, color=_REFERENCE_COLORS[(index + 1) % 4],
                markeredgecolor="white", label=label)
    if marks:
        ax.set_ylim(top=1.3 * top)
    if reference or marks:
        ax.legend(fontsize=7, loc="upper left")
    ax.set_ylabel("k")
    ax.set_title(title or "learned gate k per block")
    return _save(fig, path)


def plot_removal_curves(curves: Mapping[str, Mapping], path: str | Path, title: str = "",
                        reference: Mapping[str, Mapping] | None = None) -> Path:
    """Accuracy vs number of removed blocks, one line per curve (Residual Gates Fig. 5),
    each with its own marker and line style. ``reference``: label -> {"removed": [...],
    "accuracy": [...]} drawn as unconnected points (e.g. a paper's numbers)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    count = len(curves)
    for index, (label, curve) in enumerate(curves.items()):
        removed, acc, std = curve["removed"], curve["accuracy"], curve.get("std")
        step = max(1, len(removed) // 12)  # long curves: a marker every few points, staggered
        line, = ax.plot(removed, acc, marker=_MARKERS[index % len(_MARKERS)], ls=_LINES[index % len(_LINES)],
                        ms=3 + (count - 1 - index), lw=1 + 0.5 * (count - 1 - index),
                        markevery=(index % step, step), label=label)
        if std and any(std):
            lower = [a - s for a, s in zip(acc, std)]
            upper = [a + s for a, s in zip(acc, std)]
            ax.fill_between(removed, lower, upper, color=line.get_color(), alpha=0.2)
    for index, (label, points) in enumerate((reference or {}).items()):
        ax.plot(points["removed"], points["accuracy"], ls="none", marker=_REFERENCE_MARKERS[index % 4],
                ms=10, color=_REFERENCE_COLORS[index % 4], markeredgecolor="white", label=label)
    ax.set_xlabel("blocks removed")
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title(title or "block removal")
    return _save(fig, path)


def plot_removal_relative(curves: Mapping[str, Mapping], path: str | Path, title: str = "",
                          reference: Mapping[str, Mapping] | None = None) -> Path:
    """Residual Gates Fig. 5 in two panels: test accuracy against blocks removed (left),
    and the fraction of each curve's unpruned accuracy it keeps (right), the scale on which
    a paper's numbers on another data set compare. ``reference``: label -> {"removed":
    [...], "kept": [...]} (fractions of the paper's own unpruned accuracy), drawn as
    unconnected points on the right panel only. The legend sits below both panels."""
    plt = _pyplot()
    fig, (absolute, relative) = plt.subplots(1, 2, figsize=(11, 4.2))
    count = len(curves)
    for index, (label, curve) in enumerate(curves.items()):
        removed, acc, std = curve["removed"], list(curve["accuracy"]), curve.get("std")
        start = acc[removed.index(0)] if 0 in removed else acc[0]
        step = max(1, len(removed) // 12)
        style = dict(marker=_MARKERS[index % len(_MARKERS)], ls=_LINES[index % len(_LINES)],
                     ms=3 + (count - 1 - index), lw=1 + 0.5 * (count - 1 - index),
                     markevery=(index % step, step))
        for ax, scale in ((absolute, 1.0), (relative, 1.0 / start)):
            line, = ax.plot(removed, [a * scale for a in acc], label=label if ax is absolute else None,
                            **style)
            if std and any(std):
                ax.fill_between(removed, [(a - s) * scale for a, s in zip(acc, std)],
                                [(a + s) * scale for a, s in zip(acc, std)], color=line.get_color(), alpha=0.2)
    for index, (label, points) in enumerate((reference or {}).items()):
        relative.plot(points["removed"], points["kept"], ls="none", marker=_REFERENCE_MARKERS[index % 4],
                      ms=10, color=_REFERENCE_COLORS[index % 4], markeredgecolor="white", label=label)
    absolute.set_ylabel("test accuracy")
    absolute.set_ylim(0, 1)
    relative.set_ylabel("fraction of the unpruned net's accuracy kept")
    relative.set_ylim(0, 1.1)
    relative.axhline(1.0, color="grey", lw=0.5)
    for ax in (absolute, relative):
        ax.set_xlabel("blocks removed")
    handles, labels = [], []
    for ax in (absolute, relative):
        h, l = ax.get_legend_handles_labels()
        handles += h
        labels += l
    fig.legend(handles, labels, fontsize=7.5, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2)
    fig.suptitle(title or "block removal")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")  # the legend below the panels stays whole
    plt.close(fig)
    return path


def plot_estimation_error(errors: Mapping[str, Mapping], path: str | Path, title: str = "",
                          reference: Mapping[str, float] | None = None) -> Path:
    """Greff et al. Fig. 3: per stage, the mean estimation error x_l − x_L of each block
    with its standard deviation over the data as a band (left), and the scale-free
    ‖x_l − x_L‖ / ‖x_L‖ (right). ``reference``: label -> a mean estimation error drawn
    as a horizontal line on the left (e.g. the paper's "close to zero")."""
    plt = _pyplot()
    fig, (signed, relative) = plt.subplots(1, 2, figsize=(10, 4))
    for index, (stage, result) in enumerate(errors.items()):
        blocks = range(1, len(result["per_block"]) + 1)
        style = dict(marker=_MARKERS[index % len(_MARKERS)], ls=_LINES[index % len(_LINES)], ms=4)
        if "signed_mean" in result:
            mean, std = np.asarray(result["signed_mean"]), np.asarray(result["signed_std"])
            line, = signed.plot(blocks, mean, label=stage, **style)
            signed.fill_between(blocks, mean - std, mean + std, color=line.get_color(), alpha=0.15)
        relative.plot(blocks, result["per_block"], label=stage, **style)
    signed.axhline(0.0, color="grey", lw=0.5)
    for index, (label, value) in enumerate((reference or {}).items()):
        signed.axhline(value, color=_REFERENCE_COLORS[index % 4], ls=_REFERENCE_LINES[index % 4], lw=1.5,
                       label=label)
    signed.set_ylabel("estimation error x_l − x_L: mean ± std over the data")
    relative.set_ylabel("‖x_l − x_L‖ / ‖x_L‖ (mean over the data)")
    for ax in (signed, relative):
        ax.set_xlabel("block within stage")
        ax.xaxis.get_major_locator().set_params(integer=True)  # blocks are counted
        ax.legend(fontsize=8)
    fig.suptitle(title or "estimation error per stage (Greff et al. 2017, Fig. 3)")
    return _save(fig, path)


def plot_highway_activity(activity: Mapping[str, Mapping], path: str | Path, title: str = "") -> Path:
    """Mean transform-gate activity per layer and the fraction of closed units (Highway Fig. 2)."""
    plt = _pyplot()
    names = list(activity)
    fig, ax = plt.subplots(figsize=(max(6, 0.4 * len(names)), 3.5))
    ax.plot(range(len(names)), [activity[n]["mean_t"] for n in names], marker="o", label="mean T(x)")
    ax.plot(range(len(names)), [activity[n]["closed_fraction"] for n in names], marker="s",
            label="fraction of units closed")
    ax.set_xticks(range(len(names)), names, rotation=90, fontsize=7)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title(title or "transform-gate activity")
    return _save(fig, path)


def plot_prune_tradeoff(points: list[Mapping], path: str | Path, title: str = "",
                        reference: Mapping[str, Mapping] | None = None) -> Path:
    """Accuracy of pruned models against their counted MACs (left; exact, any machine)
    and their measured inference time (right; this machine, under its load then).
    ``reference``: label -> {"macs": ...} and/or {"seconds_per_image": ...}, drawn as a
    vertical line on that panel (e.g. a paper's relative cost applied to the unpruned net)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    accuracies = [p["accuracy"] for p in points]
    for ax, xs, label in (
        (axes[0], [p["macs"] / 1e6 for p in points], "counted MMACs per image (forward)"),
        (axes[1], [p["seconds_per_image"] * 1e3 for p in points], "measured inference time per image (ms)"),
    ):
        ax.plot(xs, accuracies, marker="o")
        for p, x in zip(points, xs):
            ax.annotate(str(p["removed"]), (x, p["accuracy"]), fontsize=7)
        ax.set_xlabel(label)
    for index, (label, where) in enumerate((reference or {}).items()):
        for ax, key, scale in ((axes[0], "macs", 1e-6), (axes[1], "seconds_per_image", 1e3)):
            if key in where:
                ax.axvline(where[key] * scale, color=_REFERENCE_COLORS[index % 4],
                           ls=_REFERENCE_LINES[index % 4], lw=1.5, label=label)
                ax.legend(fontsize=7)
    axes[0].set_ylabel("test accuracy")
    fig.suptitle(title or "pruning by lowest |g(k)|: cost vs accuracy (labels: blocks removed)")
    return _save(fig, path)
