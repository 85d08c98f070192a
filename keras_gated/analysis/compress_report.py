"""The folder ``keras-gated compress`` writes: a Keras save of the compressed net that
``weights=DIR`` and ``keras.saving.load_model`` load, its card (accuracy, counted MACs,
measured latency and images/s against the source net, the blocks removed, the command),
``compression.json`` with every number, and ``tradeoff.png``."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import keras
import numpy as np

from keras_gated.analysis.compress import CompressionResult
from keras_gated.analysis.plots import _pyplot, _save
from keras_gated.analysis.removal import accuracy
from keras_gated.analysis import report  # the module: a replaced report.seconds_per_image is the one called
from keras_gated.files import portable_path, portable_record, portable_text
from keras_gated.flops import count_macs
from keras_gated.release.zoo_folder import save_zoo_folder

RECORD_FILE = "compression.json"
PLOT_FILE = "tradeoff.png"


def weight_id_for(arch: str, dataset: str) -> str:
    """``<arch>.<tag>``, the tag being the data set's name in lower case with every run of
    other characters than letters, digits and ``_`` made one ``_``."""
    tag = re.sub(r"[^a-z0-9_]+", "_", Path(dataset).name.lower()).strip("_")
    if not tag:
        raise ValueError(f"--dataset {dataset!r} gives no weight-id tag: rename its folder.")
    return f"{arch}.{tag}"


def measure(models: Sequence[keras.Model], x: np.ndarray, y: np.ndarray, *,
            timing_batch: int = 256, rounds: int = 5) -> list[dict[str, Any]]:
    """Test accuracy, counted MACs, parameters and measured inference time (medians of
    interleaved rounds of ``predict_on_batch``, ``report.seconds_per_image``) of each model."""
    seconds = report.seconds_per_image([report.timing_copy(m) for m in models],
                                       x[:timing_batch], rounds)
    return [{
        "accuracy": accuracy(model, x, y),
        "macs": int(count_macs(model)),
        "parameters": int(model.count_params()),
        "seconds_per_image": s,
        "images_per_second": 1.0 / s,
    } for model, s in zip(models, seconds)]


def plot_tradeoff(points: dict[str, dict], path: Path, title: str) -> Path:
    """Accuracy against counted MACs (left) and measured time per image (right)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, key, scale, label in ((axes[0], "macs", 1e-6, "counted MMACs per image (forward)"),
                                  (axes[1], "seconds_per_image", 1e3,
                                   "measured inference time per image (ms)")):
        for name, point in points.items():
            ax.plot(point[key] * scale, point["accuracy"], marker="o", linestyle="")
            ax.annotate(name, (point[key] * scale, point["accuracy"]), fontsize=7)
        ax.set_xlabel(label)
    axes[0].set_ylabel("test accuracy")
    fig.suptitle(title)
    return _save(fig, path)


def _table(points: dict[str, dict]) -> str:
    rows = ["| net | test accuracy | counted MMACs | parameters | ms / image | images / s |",
            "| --- | --- | --- | --- | --- | --- |"]
    rows += [f"| {name} | {p['accuracy']:.4f} | {p['macs'] / 1e6:.2f} | {p['parameters']:,} | "
             f"{p['seconds_per_image'] * 1e3:.3f} | {p['images_per_second']:.0f} |"
             for name, p in points.items()]
    return "\n".join(rows)


def _finetune_rate(record: dict[str, Any]) -> str:
    """The fine-tuning's starting rate, where it is not the pressure's."""
    rate = record.get("finetune_learning_rate", record["learning_rate"])
    return "" if rate == record["learning_rate"] else f" (the fine-tuning from {rate})"


def _distillation(record: dict[str, Any]) -> str:
    """The fine-tuning's teacher, where it had one."""
    taught = record.get("distillation")
    if not taught:
        return ""
    return (f", distilled from the source (α={taught['weight']} of the loss on its outputs at "
            f"temperature {taught['temperature']:g})")


def compression_recipe(record: dict[str, Any]) -> str:
    """The card's "Training recipe" of a compress run, from its record."""
    cosine = record.get("finetune_schedule") == "cosine"
    return (f"keras_gated.compress ({record['method']}): pressure λ={record['pressure']['strength']} "
            f"for {record['pressure']['epochs']} epochs, then {record['finetune_epochs']} epochs of "
            f"fine-tuning; SGD (momentum 0.9, Nesterov), learning rate {record['learning_rate']}"
            f"{_finetune_rate(record)}"
            f"{' decayed to 0 along a half cosine' if cosine else ''}{_distillation(record)}, "
            f"batch {record['batch_size']}, augmentation {'on' if record['augment'] else 'off'}, "
            f"seed {record['seed']}")


def compression_notes(record: dict[str, Any], points: dict[str, dict], source_weights: str, *,
                      timing_images: int | None, backend: str,
                      where: str = "the machine of the compress run") -> str:
    """The card's "Compression" note: the method, budget and blocks removed, and the
    measured table of the source, the pruned and the compressed net."""
    how = "gate pressure" if record["method"] == "pressure" else f"the baseline {record['method']}"
    budget = ", ".join(f"{k}={v}" for k, v in record["budget"].items())
    rounds = f"rounds of {timing_images} images" if timing_images else "rounds"
    return (f"### Compression\n\n`{source_weights}` compressed by {how} at {budget}: blocks "
            f"removed {', '.join(record['removed'])}; "
            f"{record['macs_after'] / record['macs_before']:.3f} of the source's counted MACs. "
            f"Inference times: medians of interleaved `predict_on_batch` {rounds} on "
            f"{where}, backend {backend}.\n\n{_table(points)}")


def write_compressed(result: CompressionResult, source: keras.Model, out: str | Path, *,
                     arch: str, dataset: str, test: tuple[np.ndarray, np.ndarray],
                     command: str, source_weights: str, class_names: Sequence[str] = (),
                     dataset_note: str = "", timing_batch: int = 256,
                     final: str | Path | None = None) -> dict[str, Any]:
    """Write ``out`` (the zoo-style folder of the compressed net) and return its numbers;
    ``final``: where the folder will be once moved into place (default ``out``), the path
    its card loads it from."""
    out = Path(out)
    given = [dataset] if Path(dataset).expanduser().exists() else []  # a local folder
    command, source_weights = portable_text(command, given), portable_text(source_weights, given)
    x, y = test
    record = result.record
    names = {"source": source, "removed, not fine-tuned": result.before_finetune,
             "compressed": result.model}
    points = dict(zip(names, measure(list(names.values()), x, y, timing_batch=timing_batch)))
    budget = ", ".join(f"{k}={v}" for k, v in record["budget"].items())
    weight_id = weight_id_for(arch, dataset)
    metrics = {
        "test_accuracy": points["compressed"]["accuracy"],
        "split": "test",
        "num_examples": int(len(x)),
        "model_args": {"removed_blocks": list(record["removed"])},
        "source_weights": source_weights,
        "source_test_accuracy": points["source"]["accuracy"],
        "method": record["method"],
        "budget": record["budget"],
    }
    timing_images = min(timing_batch, len(x))
    notes = (compression_notes(record, points, source_weights, timing_images=timing_images,
                               backend=keras.backend.backend())
             + f"\n\n`{RECORD_FILE}` holds every number, `{PLOT_FILE}` the trade-off.")
    folder = portable_path(final if final is not None else out)  # no local folder in the card
    usage = "\n".join([
        "import keras",
        "import keras_gated as kg  # registers the layers with Keras",
        "",
        f'folder = "{folder}"',
        "model = keras.saving.load_model(folder)",
        f'model = kg.create_model("{arch}", weights=folder)  # the same net, blocks removed',
        "probabilities = model.predict(images)",
    ])
    save_zoo_folder(result.model, out, weight_id=weight_id, metrics=metrics,
                    recipe=compression_recipe(record),
                    command=command, overwrite=True, usage=usage, notes=notes,
                    max_shard_bytes=None,  # a save folder keras.saving.load_model reads
                    class_names=list(class_names) or None,
                    dataset_note=portable_text(dataset_note or f"{dataset}, test split", given),
                    # the card's check command, for this folder rather than a released tag
                    check_command=shlex.join(["keras-gated", "evaluate", arch, "--weights", folder,
                                              "--dataset", portable_text(dataset, given)]))
    numbers = {"record": portable_record(record, given), "measured": points, "command": command,
               "backend": keras.backend.backend(), "timing_images": timing_images}
    (out / RECORD_FILE).write_text(json.dumps(numbers, indent=2) + "\n")
    plot_tradeoff(points, out / PLOT_FILE, f"{arch}: compressed at {budget} ({record['method']})")
    return numbers
