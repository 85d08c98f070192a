"""Zoo folders and model cards: the files a released weight is published as.

A *zoo folder* ``zoo/<weight id>/`` holds exactly the files that go to the Hub repo
``keras-gated/<weight id>``:

* ``config.json``, ``metadata.json``, ``model.weights.h5``: Keras's own unzipped save
  format, so ``keras.saving.load_model("hf://keras-gated/<weight id>")`` works on the
  repo (after ``import keras_gated``, which registers the layers for ``safe_mode``);
* ``README.md``: the model card (front matter parsed by huggingface_hub's ``ModelCard``:
  ``library_name: keras``, ``license``, ``tags``, ``datasets``, ``model-index`` with the
  measured accuracy; body: usage, recipe, the reproducing command, data caveats);
* ``metrics.json``: ``{"test_accuracy": 0.9123, "split": "test", "num_examples": 10000,
  "dataset": "...", "command": "..."}`` (accuracy as a fraction);
* ``training_log.<ext>``: the training log (e.g. Keras ``CSVLogger`` output), if any.

A release whose weights exceed ``MAX_SHARD_BYTES`` (45 MB) keeps them as Keras sharded
weights instead of ``model.weights.h5``: the index ``model.weights.json`` and the shards
``model_00000.weights.h5``, ... of at most 45 MB each, every one pinned by its own sha256
(``keras_gated.weights.shards``). Keras's ``load_model`` reads only one-file folders, so
such a folder is loaded with ``load_folder_model`` or ``weights=`` (and has no keras-hub
preset: ``python -m keras_gated.keras_hub WEIGHT_ID OUT_DIR`` writes one).

``python -m training.release RUN --register`` writes the folder with ``save_zoo_folder``,
reads its config back with ``pretrained_cfg_from_folder`` and stores it in the family's
data file (``keras_gated.weights.registered.write_cfg``); ``keras_gated.release.hub.
publish`` uploads it.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import keras

from keras_gated.datasets import CLASS_NAMES
from keras_gated.files import check_not_linked
from keras_gated.flops import count_macs
from keras_gated.release.citations import bibtex
from keras_gated.weights.config import (
    HUB_ORG,
    LISTING_METRICS,
    METRICS_FILE,
    WEIGHTS_FILE,
    PretrainedCfg,
    is_weight_id,
)
from keras_gated.weights.shards import (
    MAX_SHARD_BYTES,
    SHARD_INDEX,
    save_sharded,
    shard_names,
)
from keras_gated.weights.sources import CARD_FILE, read_saved_config, sha256_of

KERAS_FILES = ("config.json", "metadata.json", WEIGHTS_FILE)
LOG_STEM = "training_log"
LOG_SUFFIXES = (".csv", ".txt")
REQUIRED_FILES = (*KERAS_FILES, CARD_FILE, METRICS_FILE)
# A sharded release: the index in place of the weight file, and the shards it lists.
SHARDED_REQUIRED_FILES = (*(f for f in REQUIRED_FILES if f != WEIGHTS_FILE), SHARD_INDEX)
KERAS_HUB_PRESET = "keras_hub/"  # optional: the release as a keras-hub preset
# Every file a release may hold besides REQUIRED_FILES: the training log, the
# keras-hub preset (what ``save_to_preset`` writes for a backbone or a classifier), and
# a compressed net's numbers and trade-off plot (``keras_gated.analysis.compress_report``).
OPTIONAL_FILES = (
    *(f"{LOG_STEM}{suffix}" for suffix in LOG_SUFFIXES),
    "compression.json", "tradeoff.png",
    *(f"{KERAS_HUB_PRESET}{name}" for name in (
        "config.json", "metadata.json", "model.weights.h5", "task.json", "task.weights.h5",
    )),
)
RELEASE_FILES = (*REQUIRED_FILES, *OPTIONAL_FILES)
CARD_KEY = "keras_gated"  # front-matter block with what a PretrainedCfg needs

DATASET_NAMES = {
    "cifar10": "CIFAR-10",
    "cifar100": "CIFAR-100",
    "mnist": "MNIST",
    "fashion_mnist": "Fashion-MNIST",
    "imagenet2012": "ImageNet-1k",
}


# ------------------------------------------------------------------------- zoo folders


def describe_preprocessing(model: keras.Model) -> str:
    """What the model's in-model ``preprocessing`` layer does to raw 0-255 pixels."""
    try:
        layer = model.get_layer("preprocessing")
    except ValueError:
        return "none in the model: it expects already normalised inputs"
    config = layer.get_config()
    if isinstance(layer, keras.layers.Normalization):
        mean = tuple(round(float(m), 4) for m in config["mean"])
        std = tuple(round(math.sqrt(float(v)), 4) for v in config["variance"])
        return f"in-model (x - mean) / std on 0-255 pixels, mean={mean}, std={std}"
    if isinstance(layer, keras.layers.Rescaling):
        return f"in-model x * {config['scale']} on 0-255 pixels"
    return f"in-model {type(layer).__name__}"


def _check_metrics(metrics: Mapping[str, Any]) -> None:
    accuracy = metrics.get("test_accuracy")
    if (
        isinstance(accuracy, bool)
        or not isinstance(accuracy, (int, float))
        or not 0 <= accuracy <= 1
    ):
        raise ValueError(
            f"metrics['test_accuracy'] must be a fraction in [0, 1] (0.9123, not 91.23), "
            f"got {accuracy!r}."
        )
    if not isinstance(metrics.get("split"), str) or not metrics["split"]:
        raise ValueError(
            f"metrics['split'] must name the evaluated split, got {metrics.get('split')!r}."
        )
    count = metrics.get("num_examples")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"metrics['num_examples'] must be a positive integer, got {count!r}.")


def _card_data(*, weight_id: str, metrics: Mapping[str, Any], recipe: str, license: str,
               input_shape: Sequence[int | None], classes: int, class_names: Sequence[str],
               preprocessing: str, input_adaptation: str | None,
               extra: Mapping[str, Any] | None):
    """The card's front matter: the Hub's fields (with the evaluation result) and ours."""
    from huggingface_hub import EvalResult, ModelCardData  # on first use: it reads HF_* at import

    arch, _, tag = weight_id.partition(".")
    fields: dict[str, Any] = {
        "library_name": "keras",
        "license": license,
        "tags": ["keras-gated", "image-classification", arch],
        "datasets": [tag],
        "pipeline_tag": "image-classification",
        "model_name": weight_id,
        "eval_results": [
            EvalResult(
                task_type="image-classification",
                task_name="Image Classification",
                dataset_type=tag,
                dataset_name=DATASET_NAMES.get(tag, tag),
                dataset_split=metrics["split"],
                metric_type="accuracy",
                metric_name=f"{metrics['split'].capitalize()} accuracy",
                metric_value=float(metrics["test_accuracy"]),
            )
        ],
        CARD_KEY: {
            "weight_id": weight_id,
            "recipe": recipe,
            "input_shape": [int(s) if s is not None else None for s in input_shape],
            "classes": int(classes),
            "class_names": list(class_names),
            "preprocessing": preprocessing,
            **({"input_adaptation": input_adaptation} if input_adaptation else {}),
        },
    }
    fields.update(extra or {})
    return ModelCardData(**fields)


def _registered_usage(weight_id: str, sharded: bool) -> str:
    """The card's "Usage" lines for a registered release (sharded or one file)."""
    arch, _, tag = weight_id.partition(".")
    if sharded:
        return f"""import keras_gated as kg

model = kg.create_model("{weight_id}")      # the released shards, each sha256-checked
backbone = kg.create_model("{arch}", weights="{tag}", include_top=False, pooling="avg")

# A downloaded copy of this repo (e.g. `keras-gated pull {weight_id}`) loads by its path:
model = kg.release.load_folder_model(folder)"""
    return f"""import keras_gated as kg

model = kg.create_model("{weight_id}")      # the released weights, sha256-checked
backbone = kg.create_model("{arch}", weights="{tag}", include_top=False, pooling="avg")

# Keras alone can load this repo too; `import keras_gated` registers the layers:
import keras
model = keras.saving.load_model("hf://{HUB_ORG}/{weight_id}")"""


def model_card(
    *,
    weight_id: str,
    metrics: Mapping[str, Any],
    recipe: str,
    command: str,
    dataset_note: str,
    license: str,
    input_shape: Sequence[int | None],
    classes: int,
    class_names: Sequence[str],
    preprocessing: str,
    extra: Mapping[str, Any] | None = None,
    notes: str = "",
    params: int | None = None,
    macs: int | None = None,
    usage: str | None = None,
    input_adaptation: str | None = None,
    sharded: bool = False,
    check_command: str | None = None,
) -> str:
    """The README.md model card of a zoo folder (front matter + markdown body); ``sharded``:
    its weights are a shard index and shards (``keras_gated.weights.shards``).

    ``params`` and ``macs`` (multiply-accumulates of one forward pass) become the card's
    "Model size" section; the "Citation" section holds the BibTeX of the papers behind
    the architecture (``keras_gated.release.citations``).

    ``metrics`` entries ``epochs``, ``backend``, ``strategy``, ``hardware``,
    ``wall_time_s`` and ``keras_version`` (written by ``training.train``) become the
    card's "Training run" section; ``notes`` (markdown) its "Notes" section, e.g. the
    comparison with the paper's number.

    ``usage``: the Python lines of the card's "Usage" section; default the lines for a
    registered release (``kg.create_model("<weight id>")`` and its Hub repo), which a
    weight that is not registered (a user's fine-tuned folder) must replace with lines
    that work for it. ``input_adaptation``: how images of the data set were brought to
    the model's input (e.g. tiled to 3 channels and centre-padded), recorded in the front
    matter and said under the inputs. ``check_command``: the command that measures the
    accuracy again, default ``keras-gated evaluate <arch> --weights <tag> --dataset <tag>``
    of a registered release (a folder that is not one names itself and its data).
    """
    arch, _, tag = weight_id.partition(".")
    accuracy = float(metrics["test_accuracy"])
    data = _card_data(weight_id=weight_id, metrics=metrics, recipe=recipe, license=license,
                      input_shape=input_shape, classes=classes, class_names=class_names,
                      preprocessing=preprocessing, input_adaptation=input_adaptation,
                      extra=extra)
    if usage is None:
        usage = _registered_usage(weight_id, sharded)
    notes_section = f"\n## Notes\n\n{notes.strip()}\n" if notes.strip() else ""
    body = (
        _card_intro(weight_id, metrics, accuracy, usage)
        + _inputs_paragraph(input_shape, preprocessing, input_adaptation, class_names, classes)
        + size_section(params, macs)
        + _recipe_section(recipe, command)
        + _run_details(metrics)
        + _evaluation_section(metrics, accuracy,
                              check_command or f"keras-gated evaluate {arch} --weights {tag} "
                                               f"--dataset {tag}")
        + f"{notes_section}\n## Data caveats\n\n{dataset_note}\n\n"
        + citation_section(arch)
        + _files_section(sharded)
    )
    return f"---\n{data.to_yaml()}\n---\n{body}"


def _card_intro(weight_id: str, metrics: Mapping[str, Any], accuracy: float, usage: str) -> str:
    """The card's title, its one-line summary and its "Usage" section."""
    arch, _, tag = weight_id.partition(".")
    dataset_name = DATASET_NAMES.get(tag, tag)
    return f"""
# {weight_id}

`{arch}` from keras-gated (gated deep networks for Keras 3), trained on {dataset_name}:
**{accuracy:.2%}** {metrics["split"]} accuracy on {metrics["num_examples"]:,} images.

## Usage

```python
{usage.strip()}
```

"""


def _inputs_paragraph(input_shape: Sequence[int | None], preprocessing: str,
                      input_adaptation: str | None, class_names: Sequence[str],
                      classes: int) -> str:
    """What the model takes (raw pixels of its input shape) and its classes."""
    shape = "×".join(str(s) for s in input_shape)
    adaptation_line = (f" The training images were adapted to this input: {input_adaptation}."
                       if input_adaptation else "")
    return f"""Inputs are raw 0-255 pixels of shape {shape}; the preprocessing travels with the model
({preprocessing}).{adaptation_line} Classes: {", ".join(class_names) if class_names else classes}.

"""


def _recipe_section(recipe: str, command: str) -> str:
    """The "Training recipe" section: the recipe and the command that reproduces it."""
    return f"""## Training recipe

{recipe}

Reproduce it with:

```bash
{command}
```

"""


def _evaluation_section(metrics: Mapping[str, Any], accuracy: float, check_command: str) -> str:
    """The "Evaluation" section: the measured accuracy and the command that checks it."""
    return f"""## Evaluation

`metrics.json`: test accuracy {accuracy:.4f} on the {metrics["split"]} split
({metrics["num_examples"]:,} examples), measured by the training command on the final
(last-epoch) model. Check it with:

```bash
{check_command}
```
"""


def _files_section(sharded: bool) -> str:
    """The "Files" section: what the folder holds (one weights file, or shards)."""
    weight_files = (
        f"`{SHARD_INDEX}` and its shards `model_00000.weights.h5`, ... (Keras sharded "
        f"weights, at most {MAX_SHARD_BYTES // 1_000_000} MB each; Keras's `load_model` reads "
        "one-file folders only, so load this one with keras-gated)"
        if sharded else f"`{WEIGHTS_FILE}` (Keras save format)"
    )
    return f"""## Files

`config.json`, `metadata.json`, {weight_files}, this card,
`metrics.json` and the training log.
"""


SIZE_HEADING = "Model size"
CITATION_HEADING = "Citation"


def size_section(params: int | None, macs: int | None) -> str:
    """The card's "Model size" section (empty when nothing was counted)."""
    if params is None and macs is None:
        return ""
    rows = []
    if params is not None:
        rows.append(f"| parameters | {params:,} |")
    if macs is not None:
        rows.append(f"| GMACs per image (forward) | {macs / 1e9:.3f} |")
    return (f"## {SIZE_HEADING}\n\n| | |\n| --- | --- |\n" + "\n".join(rows)
            + "\n\nMACs counted layer by layer with `keras_gated.flops.count_macs` at the "
            "input shape above.\n\n")


def citation_section(arch: str) -> str:
    """The card's "Citation" section: BibTeX of the papers behind ``arch``."""
    entries = bibtex(arch)
    return f"## {CITATION_HEADING}\n\n```bibtex\n{entries}\n```\n\n" if entries else ""


def set_card_section(card_text: str, heading: str, section: str, before: str) -> str:
    """``card_text`` with its level-2 section ``heading`` replaced by ``section`` (the
    whole section text, heading included), or inserted before the level-2 heading
    ``before`` when it has none."""
    found = re.search(rf"(?m)^## {re.escape(heading)}\n", card_text)
    if found:
        following = re.compile(r"(?m)^## ").search(card_text, found.end())
        stop = following.start() if following else len(card_text)
        return card_text[:found.start()] + section + card_text[stop:]
    anchor = re.search(rf"(?m)^## {re.escape(before)}$", card_text)
    if anchor is None:
        raise ValueError(f"The card has no '## {before}' section to insert '{heading}' before.")
    return card_text[:anchor.start()] + section + card_text[anchor.start():]


def refresh_card_facts(folder: str | os.PathLike) -> None:
    """Write the "Model size" (counted from the folder's model) and "Citation" sections
    into a zoo folder's card; the weights and their sha256 pin are untouched."""
    folder = Path(folder)
    card_path = folder / CARD_FILE
    if not card_path.is_file():
        raise ValueError(f"{folder} has no model card ({CARD_FILE}): not a zoo folder.")
    from huggingface_hub import ModelCard  # on first use: it reads HF_* at import

    info = ModelCard.load(card_path).data.to_dict().get(CARD_KEY) or {}
    arch = str(info.get("weight_id", folder.name)).partition(".")[0]
    model = load_folder_model(folder)
    text = card_path.read_text()
    text = set_card_section(text, SIZE_HEADING, size_section(model.count_params(),
                                                             count_macs(model)), "Training recipe")
    text = set_card_section(text, CITATION_HEADING, citation_section(arch), "Files")
    card_path.write_text(text)


def _without_training_state(model: keras.Model) -> keras.Model:
    """The model without optimizer or compile state: a compiled model's save folder would
    also hold the optimizer's variables in model.weights.h5 (and pin them in its hash)."""
    if getattr(model, "optimizer", None) is None and not getattr(model, "compiled", False):
        return model
    clone = model.__class__.from_config(model.get_config())
    clone.set_weights(model.get_weights())
    return clone


_RUN_FIELDS = (
    ("epochs", "epochs"),
    ("backend", "Keras backend"),
    ("strategy", "distribution strategy"),
    ("hardware", "hardware"),
    ("wall_time_s", "wall time"),
    ("keras_version", "Keras"),
)


def _run_details(metrics: Mapping[str, Any]) -> str:
    """The "Training run" section from the run entries of metrics.json (may be empty)."""
    rows = []
    for key, label in _RUN_FIELDS:
        if key in metrics:
            value = metrics[key]
            if key == "wall_time_s":
                value = f"{float(value) / 3600:.2f} h ({float(value):,.0f} s)"
            rows.append(f"| {label} | {value} |")
    if not rows:
        return ""
    return "## Training run\n\n| | |\n| --- | --- |\n" + "\n".join(rows) + "\n\n"


def save_zoo_folder(
    model: keras.Model,
    folder: str | os.PathLike,
    *,
    weight_id: str,
    metrics: Mapping[str, Any],
    recipe: str,
    command: str,
    dataset_note: str,
    training_log: str | os.PathLike | None = None,
    license: str = "apache-2.0",
    class_names: Sequence[str] | None = None,
    extra: Mapping[str, Any] | None = None,
    notes: str = "",
    overwrite: bool = False,
    usage: str | None = None,
    input_adaptation: str | None = None,
    max_shard_bytes: int | None = MAX_SHARD_BYTES,
    check_command: str | None = None,
) -> Path:
    """Write ``folder`` with exactly the files that go to the Hub repo of ``weight_id``.

    Args:
        model: a trained classifier with the applications head (``predictions``).
        folder: usually ``zoo/<weight id>``; must be new or empty unless ``overwrite``.
        weight_id: ``name.tag`` (``"gresnet20.cifar10"``).
        metrics: ``{"test_accuracy": 0.9123, "split": "test", "num_examples": 10000}``,
            accuracy as a fraction, measured on real held-out data; other entries are
            kept in metrics.json.
        recipe: the training recipe (name and a short description), for the card.
        command: the command line that reproduces the weights.
        dataset_note: the data and its caveats (source, split, preprocessing, known
            issues); it becomes metrics.json's ``dataset`` and the card's caveats.
        training_log: a log file (e.g. the ``CSVLogger`` CSV), copied as
            ``training_log<suffix>``.
        license: an SPDX-like Hub license id.
        class_names: one per class; default the known names of the weight id's tag.
        extra: additional model-card front-matter entries.
        notes: markdown for the card's "Notes" section (e.g. the paper comparison).
        overwrite: replace an existing non-empty folder.
        usage, input_adaptation, check_command: as ``model_card``'s (a weight that is
            not registered needs its own usage lines and check command).
        max_shard_bytes: weights larger than this are saved as shards of at most this
            size (``model.weights.json`` + ``model_00000.weights.h5``, ...); None: one
            ``model.weights.h5`` of any size, a folder ``keras.saving.load_model`` reads
            (a user's own output, not a release).

    Returns:
        The folder.
    """
    if not is_weight_id(weight_id):
        raise ValueError(f"`weight_id` must be `name.tag` in lower case, got {weight_id!r}.")
    _check_metrics(metrics)
    classes, class_names = _released_classes(model, weight_id, class_names)
    if training_log is not None:
        _check_training_log(training_log)
    folder = _empty_folder(Path(folder), overwrite)
    sharded = _save_model(model, folder, class_names, max_shard_bytes)
    full_metrics = {**metrics, "dataset": dataset_note, "command": command}
    (folder / METRICS_FILE).write_text(json.dumps(full_metrics, indent=2) + "\n")
    card = model_card(
        weight_id=weight_id, metrics=full_metrics, recipe=recipe, command=command,
        dataset_note=dataset_note, license=license, input_shape=tuple(model.input_shape[1:]),
        classes=classes, class_names=tuple(class_names),
        preprocessing=describe_preprocessing(model), extra=extra, notes=notes,
        params=model.count_params(), macs=count_macs(model), usage=usage,
        input_adaptation=input_adaptation, sharded=sharded, check_command=check_command,
    )
    (folder / CARD_FILE).write_text(card)
    if training_log is not None:
        shutil.copyfile(training_log, folder / f"{LOG_STEM}{Path(training_log).suffix}")
    return folder


def _released_classes(model: keras.Model, weight_id: str,
                      class_names: Sequence[str] | None) -> tuple[int, Sequence[str]]:
    """The class count of ``model``'s head and its class names (default: the known names
    of the weight id's tag); refused unless it is a full classifier with one name a class."""
    try:
        head = model.get_layer("predictions")
    except ValueError:
        raise ValueError(
            "Only full classifiers (include_top=True, with a 'predictions' head) are "
            "released to the zoo."
        ) from None
    classes = int(head.units)
    tag = weight_id.partition(".")[2]
    if class_names is None:
        class_names = CLASS_NAMES.get(tag, ())
    if class_names and len(class_names) != classes:
        raise ValueError(f"{len(class_names)} class names for a {classes}-class model.")
    return classes, class_names


def _check_training_log(training_log: str | os.PathLike) -> None:
    """Refuse a training log that is a link, not a file, or not a log the zoo keeps."""
    check_not_linked(training_log, "The training log")  # copied: never through a link
    if not Path(training_log).is_file():
        raise ValueError(f"`training_log`={os.fspath(training_log)!r} is not a file.")
    if Path(training_log).suffix not in LOG_SUFFIXES:
        raise ValueError(
            f"`training_log`={os.fspath(training_log)!r} must end in one of {LOG_SUFFIXES}: "
            "pass the run's log.csv."
        )


def _empty_folder(folder: Path, overwrite: bool) -> Path:
    """``folder``, created, or emptied where ``overwrite`` allows (else refused)."""
    if folder.exists() and any(folder.iterdir()):
        if not overwrite:
            raise ValueError(f"{folder} is not empty; pass overwrite=True to replace it.")
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _save_model(model: keras.Model, folder: Path, class_names: Sequence[str],
                max_shard_bytes: int | None) -> bool:
    """Keras's save folder of ``model`` (without training state, with the released class
    names), its weights sharded above ``max_shard_bytes``; whether they were sharded."""
    saved = _without_training_state(model)
    own_names = getattr(saved, "class_names", None)
    if class_names and hasattr(saved, "class_names"):
        # keras.saving.load_model(folder) then gives back the released class names too.
        saved.class_names = tuple(class_names)
    try:
        keras.saving.save_model(saved, folder, zipped=False)
    finally:
        if saved is model:
            model.class_names = own_names
    assets = folder / "assets"
    if assets.is_dir() and not any(assets.iterdir()):
        assets.rmdir()  # Keras leaves an empty assets/ when no layer has assets
    sharded = (max_shard_bytes is not None
               and (folder / WEIGHTS_FILE).stat().st_size > max_shard_bytes)
    if sharded:
        (folder / WEIGHTS_FILE).unlink()
        save_sharded(saved, folder, max_shard_bytes=max_shard_bytes)
    return sharded


def _card_text(folder: str | os.PathLike) -> tuple[Path, str]:
    """The path and text of a zoo folder's card (``ValueError`` if it has none)."""
    card_path = Path(folder) / CARD_FILE
    if not card_path.is_file():
        raise ValueError(f"{folder} has no model card ({CARD_FILE}): not a zoo folder.")
    return card_path, card_path.read_text()


def _data_caveats_start(card_path: Path, text: str) -> int:
    """Where the card's "Data caveats" section starts: the "Notes" section goes before it."""
    caveats = re.search(r"(?m)^## Data caveats$", text)
    if caveats is None:
        raise ValueError(f"{card_path} is not a keras-gated model card (no 'Data caveats').")
    return caveats.start()


def _next_heading(text: str, start: int) -> re.Match | None:
    """The first heading of level 2 or 3 at or after ``start``."""
    return re.compile(r"(?m)^#{2,3} ").search(text, start)


def set_card_note(folder: str | os.PathLike, heading: str, markdown: str) -> None:
    """Write ``### heading`` + ``markdown`` into the "Notes" section of a zoo folder's card,
    replacing an earlier subsection of that heading (the weights are not touched, so their
    sha256 pin holds); an empty ``markdown`` removes the subsection. E.g. the comparison of
    twins released one after the other. A folder that is already published must be
    published again afterwards."""
    card_path, text = _card_text(folder)
    subsection = f"### {heading}\n\n{markdown.strip()}\n\n" if markdown.strip() else ""
    found = re.search(rf"(?m)^### {re.escape(heading)}\n", text)
    if not found and not subsection:
        return
    if found:  # replace it, up to the next heading of level 2 or 3 (or the end)
        following = _next_heading(text, found.end())
        stop = following.start() if following else len(text)
        text = text[:found.start()] + subsection + text[stop:]
    else:
        at = _data_caveats_start(card_path, text)
        if not re.search(r"(?m)^## Notes$", text):
            subsection = f"## Notes\n\n{subsection}"
        text = text[:at] + subsection + text[at:]
    card_path.write_text(text)


def set_card_notes(folder: str | os.PathLike, markdown: str) -> None:
    """Replace the prose of the "Notes" section of a zoo folder's card (what ``notes`` wrote
    at release, up to its first ``###`` subsection) with ``markdown``; its subsections (the
    caveat, a twin comparison) stay. The weights are not touched, so their sha256 pin holds."""
    card_path, text = _card_text(folder)
    prose = f"{markdown.strip()}\n\n" if markdown.strip() else ""
    notes = re.search(r"(?m)^## Notes\n\n", text)
    if notes is None:
        at = _data_caveats_start(card_path, text)
        if prose:
            text = text[:at] + f"## Notes\n\n{prose}" + text[at:]
    else:
        following = _next_heading(text, notes.end())
        stop = following.start() if following else len(text)
        if not prose and (following is None or following.group() == "## "):
            text = text[:notes.start()] + text[stop:]  # nothing left in the section
        else:
            text = text[:notes.end()] + prose + text[stop:]
    card_path.write_text(text)


def set_caveat(folder: str | os.PathLike, caveat: str) -> None:
    """Record ``caveat`` in a zoo folder's card (front matter, read into
    ``PretrainedCfg.caveat``: a warning whenever the weights are loaded); ``""`` removes
    it. Re-register the folder afterwards; the weights and their sha256 pin are untouched."""
    from huggingface_hub import ModelCard  # on first use: it reads HF_* at import

    card_path = Path(folder) / CARD_FILE
    card = ModelCard.load(card_path)
    info = getattr(card.data, CARD_KEY, None)
    if not isinstance(info, dict):
        raise ValueError(f"{card_path} has no `{CARD_KEY}` front-matter block.")
    info = {k: v for k, v in info.items() if k != "caveat"}
    if caveat.strip():
        info["caveat"] = " ".join(caveat.split())
    setattr(card.data, CARD_KEY, info)
    card.save(card_path)


def _folder_entries(folder: Path) -> tuple[list[str], list[str]]:
    """The files under ``folder`` (relative POSIX paths) and the symbolic links met on
    the way, neither followed nor listed as files."""
    files, links = [], []
    for root, dirs, names in os.walk(folder, followlinks=False):
        for name in [*dirs, *names]:
            path = Path(root) / name
            relative = path.relative_to(folder).as_posix()
            if path.is_symlink():
                links.append(relative)
            elif name in names:
                files.append(relative)
    return sorted(files), sorted(links)


def check_zoo_folder(folder: str | os.PathLike) -> list[str]:
    """The files of a zoo folder, checked: no symbolic link anywhere in it, the required
    files exist, every other file is one of ``OPTIONAL_FILES`` (the training log, the
    keras-hub preset ``keras_hub/`` written by ``training.release`` for convolutional
    nets), metrics.json follows the schema. Publishing uploads exactly this list (the preset
    to a repo of its own: ``keras_gated.release.hub``)."""
    folder = Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        raise ValueError(f"{folder} is not a folder (a symbolic link is not published): "
                         "give the zoo folder itself.")
    files, links = _folder_entries(folder)
    if links:
        raise ValueError(
            f"{folder} holds symbolic links ({', '.join(links)}), which are never published: "
            "replace each by the file itself (or remove it) and publish again."
        )
    sharded = SHARD_INDEX in files and WEIGHTS_FILE not in files
    required = list(SHARDED_REQUIRED_FILES if sharded else REQUIRED_FILES)
    if sharded:
        required += shard_names(folder / SHARD_INDEX)
    missing = [f for f in required if f not in files]
    unexpected = [f for f in files if f not in (*RELEASE_FILES, *required)]
    if missing or unexpected:
        raise ValueError(
            f"{folder} is not a zoo folder: missing {missing or 'nothing'}, unexpected "
            f"{unexpected or 'nothing'}. Write it with keras_gated.release.save_zoo_folder."
        )
    _check_metrics(json.loads((folder / METRICS_FILE).read_text()))
    return files


def weight_pins(folder: str | os.PathLike) -> dict[str, Any]:
    """The ``PretrainedCfg`` entries pinning a zoo folder's weights: ``sha256`` of
    ``model.weights.h5``, or of a sharded release's index with ``file_name`` and the
    ``shards``' own."""
    folder = Path(folder)
    if (folder / WEIGHTS_FILE).is_file():
        return {"sha256": sha256_of(folder / WEIGHTS_FILE)}
    return {
        "file_name": SHARD_INDEX,
        "sha256": sha256_of(folder / SHARD_INDEX),
        "shards": {name: sha256_of(folder / name) for name in shard_names(folder / SHARD_INDEX)},
    }


def load_folder_model(folder: str | os.PathLike) -> keras.Model:
    """The model of a zoo or Keras save folder, uncompiled: ``keras.saving.load_model``
    for one weight file, the saved config and ``load_weights`` of the index for a sharded
    release (which Keras's ``load_model`` does not read)."""
    folder = Path(folder)
    if (folder / WEIGHTS_FILE).is_file() or not (folder / SHARD_INDEX).is_file():
        return keras.saving.load_model(folder, compile=False)
    model = keras.models.model_from_json((folder / "config.json").read_text())
    model.load_weights(folder / SHARD_INDEX)
    return model


def preprocessing_numbers(model_config: dict) -> dict[str, Any]:
    """``{"mean": ..., "std": ...}`` or ``{"scale": ...}`` of the in-model ``preprocessing``
    layer of a saved Keras model config (empty when it has none)."""
    for entry in model_config.get("layers", []):
        config = entry.get("config") or {}
        if config.get("name") != "preprocessing":
            continue
        if entry.get("class_name") == "Normalization":
            return {
                "mean": tuple(round(float(m), 4) for m in config["mean"]),
                "std": tuple(round(math.sqrt(float(v)), 4) for v in config["variance"]),
            }
        if entry.get("class_name") == "Rescaling":
            return {"scale": float(config["scale"])}
    return {}


def pretrained_cfg_from_folder(
    folder: str | os.PathLike, *, revision: str | None = None, hf_hub_id: str | None = None
) -> PretrainedCfg:
    """The ``PretrainedCfg`` of a zoo folder written by ``save_zoo_folder`` (sha256 of
    its weight file included); ``revision`` is the published commit id."""
    from huggingface_hub import ModelCard  # on first use: it reads HF_* at import

    folder = Path(folder)
    check_zoo_folder(folder)
    card = ModelCard.load(folder / CARD_FILE).data.to_dict()
    info = card.get(CARD_KEY)
    if not isinstance(info, dict):
        raise ValueError(f"{folder / CARD_FILE} has no `{CARD_KEY}` front-matter block.")
    metrics = json.loads((folder / METRICS_FILE).read_text())
    listing = {k: metrics[k] for k in LISTING_METRICS if k in metrics}
    if "recipe" in listing:  # its name: the card holds the whole recipe
        listing["recipe"] = str(listing["recipe"]).split(" ", 1)[0]
    return PretrainedCfg(
        weight_id=info["weight_id"],
        classes=info["classes"],
        input_shape=tuple(info["input_shape"]),
        dataset=metrics["dataset"],
        class_names=tuple(info["class_names"]),
        **weight_pins(folder),
        hf_hub_id=hf_hub_id or f"{HUB_ORG}/{info['weight_id']}",
        revision=revision,
        license=card.get("license", ""),
        caveat=info.get("caveat", ""),
        metrics=listing,
        model_kwargs=dict(metrics.get("model_args") or {}),
        **preprocessing_numbers(read_saved_config(folder / "config.json")),
    )
