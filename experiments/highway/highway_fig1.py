"""Highway Networks Fig. 1 from the kept records of its runs (``queue.sh`` and
``seeds_queue.sh`` here): training loss per epoch of plain and highway FC nets at each
depth, each family at its own best setting.

    python -m experiments.highway.highway_fig1 [--root experiments/highway/results] \
        [--out docs/figures] [--epochs 10]

Three kinds of run folder under ``ROOT`` count, all read from their ``fingerprint.json``
(a ``plainnet<depth>`` or ``highwayfc<depth>`` trained with ``highway_mnist_fc`` for
``--epochs`` epochs, He-initialised):

- the lr sweep (``queue.sh``): tanh units on the whole training split, two learning
  rates; highway runs with another b_T than the sweep's (-2) are follow-ups;
- the searches (``seeds_queue.sh`` section a): activation × lr with a tenth of the
  training split held out, whose pick ``<name>.search.json`` records;
- the seeded re-runs of a picked setting (``hwfig1s.*`` on the whole training split).

What each (family, depth) draws is its fairest evidence: its seeded runs where there are
any, else its search's pick, else the sweep's lowest training loss (for a highway net, a
follow-up b_T counts too: the paper searched b_T in [-10, -1]). So the plain nets at d = 50
and 100 are drawn at their own searched activation and lr, not at the tanh and learning
rates of the highway net's sweep, where they stay at chance. The paper prints no number for
Fig. 1 (its curves are the mean of the best runs of a 40-run search per depth), so the
figure carries its claim as text, not as a value. Writes ``highway_fig1.png`` (one panel
per depth, loss on a log scale) and ``highway_fig1.json`` (every run's best loss, its role
and whether it is drawn).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from experiments.tools.records import fingerprint, loss, rows

MODEL = re.compile(r"^(plainnet|highwayfc)(\d+)$")
RECIPE = "highway_mnist_fc"
MAIN_TRANSFORM_BIAS = -2
LABELS = {"plainnet": "plain (71 units, no BN)", "highwayfc": "highway (50 units)"}
COLORS = {"highwayfc": "tab:blue", "plainnet": "tab:orange"}
# HW §3.1 and Fig. 1, which print no value: what the figure is compared with.
PAPER_CLAIM = ("paper (HW §3.1, Fig. 1; MNIST, 40-run search per depth, no value printed): plain nets get "
               "much harder to optimise with depth, highway nets do not")
SEARCH = re.compile(r"^(?:hwfig1s\.)?(plainnet|highwayfc)(\d+)\.search\.json$")


def loss_curve(folder: Path) -> list[float]:
    """Training loss per logged epoch (NaN where the loss went NaN)."""
    return [loss(row) for row in rows(folder / "log.csv")]


def run_settings(recorded: dict, epochs: int) -> dict | None:
    """A Fig. 1 run's settings from its fingerprint: family, depth, lr, activation, b_T
    (None for a plain net), seed and held-out fraction (None: the whole training split);
    None when the run is not a Fig. 1 run (another model, recipe, epoch count or init)."""
    found = MODEL.match(str(recorded.get("model")))
    recipe = recorded.get("recipe") or {}
    model_args = recorded.get("model_args") or {}
    if (not found or recipe.get("name") != RECIPE or recorded.get("epochs") != epochs
            or recorded.get("lr") is None or model_args.get("kernel_initializer") != "he_normal"):
        return None
    family = found.group(1)
    bias = model_args.get("transform_bias") if family == "highwayfc" else None
    return {"family": family, "depth": int(found.group(2)), "lr": f"{recorded['lr']:g}",
            "activation": model_args.get("activation", "relu"),
            "transform_bias": None if bias is None else float(bias),
            "seed": recorded.get("seed", 0), "validation_split": recorded.get("validation_split")}


def fig1_run(recorded: dict, epochs: int) -> tuple[str, int, str, float | None] | None:
    """``(family, depth, lr, b_T)`` of a run of the lr sweep (tanh units, the whole
    training split) from its fingerprint (b_T None for a plain net), or None when the run
    is not one."""
    found = run_settings(recorded, epochs)
    if not found or found["validation_split"] is not None or found["activation"] != "tanh":
        return None
    return found["family"], found["depth"], found["lr"], found["transform_bias"]


# The seeded re-runs of seeds_queue.sh (one folder per seed of a picked setting) are the
# spread of the fair comparison, not points of the lr sweep this figure draws.
SEEDED_PREFIX = "hwfig1s."
# Re-runs of a sweep setting from independent initial weights per layer (the sweep's own
# runs started H and T of each highway layer from the same kernel): reported beside the
# sweep on the science page, never mixed into it.
REINIT_PREFIX = "reinit."


def collect_all(root: Path, epochs: int) -> tuple[dict, dict]:
    """``(runs, follow_ups)``: {(family, depth): {lr: curve}} of the main runs and
    {(family, depth): {(b_T, lr): curve}} of the highway runs with another b_T (the seeded
    re-runs, ``hwfig1s.*``, left out)."""
    runs: dict = {}
    follow_ups: dict = {}
    folders = sorted(path for path in root.iterdir()
                     if path.is_dir() and not path.name.startswith((SEEDED_PREFIX, REINIT_PREFIX))
                     ) if root.is_dir() else []
    for folder in folders:
        recorded = fingerprint(folder)
        found = fig1_run(recorded, epochs) if recorded else None
        curve = loss_curve(folder)
        if not found or not curve:
            continue
        family, depth, lr, bias = found
        if bias is None or bias == MAIN_TRANSFORM_BIAS:
            runs.setdefault((family, depth), {})[lr] = curve
        else:
            follow_ups.setdefault((family, depth), {})[(f"{bias:g}", lr)] = curve
    return runs, follow_ups


def best(curve: list[float]) -> float:
    finite = [x for x in curve if math.isfinite(x)]
    return min(finite) if finite else math.inf


def pick(runs: dict) -> dict:
    """{(family, depth): lr with the lowest best training loss}."""
    return {key: min(curves, key=lambda lr: (best(curves[lr]), float(lr)))
            for key, curves in runs.items()}


def collect_seeded(root: Path, epochs: int) -> dict:
    """{(family, depth): [(settings, curve), ...]} of the seeded re-runs (``hwfig1s.*``
    folders trained on the whole training split), in seed order."""
    found: dict = {}
    folders = sorted(root.glob(SEEDED_PREFIX + "*")) if root.is_dir() else []
    for folder in folders:
        recorded = fingerprint(folder) if folder.is_dir() else None
        settings = run_settings(recorded, epochs) if recorded else None
        curve = loss_curve(folder)
        if settings and settings["validation_split"] is None and curve:
            found.setdefault((settings["family"], settings["depth"]), []).append((settings, curve))
    return {key: sorted(runs, key=lambda run: run[0]["seed"]) for key, runs in found.items()}


def collect_searched(root: Path, epochs: int) -> dict:
    """{(family, depth): (settings, curve)} of each search's pick: the held-out run whose
    activation and lr are the ``best`` of ``<name>.search.json``."""
    picks = {}
    for path in sorted(root.glob("*.search.json")) if root.is_dir() else []:
        named = SEARCH.match(path.name)
        chosen = (json.loads(path.read_text()).get("best") or {}) if named else {}
        if not chosen:
            continue
        family, depth = named.group(1), int(named.group(2))
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            recorded = fingerprint(folder)
            settings = run_settings(recorded, epochs) if recorded else None
            if (settings and (settings["family"], settings["depth"]) == (family, depth)
                    and settings["validation_split"] is not None
                    and settings["activation"] == chosen.get("activation")
                    and settings["lr"] == f"{chosen.get('lr'):g}" and loss_curve(folder)):
                picks[(family, depth)] = (settings, loss_curve(folder))
                break
    return picks


def drawn(runs: dict, follow_ups: dict, seeded: dict, searched: dict) -> dict:
    """{(family, depth): (role, [(settings, curve), ...])}: the fairest evidence of each
    family at each depth (seeded re-runs, else the search's pick, else the sweep's lowest
    training loss, a highway follow-up b_T included)."""
    chosen = {}
    picks = pick(runs)
    for key in sorted(set(runs) | set(follow_ups) | set(seeded) | set(searched)):
        family, depth = key
        if key in seeded:
            chosen[key] = ("seeded", seeded[key])
        elif key in searched:
            chosen[key] = ("searched", [searched[key]])
        else:
            candidates = []
            if key in runs:
                lr = picks[key]
                candidates.append((best(runs[key][lr]), "sweep", lr, MAIN_TRANSFORM_BIAS, runs[key][lr]))
            for (bias, lr), curve in follow_ups.get(key, {}).items():
                candidates.append((best(curve), "follow_up", lr, float(bias), curve))
            _, role, lr, bias, curve = min(candidates, key=lambda c: c[0])
            settings = {"family": family, "depth": depth, "lr": lr, "activation": "tanh",
                        "transform_bias": float(bias) if family == "highwayfc" else None,
                        "seed": 0, "validation_split": None}
            chosen[key] = (role, [(settings, curve)])
    return chosen


def curve_label(role: str, found: list) -> str:
    settings = found[0][0]
    text = f"{LABELS[settings['family']]}, {settings['activation']}, lr {settings['lr']}"
    if settings["transform_bias"] is not None:
        text += f", b_T {settings['transform_bias']:g}"
    if role == "seeded":
        text += f", {len(found)} seeds"
    elif role == "searched":
        text += f",\nsearch pick ({1 - settings['validation_split']:.0%} of the training split)"
    return text


def plot(chosen: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    depths = sorted({depth for _, depth in chosen})
    columns = min(2, len(depths))
    rows_ = math.ceil(len(depths) / columns)
    fig, axes = plt.subplots(rows_, columns, figsize=(5.2 * columns, 3.8 * rows_), sharey=True,
                             squeeze=False)
    for ax in axes.flat[len(depths):]:
        ax.set_visible(False)
    for ax, depth in zip(axes.flat, depths):
        # The highway curve first and widest, so that a plain curve on top of it leaves it visible.
        for family, style, marker, width in (("highwayfc", "-", "s", 2.5), ("plainnet", "--", "o", 1.2)):
            if (family, depth) not in chosen:
                continue
            role, found = chosen[(family, depth)]
            for index, (_settings, curve) in enumerate(found):
                ax.plot(range(1, len(curve) + 1), curve, style, marker=marker, ms=3, lw=width,
                        color=COLORS[family], alpha=1.0 if len(found) == 1 else 0.7,
                        label=curve_label(role, found) if index == 0 else None)
        ax.set_yscale("log")
        ax.set_title(f"{depth} layers")
        ax.set_xlabel("epoch")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=7, loc="upper right")  # the curves fall from the upper left
    for row in axes:
        row[0].set_ylabel("training loss (cross-entropy)")
    fig.suptitle("Plain vs highway FC nets on Fashion-MNIST, 10 epochs, each family at its own best setting "
                 "(Highway Networks Fig. 1)\n" + PAPER_CLAIM.replace("): ", "):\n", 1), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def _row(settings: dict, curve: list[float], role: str, picked: bool, is_drawn: bool) -> dict:
    loss_ = best(curve)
    row = {"family": settings["family"], "depth": settings["depth"], "lr": settings["lr"]}
    if role != "sweep":
        row.update({"activation": settings["activation"], "transform_bias": settings["transform_bias"],
                    "seed": settings["seed"], "validation_split": settings["validation_split"]})
    row.update({"epochs": len(curve), "best_training_loss": loss_ if math.isfinite(loss_) else None,
                "picked": picked, "role": role, "drawn": is_drawn})
    if role == "follow_up":
        row["follow_up"] = True
    return row


def summarise(runs: dict, follow_ups: dict, seeded: dict, searched: dict, chosen: dict) -> list[dict]:
    """Every run's best training loss with its role (sweep, follow_up, searched, seeded),
    whether it is the sweep's pick and whether the figure draws it."""
    picks = pick(runs)
    drawn_curves = {id(curve) for _role, found in chosen.values() for _s, curve in found}
    summary = []
    for (family, depth), curves in sorted(runs.items()):
        for lr, curve in curves.items():
            settings = {"family": family, "depth": depth, "lr": lr}
            summary.append(_row(settings, curve, "sweep", picks[(family, depth)] == lr,
                                id(curve) in drawn_curves))
    for (family, depth), curves in sorted(follow_ups.items()):
        for (bias, lr), curve in curves.items():
            settings = {"family": family, "depth": depth, "lr": lr, "activation": "tanh",
                        "transform_bias": float(bias), "seed": 0, "validation_split": None}
            summary.append(_row(settings, curve, "follow_up", False, id(curve) in drawn_curves))
    for _key, (settings, curve) in sorted(searched.items()):
        summary.append(_row(settings, curve, "searched", False, id(curve) in drawn_curves))
    for _key, found in sorted(seeded.items()):
        for settings, curve in found:
            summary.append(_row(settings, curve, "seeded", False, id(curve) in drawn_curves))
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.highway.highway_fig1",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("experiments/highway/results"))
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    parser.add_argument("--epochs", type=int, default=10, help="the runs' epochs (default: %(default)s)")
    args = parser.parse_args(argv)
    runs, follow_ups = collect_all(args.root, args.epochs)
    if not runs:
        parser.error(f"no Fig. 1 run with a log.csv under {args.root}: run "
                     "experiments/highway/queue.sh first")
    seeded = collect_seeded(args.root, args.epochs)
    searched = collect_searched(args.root, args.epochs)
    chosen = drawn(runs, follow_ups, seeded, searched)
    args.out.mkdir(parents=True, exist_ok=True)
    plot(chosen, args.out / "highway_fig1.png")
    summary = summarise(runs, follow_ups, seeded, searched, chosen)
    (args.out / "highway_fig1.json").write_text(json.dumps(summary, indent=2) + "\n")
    for row in summary:
        setting = "".join(f" {key} {row[key]}" for key in ("activation", "transform_bias", "seed")
                          if row.get(key) is not None)
        print(f"{row['role']}: {row['family']}{row['depth']} lr {row['lr']}{setting}: best training "
              f"loss {row['best_training_loss']} over {row['epochs']} epochs"
              + (" (sweep pick)" if row["picked"] else "") + (" (drawn)" if row["drawn"] else ""))
    print(f"wrote {args.out / 'highway_fig1.png'} and {args.out / 'highway_fig1.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
