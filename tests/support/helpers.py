"""Helpers shared by the tests (imported as ``tests.support.helpers``)."""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import pytest


def trainable_count(model: keras.Model | keras.layers.Layer) -> int:
    """Number of trainable scalars (BN γ/β count, running statistics do not)."""
    return sum(int(np.prod(v.shape)) for v in model.trainable_weights)


def to_numpy(x) -> np.ndarray:
    return np.asarray(keras.ops.convert_to_numpy(x))


def images(batch: int = 2, shape=(32, 32, 3), seed: int = 0) -> np.ndarray:
    """Raw 0-255 float32 pixels, as the models take them."""
    return np.random.default_rng(seed).uniform(0, 255, size=(batch, *shape)).astype("float32")


def assert_round_trip(model: keras.Model, x: np.ndarray, tmp_path: Path) -> keras.Model:
    """Save to .keras, load back with safe_mode=True, and compare inference outputs."""
    expected = to_numpy(model(x, training=False))
    path = tmp_path / f"{model.name}.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    got = to_numpy(loaded(x, training=False))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert [w.path for w in loaded.weights] == [w.path for w in model.weights]
    return loaded


def make_image_folder(root: Path, shape=(28, 28, 1), per_class=(40, 10), classes=2, seed=0) -> Path:
    """A tiny ``root/<split>/<class>/*.png`` folder whose classes are learnable
    (class c is brighter in row band c)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    h, w, c = shape
    for split, count in zip(("train", "test"), per_class):
        for label in range(classes):
            folder = root / split / f"class{label}"
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(count):
                image = rng.integers(0, 80, size=(h, w, c), dtype=np.uint8)
                band = slice(label * h // classes, (label + 1) * h // classes)
                image[band] += 150
                pil = Image.fromarray(image[..., 0] if c == 1 else image)
                pil.save(folder / f"{i:04d}.png")
    return root


def tensorflow_installed() -> bool:
    """Whether TensorFlow can be imported here (without importing it)."""
    from keras_gated.tensorflow_cpu import tensorflow_available

    return tensorflow_available()


# Tests of what needs TensorFlow by nature (the tf.data engine, tfds, TFLite, SavedModel,
# tf2onnx): they skip, and say why, where TensorFlow is not installed.
needs_tensorflow = pytest.mark.skipif(
    not tensorflow_installed(),
    reason='needs TensorFlow by nature; not installed here (pip install "keras-gated[tensorflow]")',
)


def last_line(capsys) -> str:
    """The last line a command printed on stderr (its one-sentence error)."""
    return capsys.readouterr().err.strip().splitlines()[-1]


def assert_one_clear_sentence(line: str, *words: str) -> None:
    """``line`` is a user-facing error, not a crash, and names each of ``words``."""
    assert "internal error" not in line and "Traceback" not in line, line
    for word in words:
        assert word in line, line
