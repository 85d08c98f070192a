"""Evaluate released or local weights on a real test split; the bundled demo."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

import keras
import numpy as np

from keras_gated import datasets
from keras_gated.datasets import CLASS_NAMES, decode_image_array
from keras_gated.models import GResNet20
from keras_gated.models import factory  # the module: create_model looked up when called
from keras_gated.preprocessing import decode_predictions
from keras_gated.progress import keras_verbose, on_stderr, track
from keras_gated.registry.models import get_model_entry
from keras_gated.weights.load import head_classes
from keras_gated.weights.resolve import resolve_weights
from keras_gated.weights.sources import local_weights_file, released_cfg

DEMO_WEIGHT_ID = "gresnet20.cifar10"


def weights_classes(name: str, weights: str) -> int | None:
    """The class count of ``weights`` for model ``name``: a released tag's config, or
    the head stored in a local file or save folder; None when it cannot be read."""
    cfg = released_cfg(name, str(weights))
    if cfg is not None:
        return cfg.classes
    if str(weights).startswith("hf://"):  # its head as served (downloaded once, then cached)
        return head_classes(resolve_weights(name, str(weights)).path)
    local = local_weights_file(str(weights))
    return head_classes(Path(local)) if local is not None else None


def check_scoring_args(name: str, weights: str, model_args: Mapping[str, Any] | None) -> None:
    """Refuse (``ValueError``) constructor arguments with which the weights cannot score
    raw 0-255 images: ``include_top=False`` (no head to score) and an
    ``include_preprocessing`` other than the one the weights were trained with (the net
    would see pixels on another scale than in training, and score chance)."""
    model_args = dict(model_args or {})
    if model_args.get("include_top", True) is not True:
        raise ValueError(f"--model-arg include_top={model_args['include_top']} leaves {name} "
                         "without the head that classifies the images: drop it to evaluate.")
    if "include_preprocessing" not in model_args:
        return
    trained = resolve_weights(name, str(weights)).model_kwargs.get("include_preprocessing", True)
    if model_args["include_preprocessing"] != trained:
        raise ValueError(
            f"The weights {weights!r} were trained with include_preprocessing={trained} (the "
            f"images' normalisation {'inside' if trained else 'outside'} the net), and evaluate "
            "feeds raw 0-255 pixels: drop --model-arg include_preprocessing="
            f"{model_args['include_preprocessing']}.")


def _named(names: Sequence[str] | None) -> bool:
    """Whether ``names`` are real class names (not none, nor ``class<i>`` of weights saved
    without them)."""
    return bool(names) and tuple(names) != tuple(f"class{i}" for i in range(len(names)))


def check_same_classes(
    model_names: Sequence[str] | None,
    data_names: Sequence[str],
    weights: str,
    dataset: str,
    name: str = "",
    hint: str = "",
) -> None:
    """Refuse data whose classes are not the weights' (same count is not enough: a
    CIFAR-10 net scores chance on Fashion-MNIST's ten classes). Generic ``class<i>``
    names (weights saved without class names) and unnamed data are not compared.
    ``hint``: a way out the command offers, added to the message."""
    if not _named(model_names) or not data_names:
        return
    if [n.lower() for n in model_names] != [n.lower() for n in data_names]:
        raise ValueError(
            f"The weights {weights!r}{f' of {name}' if name else ''} classify "
            f"{', '.join(model_names[:4])}, ... but "
            f"{dataset!r} has the classes {', '.join(data_names[:4])}, ...: evaluate them "
            "on the data set they were trained on (or fine-tune them on this one first)"
            f"{hint}."
        )


CLASS_MAP_HINT = ("; if its folders hold the same classes under other names (a class name "
                  "such as T-shirt/top cannot be a folder name), map them with --class-map "
                  "FOLDER=CLASS")


def match_classes(model_names: Sequence[str] | None, data_names: Sequence[str],
                  labels: np.ndarray, class_map: Mapping[str, str] | None = None
                  ) -> tuple[tuple[str, ...], np.ndarray]:
    """``(class names, labels)`` of the data as the weights number their classes.

    ``class_map`` renames data classes (folder name -> the weights' class name; a folder
    it names that the data lacks is refused). When the data's classes are the weights'
    in another order (an image folder's are sorted by name), the labels are renumbered
    to the weights' order; otherwise they are left as they are, for
    ``check_same_classes`` to judge."""
    names = tuple(data_names)
    if class_map:
        unknown = sorted(set(class_map) - set(names))
        if unknown:
            raise ValueError(f"--class-map names {', '.join(unknown)}, which the data set does "
                             f"not have (its classes: {', '.join(names)}): map its own folders.")
        names = tuple(class_map.get(n, n) for n in names)
    if not _named(model_names) or not names:
        return names, labels
    wanted = {n.lower(): i for i, n in enumerate(model_names)}
    if len(names) == len(wanted) and {n.lower() for n in names} == set(wanted):
        order = np.asarray([wanted[n.lower()] for n in names], np.int64)
        return tuple(model_names), order[np.asarray(labels, np.int64)]
    return names, labels


def data_classes(model, info, weights: str, dataset: str, name: str = "",
                 class_map: Mapping[str, str] | None = None) -> np.ndarray:
    """The label map (data label -> the weights' label) of a data set the weights score:
    ``match_classes`` then ``check_same_classes`` (refused unless the classes are the
    weights', with the ``--class-map`` way out). Index it with the data's labels."""
    names, relabel = match_classes(getattr(model, "class_names", None), info.class_names,
                                   np.arange(info.num_classes), class_map)
    check_same_classes(getattr(model, "class_names", None), names, weights, dataset, name,
                       hint=CLASS_MAP_HINT)
    return relabel


def check_image_size(image_shape: Sequence[int], expected: Sequence[int], dataset: str,
                     name: str, resize: bool) -> None:
    """Refuse (``ValueError``) images larger than the model's input unless ``resize``:
    they would be centre-cropped, which loses the edges of every image. Smaller ones are
    centre-padded, as ``training.finetune`` adapts them."""
    (h, w), (height, width) = tuple(image_shape[:2]), tuple(expected[:2])
    if not resize and (h > height or w > width):
        raise ValueError(f"The images of {dataset} are {h}×{w} but {name} takes {height}×"
                         f"{width}: they are never cropped; resize them first, or pass "
                         f"--resize (resize=True) to scale them to {height}×{width}.")


def adapted_in_training(weights: str) -> bool:
    """Whether ``weights`` is a fine-tuned folder whose run adapted its data to the
    backbone's input (its ``metrics.json`` records ``input_adaptation``): evaluate then
    adapts the data the same way, a centre crop included."""
    metrics = Path(os.path.expanduser(str(weights))) / "metrics.json"
    try:
        return bool(json.loads(metrics.read_text()).get("input_adaptation"))
    except (OSError, ValueError, AttributeError):
        return False


def resize_array(images: np.ndarray, size: tuple[int, int], batch: int = 256) -> np.ndarray:
    """uint8 ``images`` (N, H, W, C) scaled to ``size`` (bilinear, antialiased:
    ``keras.ops.image.resize``), batch by batch, as uint8."""
    out = np.empty((len(images), *size, images.shape[-1]), np.uint8)
    for start in range(0, len(images), batch):
        scaled = keras.ops.image.resize(images[start:start + batch].astype(np.float32), size,
                                        interpolation="bilinear", antialias=True)
        out[start:start + batch] = np.clip(np.round(keras.ops.convert_to_numpy(scaled)), 0, 255)
    return out


def evaluate(name: str, weights: str, dataset: str, *, batch_size: int = 256,
             model_args: Mapping[str, Any] | None = None, data_engine: str = "numpy",
             resize: bool = False, class_map: Mapping[str, str] | None = None) -> dict:
    """Test accuracy of ``create_model(name, weights=weights, **model_args)`` on
    ``dataset``'s test split (``model_args``: the constructor arguments the weights were
    trained with, e.g. ``{"batch_norm": False}``).

    The data goes through the same loader as training (JPEGs decoded bit-identically on
    either engine) and, when its images differ from the model's input (e.g. a CIFAR
    backbone fine-tuned on Fashion-MNIST), the same adaptation as ``training.finetune``.
    The weights' head must have one output per class of the data set, and its classes
    must be the data's (``class_map``: folder name -> the weights' class name, for folders
    whose names cannot be the class names; classes in another order are renumbered).
    Images larger than the model's input are refused unless ``resize`` scales them to it.
    ``data_engine``: ``"numpy"`` (no TensorFlow) or ``"tf"`` (``tf.data``); both give the
    same accuracy.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"`batch_size` must be a positive integer, got {batch_size!r}.")
    if data_engine not in ("numpy", "tf"):
        raise ValueError(f"Unknown data engine {data_engine!r}; choose numpy or tf.")
    check_scoring_args(name, weights, model_args)
    if data_engine == "tf":
        ds, info = datasets.load(dataset, "test")
    else:
        images, labels, info = datasets.load_numpy(dataset, "test")
    if is_saved_model_file(weights):
        model = load_saved_model(name, weights, info.num_classes, dataset, model_args)
    else:
        classes = weights_classes(name, weights)
        if classes is not None and classes != info.num_classes:
            raise ValueError(
                f"The weights {weights!r} classify {classes} classes but {dataset!r} has "
                f"{info.num_classes}: evaluate them on the data set they were trained for."
            )
        kwargs = {**saved_input_shape(weights), **(model_args or {})}
        model = factory.create_model(name, weights=weights, classes=info.num_classes, **kwargs)
    relabel = data_classes(model, info, weights, dataset, name, class_map)
    expected = tuple(model.inputs[0].shape[1:])
    check_image_size(info.image_shape, expected, dataset, name, resize or adapted_in_training(weights))
    scale = resize and tuple(info.image_shape[:2]) != expected[:2]
    model.compile(loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    if data_engine == "tf":
        import tensorflow as tf

        table = tf.constant(relabel)
        ds = ds.map(lambda x, y: (x, tf.gather(table, y)))
        if scale:
            ds = ds.map(lambda x, y: (tf.cast(tf.clip_by_value(tf.round(tf.image.resize(
                x, expected[:2], antialias=True)), 0, 255), tf.uint8), y))
        if tuple(info.image_shape) != expected:
            ds = datasets.adapt_images(ds, expected)
        batches = ds.map(lambda x, y: (tf.cast(x, tf.float32), y)).batch(batch_size)
        with on_stderr():
            _, accuracy = model.evaluate(batches, verbose=keras_verbose())
    else:
        labels = relabel[labels]
        if scale:
            images = resize_array(images, expected[:2])
        if tuple(images.shape[1:]) != expected:
            images = datasets.adapt_array(images, expected)
        accuracy = accuracy_in_batches(model, images, labels, batch_size)
    return {
        "model": name,
        "weights": weights,
        "dataset": info.note,
        "split": "test",
        "num_examples": info.num_examples,
        "test_accuracy": float(accuracy),
    }


def saved_input_shape(weights: str) -> dict:
    """``{"input_shape": ...}`` recorded in the ``config.json`` of a local save folder
    (a run trained on other images than the model's default records its own), else
    ``{}``: the model is then built with the input its weights were trained on."""
    config_file = Path(os.path.expanduser(str(weights))) / "config.json"
    if not config_file.is_file():
        return {}
    try:
        layers = json.loads(config_file.read_text())["config"]["layers"]
        first = next(layer for layer in layers if layer["class_name"] == "InputLayer")
        shape = first["config"]["batch_shape"][1:]
    except (ValueError, KeyError, TypeError, StopIteration):
        return {}  # loading reports what is wrong with the folder
    return {"input_shape": tuple(shape)} if len(shape) == 3 else {}


def is_saved_model_file(weights: str) -> bool:
    """Whether ``weights`` names a whole saved model (a ``.keras`` file, such as a training
    run's ``last.keras`` or ``best.keras``)."""
    path = Path(os.path.expanduser(str(weights)))
    return path.suffix == ".keras" and path.is_file()


def load_saved_model(name: str, path: str, num_classes: int, dataset: str,
                     model_args: Mapping[str, Any] | None):
    """The model saved in the ``.keras`` file ``path`` (its own input shape and head, as
    trained), checked to be ``name`` and to classify ``dataset``'s classes."""
    if model_args:
        raise ValueError(f"{path} is a whole saved model, which records its constructor "
                         "arguments: drop --model-arg.")
    model = keras.saving.load_model(path, compile=False, safe_mode=True)
    # A variant built by the registered constructor with other arguments keeps its name with
    # the suffix its family declares (another width: ``_w100``).
    if not get_model_entry(name).names_a_variant(model.name):
        raise ValueError(f"{path} holds a {model.name!r} model, not {name!r}: evaluate it as "
                         f"{model.name}.")
    classes = int(model.outputs[0].shape[-1])
    if classes != num_classes:
        raise ValueError(f"{path} classifies {classes} classes but {dataset!r} has "
                         f"{num_classes}: evaluate it on the data set it was trained for.")
    return model


def accuracy_in_batches(model, images: np.ndarray, labels: np.ndarray, batch_size: int) -> float:
    """Top-1 accuracy of ``model`` on uint8 ``images``, cast to float32 one batch at a time
    (a whole float32 split would take four times the memory of its bytes)."""
    correct = 0
    for start in track(range(0, len(images), batch_size), f"evaluating {len(images)} images",
                       unit="batch"):
        x = images[start:start + batch_size].astype(np.float32)
        predicted = np.asarray(model.predict_on_batch(x)).argmax(axis=-1)
        correct += int((predicted == labels[start:start + batch_size]).sum())
    return correct / len(images)


def demo_images() -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """The bundled CIFAR-10 test images (2 per class), decoded like the training data."""
    names = CLASS_NAMES["cifar10"]
    folder = resources.files("keras_gated") / "assets" / "cifar10_demo"
    files = sorted(f for f in folder.iterdir() if f.name.endswith(".jpg"))
    images = np.stack([decode_image_array(f.read_bytes(), 3) for f in files])
    labels = np.array([names.index(f.name.rsplit("_", 1)[0]) for f in files])
    return images, labels, names


def loaded_weights_label(model) -> str:
    """What a model was loaded with, for a report: its weight id (``gresnet20.cifar10``),
    the file or reference it was loaded from, or ``random weights``."""
    cfg = getattr(model, "pretrained_cfg", None) or {}
    return cfg.get("weight_id") or cfg.get("file") or "random weights"


def run_demo(weights: str = "cifar10", out: TextIO | None = None) -> float:
    """Classify the bundled images with GResNet20 and ``weights`` (``gresnet20.cifar10``
    by default): top-3 per image, accuracy."""
    out = out or sys.stdout
    images, labels, names = demo_images()
    model = GResNet20(weights=weights)
    probs = np.asarray(model.predict(images.astype("float32"), verbose=0))
    top3 = decode_predictions(probs, top=3, model=model)
    loaded = loaded_weights_label(model)
    print(f"GResNet20 ({loaded}) on {len(images)} bundled CIFAR-10 test images:", file=out)
    for i, (label, guesses) in enumerate(zip(labels, top3)):
        shown = ", ".join(f"{name} {p:.1%}" for _, name, p in guesses)
        mark = "ok " if guesses[0][0] == label else "MISS"
        print(f"  [{mark}] image {i:2d} ({names[label]:<10}) -> {shown}", file=out)
    accuracy = float(np.mean(probs.argmax(axis=1) == labels))
    hint = (f" (full test set: keras-gated evaluate gresnet20 --weights {weights} --dataset "
            "cifar10)" if weights is not None else "")
    print(f"accuracy on these {len(images)} images: {accuracy:.1%}{hint}", file=out)
    return accuracy
