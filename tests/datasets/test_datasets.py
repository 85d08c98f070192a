"""keras_gated.datasets: the offline copies, image folders, tfds (mocked), errors."""

import io
import zipfile

import numpy as np
import pytest

from keras_gated import datasets
from tests.support.helpers import make_image_folder, needs_tensorflow

SHARED = datasets.source_checkout_data_dir()
needs_shared = pytest.mark.skipif(
    not (SHARED / "cifar10-jpeg.zip").exists(), reason=f"no offline data at {SHARED}"
)


@needs_shared
def test_offline_cifar10_is_the_standard_splits():
    x, y, info = datasets.load_numpy("cifar10", "test")
    assert x.shape == (10_000, 32, 32, 3) and x.dtype == np.uint8
    assert sorted(set(y.tolist())) == list(range(10))
    assert np.bincount(y).tolist() == [1000] * 10
    assert info.num_examples == 10_000 and "JPEG q75" in info.note
    train, train_info = datasets.load("cifar10", "train")
    labels = np.concatenate([b for _, b in train.batch(5000).as_numpy_iterator()])
    assert train_info.num_examples == 50_000 and np.bincount(labels).tolist() == [5000] * 10


@needs_shared
def test_cifar10_pixels_equal_pil_decoding():
    from PIL import Image

    x, y, info = datasets.load_numpy("cifar10", "test")
    with zipfile.ZipFile(info.source) as archive:
        members = sorted(m for m in archive.namelist() if "/test/" in m and m.endswith(".jpg"))
        for i in (0, 4321, 9999):
            assert members[i].split("/")[-2] == info.class_names[y[i]]
            pil = np.asarray(Image.open(io.BytesIO(archive.read(members[i]))).convert("RGB"))
            np.testing.assert_array_equal(x[i], pil)


@needs_shared
def test_offline_fashion_mnist():
    x, y, info = datasets.load_numpy("fashion_mnist", "test")
    assert x.shape == (10_000, 28, 28, 1) and np.bincount(y).tolist() == [1000] * 10
    train, train_info = datasets.load("fashion_mnist", "train")
    assert train_info.num_examples == 60_000 and train_info.image_shape == (28, 28, 1)
    assert train_info.class_names[9] == "Ankle boot"


def test_idx_reader(tmp_path):
    data = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    path = tmp_path / "x-idx3-ubyte.gz"
    _write_idx(path, data)
    np.testing.assert_array_equal(datasets.read_idx(path), data)


def _write_idx(path, array):
    import gzip

    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.tobytes())


def test_keras_gated_data_comes_first(tmp_path, monkeypatch):
    """A copy under $KERAS_GATED_DATA wins over ../shared/data and the others."""
    mine = tmp_path / "mine" / "fashion-mnist"
    mine.mkdir(parents=True)
    for split, n in (("train", 6), ("test", 3)):
        images, labels = datasets.FASHION_MNIST_FILES[split]
        _write_idx(mine / images, np.full((n, 28, 28), 7, dtype=np.uint8))
        _write_idx(mine / labels, np.arange(n, dtype=np.uint8))
    monkeypatch.setenv("KERAS_GATED_DATA", str(tmp_path / "mine"))
    assert datasets.data_dirs()[0] == tmp_path / "mine" and SHARED in datasets.data_dirs()
    x, y, info = datasets.load_numpy("fashion_mnist", "test")
    assert info.source == str(mine) and x.shape == (3, 28, 28, 1) and y.tolist() == [0, 1, 2]


def _installed_elsewhere(tmp_path, monkeypatch) -> None:
    """Make keras_gated.datasets look installed in a site-packages outside any checkout."""
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "keras_gated"
    monkeypatch.setattr(datasets, "__file__", str(site / "datasets.py"))
    monkeypatch.delenv("KERAS_GATED_DATA", raising=False)


def test_an_installed_package_looks_for_data_from_the_working_directory(tmp_path, monkeypatch):
    _installed_elsewhere(tmp_path, monkeypatch)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "shared" / "data" / datasets.CIFAR10_ZIP).write_bytes(b"a copy")
    (tmp_path / "clone").mkdir()
    monkeypatch.chdir(tmp_path / "clone")
    assert datasets.source_checkout_data_dir() is None
    assert all("site-packages" not in str(d) and "python3.11" not in str(d)
               for d in datasets.data_dirs())
    found = datasets._find(datasets.CIFAR10_ZIP)
    assert found is not None and found.resolve() == tmp_path / "shared" / "data" / "cifar10-jpeg.zip"


def test_a_checkout_looks_for_data_beside_it_and_in_the_working_directory(tmp_path, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    checkout = Path(datasets.__file__).resolve().parents[1]
    assert datasets.source_checkout_data_dir() == checkout.parent / "shared" / "data"
    dirs = datasets.data_dirs()
    assert tmp_path / "shared" / "data" in dirs and checkout.parent / "shared" / "data" in dirs


def test_without_tensorflow_a_missing_data_set_names_keras_gated_data(tmp_path, monkeypatch):
    from keras_gated import tensorflow_cpu

    def no_tensorflow(feature):
        raise tensorflow_cpu.TensorFlowRequiredError(f"{feature} needs TensorFlow",
                                                     name="tensorflow")

    monkeypatch.setattr(datasets, "data_dirs", lambda: [tmp_path / "a"])
    monkeypatch.setattr(tensorflow_cpu, "import_tensorflow", no_tensorflow)
    with pytest.raises(ValueError) as error:
        datasets.load_numpy("cifar10", "test")
    message = str(error.value)
    assert "KERAS_GATED_DATA" in message and str(tmp_path / "a" / "cifar10-jpeg.zip") in message


def test_image_folder_with_mixed_sizes_names_the_file(tmp_path):
    from PIL import Image

    root = make_image_folder(tmp_path / "f", per_class=(2, 1), classes=2)
    odd = root / "train" / "class1" / "odd.png"
    Image.new("L", (30, 28)).save(odd)
    with pytest.raises(ValueError, match="odd.png is 30x28 but .* is 28x28"):
        datasets.load(str(root), "train")


def test_image_folder_splits_must_have_the_same_classes(tmp_path):
    root = make_image_folder(tmp_path / "f", per_class=(2, 2), classes=3)
    import shutil

    shutil.rmtree(root / "test" / "class1")
    with pytest.raises(ValueError, match="differ from those of"):
        datasets.load(str(root), "test")


def test_image_folder(tmp_path):
    root = make_image_folder(tmp_path / "folder", shape=(12, 10, 3), per_class=(6, 2), classes=3)
    ds, info = datasets.load(str(root), "train")
    x = np.stack([a for a, _ in ds.as_numpy_iterator()])
    assert x.shape == (18, 12, 10, 3) and info.class_names == ("class0", "class1", "class2")
    assert info.num_classes == 3 and info.image_shape == (12, 10, 3)


def test_missing_dataset_names_every_place_looked(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets, "data_dirs", lambda: [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(datasets.DatasetNotFoundError) as error:
        datasets.load("cifar10", "test", tfds_data_dir=str(tmp_path / "tfds"), download=False)
    message = str(error.value)
    assert str(tmp_path / "a" / "cifar10-jpeg.zip") in message
    assert str(tmp_path / "b" / "cifar10-jpeg.zip") in message
    assert "tfds.load('cifar10')" in message and "KERAS_GATED_DATA" in message


def test_bad_split():
    with pytest.raises(ValueError, match="train, test"):
        datasets.load("cifar10", "validation")


@needs_tensorflow
@pytest.mark.parametrize("name, shape", [("cifar10", (32, 32, 3)), ("mnist", (28, 28, 1))])
def test_tfds_path_with_mock_data(name, shape, tmp_path, monkeypatch):
    import tensorflow_datasets as tfds

    monkeypatch.setattr(datasets, "data_dirs", lambda: [tmp_path])  # no local copy
    with tfds.testing.mock_data(num_examples=6):
        ds, info = datasets.load(name, "train")
        items = list(ds.as_numpy_iterator())
    assert len(items) == 6 and info.source == f"tfds:{name}"
    assert items[0][0].shape == shape and info.num_classes == 10


# --- numpy loading (PIL) against TensorFlow's decoders, adaptation, checksums -------------
@needs_shared
@needs_tensorflow
def test_pil_decoding_equals_tensorflow_integer_accurate_decoding():
    """The numpy path decodes the CIFAR-10 JPEGs with PIL; TensorFlow's decoder
    (INTEGER_ACCURATE) gives the same bytes, so both engines train on the same pixels."""
    import tensorflow as tf

    x, _, info = datasets.load_numpy("cifar10", "test")
    with zipfile.ZipFile(info.source) as archive:
        members = sorted(m for m in archive.namelist() if "/test/" in m and m.endswith(".jpg"))
        chosen = range(0, len(members), 20)  # 500 images across every class
        decoded = np.stack([datasets.decode_image(tf.constant(archive.read(members[i])), 3).numpy()
                            for i in chosen])
    np.testing.assert_array_equal(decoded, x[list(chosen)])


@needs_tensorflow
def test_load_and_load_numpy_give_the_same_examples(tmp_path):
    root = make_image_folder(tmp_path / "folder", shape=(12, 10, 3), per_class=(6, 2), classes=3)
    ds, info = datasets.load(str(root), "train")
    x, y, numpy_info = datasets.load_numpy(str(root), "train")
    tf_x = np.stack([a for a, _ in ds.as_numpy_iterator()])
    tf_y = np.array([b for _, b in ds.as_numpy_iterator()])
    np.testing.assert_array_equal(tf_x, x)
    np.testing.assert_array_equal(tf_y, y)
    assert info == numpy_info and x.dtype == np.uint8 and y.dtype == np.int64


def test_decode_image_array_keeps_or_sets_the_channels(tmp_path):
    from PIL import Image

    grey = np.arange(12, dtype=np.uint8).reshape(3, 4)
    buffer = io.BytesIO()
    Image.fromarray(grey).save(buffer, format="PNG")
    assert datasets.decode_image_array(buffer.getvalue()).shape == (3, 4, 1)
    rgb = datasets.decode_image_array(buffer.getvalue(), 3)
    assert rgb.shape == (3, 4, 3) and (rgb[..., 1] == grey).all()


@needs_tensorflow
@pytest.mark.parametrize("source, target", [((28, 28, 1), (32, 32, 3)), ((36, 30, 3), (32, 32, 1))])
def test_adapt_array_equals_adapt_images(source, target):
    import tensorflow as tf

    images = np.random.default_rng(0).integers(0, 256, (3, *source), dtype=np.uint8)
    ds = tf.data.Dataset.from_tensor_slices((images, np.zeros(3, np.int64)))
    expected = np.stack([a for a, _ in datasets.adapt_images(ds, target).as_numpy_iterator()])
    got = datasets.adapt_images(images, target)
    assert got.shape == (3, *target)
    np.testing.assert_allclose(got.astype(int), expected.astype(int), atol=1)  # luma rounding


@needs_shared
def test_local_copies_have_their_registered_checksums(tmp_path):
    assert datasets.verify_local_copy(SHARED / "cifar10-jpeg.zip") is True
    assert datasets.verify_local_copy(SHARED / "fashion-mnist") is True
    other = tmp_path / "fashion-mnist"
    other.mkdir()
    _write_idx(other / "t10k-labels-idx1-ubyte.gz", np.arange(3, dtype=np.uint8))
    assert datasets.verify_local_copy(other) is False
    assert datasets.verify_local_copy(tmp_path / "fashion-mnist" / "t10k-labels-idx1-ubyte.gz") is False
    (tmp_path / "unregistered.zip").write_bytes(b"x")
    assert datasets.verify_local_copy(tmp_path / "unregistered.zip") is None
