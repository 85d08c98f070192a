"""Image folders are read as they are: each image in its own mode, sixteen-bit images scaled
not clipped, images in sub-folders and WebP files read, and a bad image or a truncated local
copy named in one sentence."""

from __future__ import annotations


import numpy as np
import pytest

from tests.support.hub_fixtures import hf_home, hub  # noqa: F401


# --- images are read as the user means them ---------------------------------------------------
def _save(path, array, mode=None):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array, mode).save(path)
    return path


def test_each_image_of_a_folder_is_read_in_its_own_mode(tmp_path):
    from PIL import Image

    from keras_gated.datasets import load_numpy

    rng = np.random.default_rng(0)
    grey = rng.integers(0, 256, (8, 8), dtype=np.uint8)
    rgb = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
    rgba = np.concatenate([rgb, np.full((8, 8, 1), 7, np.uint8)], axis=-1)
    _save(tmp_path / "d" / "test" / "a" / "0.png", grey)  # the first image is grey
    _save(tmp_path / "d" / "test" / "a" / "1.png", rgb)
    _save(tmp_path / "d" / "test" / "b" / "2.png", rgba)
    Image.fromarray(rgb).convert("P").save(tmp_path / "d" / "test" / "b" / "3.png")
    x, y, info = load_numpy(str(tmp_path / "d"), "test")
    assert info.image_shape == (8, 8, 3) and x.shape == (4, 8, 8, 3)
    np.testing.assert_array_equal(x[0], np.repeat(grey[..., None], 3, axis=-1))
    np.testing.assert_array_equal(x[1], rgb)  # not turned grey
    np.testing.assert_array_equal(x[2], rgb)  # the alpha channel dropped
    assert x[3].std(axis=-1).mean() > 1  # a palette image stays in colour


def test_sixteen_bit_images_are_scaled_not_clipped(tmp_path):
    from keras_gated.datasets import load_numpy

    eight = np.arange(64, dtype=np.uint8).reshape(8, 8) * 4
    _save(tmp_path / "d" / "test" / "a" / "16.png", eight.astype(np.uint16) * 257)
    _save(tmp_path / "d" / "test" / "b" / "8.png", eight)
    x, _, info = load_numpy(str(tmp_path / "d"), "test")
    assert info.image_shape == (8, 8, 1)
    np.testing.assert_array_equal(x[0, ..., 0], eight)
    np.testing.assert_array_equal(x[1, ..., 0], eight)


def test_images_in_sub_folders_and_webp_files_are_read(tmp_path):
    from keras_gated.datasets import load_numpy

    image = np.zeros((8, 8, 3), np.uint8)
    _save(tmp_path / "d" / "test" / "cat" / "kittens" / "0.jpg", image)
    _save(tmp_path / "d" / "test" / "cat" / "1.png", image)
    _save(tmp_path / "d" / "test" / "dog" / "2.webp", image)
    x, y, info = load_numpy(str(tmp_path / "d"), "test")
    assert info.class_names == ("cat", "dog") and y.tolist() == [0, 0, 1]


def test_a_bad_image_or_a_truncated_local_copy_is_named_in_one_sentence(tmp_path, monkeypatch):
    from PIL import Image

    from keras_gated import datasets

    _save(tmp_path / "d" / "test" / "a" / "big.png", np.zeros((32, 32), np.uint8))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)  # 1024 pixels: a decompression bomb
    with pytest.raises(datasets.BadImageError, match="big.png cannot be read as an image"):
        datasets.load_numpy(str(tmp_path / "d"), "test")
    monkeypatch.undo()
    data = tmp_path / "data"
    (data / "fashion-mnist").mkdir(parents=True)
    (data / "cifar10-jpeg.zip").write_bytes(b"PK\x03\x04" + b"\0" * 100)  # truncated
    for name in datasets.FASHION_MNIST_FILES["test"]:
        (data / "fashion-mnist" / name).write_bytes(b"\x1f\x8b\x08\x00" + b"\0" * 10)
    monkeypatch.setenv("KERAS_GATED_DATA", str(data))
    for tag, file in (("cifar10", "cifar10-jpeg.zip"), ("fashion_mnist", "fashion-mnist")):
        with pytest.raises(datasets.CorruptDataError, match=f"{file} of {tag} is truncated"):
            datasets.load_numpy(tag, "test")
