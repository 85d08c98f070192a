"""``keras-gated analyze``: every applicable analysis of one model on one data set, as
PNG plots and one JSON file of the numbers."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import keras
import numpy as np

from keras_gated import datasets
from keras_gated.analysis import plots
from keras_gated.analysis.highway_activity import highway_activity
from keras_gated.analysis.lesion import (
    estimation_error,
    lesion_accuracies,
    shuffle_accuracies,
    stages,
)
from keras_gated.analysis.removal import (
    accuracy,
    removal_curve,
    removal_order,
    single_removal_accuracies,
)
from keras_gated.files import new_output_folder, replaced_files
from keras_gated.flops import count_macs
from keras_gated.gating import gate_values
from keras_gated.layers.highway import Highway
from keras_gated.models.prune import as_gated, prune, removable_blocks
from keras_gated.progress import Bar


def load_examples(dataset: str, examples: int, split: str = "test", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``examples`` images (raw 0-255 float32) and labels of a data set split: all of it when
    it holds no more, else a random subset (``seed``), in split order. Splits may be stored
    sorted by class (the CIFAR-10 copy is), so the first N would cover a few classes only.
    Needs no TensorFlow (``keras_gated.datasets.load_numpy``)."""
    x, y, _ = datasets.load_numpy(dataset, split)
    return subset(x, y, examples, seed)


def subset(x: np.ndarray, y: np.ndarray, examples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``load_examples`` of arrays already loaded: all of them when there are no more
    than ``examples``, else a random subset (``seed``) in their order; images as float32."""
    if examples < len(x):
        chosen = np.sort(np.random.default_rng(seed).choice(len(x), examples, replace=False))
        x, y = x[chosen], y[chosen]
    return x.astype(np.float32), np.asarray(y)


def seconds_per_image(models: Sequence[keras.Model], x: np.ndarray, rounds: int = 5) -> list[float]:
    """Median wall time of ``predict_on_batch(x)``, per image, for each of ``models``:
    after one warm-up call each, ``rounds`` rounds that time every model once,
    interleaved, so that a load that comes and goes on the machine falls on all of them
    alike. ``predict_on_batch`` times the network: ``predict`` also builds its input
    pipeline on every call (about 0.1 s on one CPU core), which would hide what a pruned
    block saves."""
    for model in models:
        model.predict_on_batch(x)
    times: list[list[float]] = [[] for _ in models]
    for _ in range(rounds):
        for model, record in zip(models, times):
            start = time.perf_counter()
            model.predict_on_batch(x)
            record.append(time.perf_counter() - start)
    return [float(np.median(record)) / len(x) for record in times]


TIMING_AGREEMENT = 0.15  # two timings of nets of one architecture may differ by this fraction


def timed_alike(a: float, b: float) -> bool:
    """Whether two timings of nets of one architecture, taken in the same interleaved
    rounds, agree within ``TIMING_AGREEMENT``: a load that came and went during the rounds
    times them apart, and then no timing of those rounds is the nets' own."""
    return abs(a - b) <= TIMING_AGREEMENT * min(a, b)


def timing_copy(model: keras.Model) -> keras.Model:
    """A copy of ``model`` whose inference times follow its work: on TensorFlow, compiled
    without XLA (oneDNN kernels). Two XLA compilations of the same model timed 1.6x
    apart on one CPU core here, which would hide what a pruned block saves. Other backends keep their own path (JAX always compiles)."""
    copy = model.__class__.from_config(model.get_config())
    copy.set_weights(model.get_weights())
    if keras.backend.backend() == "tensorflow":
        copy.compile(jit_compile=False)
    return copy


def prune_tradeoff(model: keras.Model, x, y, *, timing_batch: int = 256,
                   rounds: int = 5) -> list[dict]:
    """Accuracy, counted MACs and measured speed of the model pruned by lowest |g(k)|,
    0..n blocks (``seconds_per_image``: medians of interleaved rounds, ``timing_copy``)."""
    order = removal_order(model, "gate")
    pruned = [prune(model, order[:count], name=f"{model.name}_minus{count}") if count else model
              for count in range(len(order) + 1)]
    seconds = seconds_per_image([timing_copy(m) for m in pruned], x[:timing_batch], rounds)
    return [{
        "removed": count,
        "blocks": order[:count],
        "accuracy": accuracy(smaller, x, y),
        "parameters": int(smaller.count_params()),
        "macs": int(count_macs(smaller)),
        "seconds_per_image": seconds[count],
    } for count, smaller in enumerate(pruned)]


# The plot ``analyze`` draws of each of its entries that has one.
PLOTS = {"gate_values": "gates.png", "removal_curves": "removal.png", "prune": "prune.png",
         "estimation_error": "estimation_error.png", "highway_activity": "highway_activity.png"}
# The files ``analyze`` writes: all it may replace in a folder (``overwrite``).
ANALYSIS_FILES = ("analysis.json", *PLOTS.values())


def analyze(model: keras.Model, x: np.ndarray, y: np.ndarray, out: str | Path, *,
            twin: keras.Model | None = None, seeds: Sequence[int] = (0, 1, 2),
            with_prune: bool = True, overwrite: bool = False) -> dict:
    """Run every analysis that applies to ``model`` on ``(x, y)``; write PNGs and
    ``analysis.json`` into ``out``; return the numbers. A progress bar
    (``keras_gated.progress``) counts the analyses.

    ``out`` is a new or empty folder outside the zoo, written beside and renamed into
    place whole (``keras_gated.files.new_output_folder``). With ``overwrite``, ``out`` may
    hold other files: only the analysis's own (``ANALYSIS_FILES``) are replaced, each
    renamed into place, and a link among them is refused
    (``keras_gated.files.replaced_files``)."""
    if overwrite:
        writing = replaced_files(out, ANALYSIS_FILES)
    else:
        writing = new_output_folder(out)
    with writing as staging:
        return _analyze(model, x, y, staging, twin=twin, seeds=seeds, with_prune=with_prune)


def _analyze(model: keras.Model, x: np.ndarray, y: np.ndarray, out: Path, *,
             twin: keras.Model | None, seeds: Sequence[int], with_prune: bool) -> dict:
    """``analyze``, written into the folder ``out`` of its own."""
    removable = bool(removable_blocks(model))
    staged = any(s != "all" and len(b) > 1 for s, b in stages(model).items())
    highway = any(isinstance(layer, Highway) and layer.transform_gate is not None for layer in model.layers)
    steps = (1 + removable * (4 + 4 * (twin is not None) + with_prune) + 3 * staged + highway)
    with Bar(steps, f"analyzing {model.name} on {len(x)} images", unit="analysis") as bar:
        result: dict = {"model": model.name, "examples": int(len(x)), "accuracy": accuracy(model, x, y)}
        bar.advance()
        values = gate_values(model)
        if values:
            result["gate_values"] = dict(values)
            plots.plot_gate_values(values, out / "gates.png", f"{model.name}: learned gates")
        if removable:
            result["single_removal"] = single_removal_accuracies(model, x, y)
            bar.advance()
            curves = {}
            for label, order in (("lowest |g(k)| first", "gate"), ("random", "random"),
                                 ("by position", "position")):
                curves[f"{model.name}, {label}"] = removal_curve(
                    model, x, y, order=order, **({"seeds": seeds} if order == "random" else {}))
                bar.advance()
            if twin is not None:
                twin_name = twin.name
                twin = as_gated(twin)  # once: its removal curves all use the same exact twin
                result["twin"] = {"model": twin_name, "accuracy": accuracy(twin, x, y)}
                bar.advance()
                curves[f"{twin_name}, random"] = removal_curve(twin, x, y, order="random", seeds=seeds)
                bar.advance()
                curves[f"{twin_name}, by position"] = removal_curve(twin, x, y, order="position")
                bar.advance()
                result["twin"]["single_removal"] = single_removal_accuracies(twin, x, y)
                bar.advance()
            result["removal_curves"] = curves
            plots.plot_removal_curves(curves, out / "removal.png", f"block removal, {len(x)} test images")
            if with_prune:
                result["prune"] = prune_tradeoff(model, x, y)
                plots.plot_prune_tradeoff(result["prune"], out / "prune.png")
                bar.advance()
        if staged:
            result["lesion"] = lesion_accuracies(model, x, y)
            bar.advance()
            result["shuffle"] = shuffle_accuracies(model, x, y, seeds=seeds)
            bar.advance()
            result["estimation_error"] = estimation_error(model, x)
            plots.plot_estimation_error(result["estimation_error"], out / "estimation_error.png")
            bar.advance()
        if highway:
            result["highway_activity"] = highway_activity(model, x)
            plots.plot_highway_activity(result["highway_activity"], out / "highway_activity.png")
            bar.advance()
    (out / "analysis.json").write_text(json.dumps(result, indent=2) + "\n")
    return result
