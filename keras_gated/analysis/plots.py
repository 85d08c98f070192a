"""The papers' figures as PNG files (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Mapping
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


def plot_gate_values(values: Mapping[str, float], path: str | Path, title: str = "") -> Path:
    """k per block, in model order (Residual Gates Fig. 4 and 7)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(values)), 3.5))
    ax.bar(range(len(values)), list(values.values()), color="tab:blue")
    ax.set_xticks(range(len(values)), list(values), rotation=90, fontsize=7)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_ylabel("k")
    ax.set_title(title or "learned gate k per block")
    return _save(fig, path)


def plot_removal_curves(curves: Mapping[str, Mapping], path: str | Path, title: str = "") -> Path:
    """Accuracy vs number of removed blocks, one line per curve (Residual Gates Fig. 5)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, curve in curves.items():
        removed, acc, std = curve["removed"], curve["accuracy"], curve.get("std")
        ax.plot(removed, acc, marker="o", ms=3, label=label)
        if std and any(std):
            lower = [a - s for a, s in zip(acc, std)]
            upper = [a + s for a, s in zip(acc, std)]
            ax.fill_between(removed, lower, upper, alpha=0.2)
    ax.set_xlabel("blocks removed")
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title(title or "block removal")
    return _save(fig, path)


def plot_estimation_error(errors: Mapping[str, Mapping], path: str | Path, title: str = "") -> Path:
    """Greff et al. Fig. 3: per stage, the mean estimation error x_l − x_L of each block
    with its standard deviation over the data as a band (left), and the scale-free
    ‖x_l − x_L‖ / ‖x_L‖ (right)."""
    plt = _pyplot()
    fig, (signed, relative) = plt.subplots(1, 2, figsize=(10, 4))
    for stage, result in errors.items():
        blocks = range(1, len(result["per_block"]) + 1)
        if "signed_mean" in result:
            mean, std = np.asarray(result["signed_mean"]), np.asarray(result["signed_std"])
            line, = signed.plot(blocks, mean, marker="o", ms=3, label=stage)
            signed.fill_between(blocks, mean - std, mean + std, color=line.get_color(), alpha=0.15)
        relative.plot(blocks, result["per_block"], marker="o", ms=3, label=stage)
    signed.axhline(0.0, color="grey", lw=0.5)
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


def plot_prune_tradeoff(points: list[Mapping], path: str | Path, title: str = "") -> Path:
    """Accuracy of pruned models against their counted MACs (left; exact, any machine)
    and their measured inference time (right; this machine, under its load then)."""
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
    axes[0].set_ylabel("test accuracy")
    fig.suptitle(title or "pruning by lowest |g(k)|: cost vs accuracy (labels: blocks removed)")
    return _save(fig, path)
