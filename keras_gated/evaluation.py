"""Evaluate released or local weights on a real test split; the bundled demo."""

from __future__ import annotations

from importlib import resources
from typing import TextIO

import numpy as np

DEMO_WEIGHT_ID = "gresnet20.cifar10"


def evaluate(name: str, weights: str, dataset: str, *, batch_size: int = 256) -> dict:
    """Test accuracy of ``create_model(name, weights=weights)`` on ``dataset``'s test split.

    The data goes through the same loader as training (JPEGs decoded bit-identically to
    PIL); the model normalises internally, so raw pixels go in.
    """
    import tensorflow as tf

    from keras_gated import datasets
    from keras_gated.registry import create_model

    model = create_model(name, weights=weights)
    ds, info = datasets.load(dataset, "test")
    expected = tuple(model.inputs[0].shape[1:])
    if tuple(info.image_shape) != expected:
        raise ValueError(
            f"{dataset!r} images are {info.image_shape} but {name} takes {expected}: "
            "evaluate on the data set the weights were trained for."
        )
    model.compile(loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    batches = ds.map(lambda x, y: (tf.cast(x, tf.float32), y)).batch(batch_size)
    _, accuracy = model.evaluate(batches, verbose=0)
    return {
        "model": name,
        "weights": weights,
        "dataset": info.note,
        "split": "test",
        "num_examples": info.num_examples,
        "test_accuracy": float(accuracy),
    }


def demo_images() -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """The bundled CIFAR-10 test images (2 per class), decoded like the training data."""
    import tensorflow as tf

    from keras_gated.class_names import CLASS_NAMES
    from keras_gated.datasets import decode_image

    names = CLASS_NAMES["cifar10"]
    folder = resources.files("keras_gated") / "assets" / "cifar10_demo"
    files = sorted(f for f in folder.iterdir() if f.name.endswith(".jpg"))
    images = np.stack([decode_image(tf.constant(f.read_bytes()), 3).numpy() for f in files])
    labels = np.array([names.index(f.name.rsplit("_", 1)[0]) for f in files])
    return images, labels, names


def run_demo(weights: str = "cifar10", out: TextIO | None = None) -> float:
    """Classify the bundled images with ``gresnet20.cifar10``: top-3 per image, accuracy."""
    import sys

    from keras_gated.models import GResNet20
    from keras_gated.preprocessing import decode_predictions

    out = out or sys.stdout
    images, labels, names = demo_images()
    model = GResNet20(weights=weights)
    probs = np.asarray(model.predict(images.astype("float32"), verbose=0))
    top3 = decode_predictions(probs, top=3, class_names=names)
    print(f"GResNet20 ({DEMO_WEIGHT_ID}) on {len(images)} bundled CIFAR-10 test images:", file=out)
    for i, (label, guesses) in enumerate(zip(labels, top3)):
        shown = ", ".join(f"{name} {p:.1%}" for _, name, p in guesses)
        mark = "ok " if guesses[0][0] == label else "MISS"
        print(f"  [{mark}] image {i:2d} ({names[label]:<10}) -> {shown}", file=out)
    accuracy = float(np.mean(probs.argmax(axis=1) == labels))
    print(f"accuracy on these {len(images)} images: {accuracy:.1%} "
          f"(full test set: keras-gated evaluate gresnet20 --weights cifar10 --dataset cifar10)",
          file=out)
    return accuracy
