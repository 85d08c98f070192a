"""Real data sets, local copies first, then tfds.

``load(tag, split)`` returns a ``tf.data.Dataset`` of ``(image uint8 (H, W, C), label
int64)`` and a ``DatasetInfo``. A tag is

* ``"cifar10"``: ``cifar10-jpeg.zip`` (the standard splits re-encoded as JPEG q75) from a
  local data directory, else ``tfds.load("cifar10")``;
* ``"fashion_mnist"``: the four IDX files (``fashion-mnist/*-ubyte.gz``) from a local data
  directory, else ``tfds.load("fashion_mnist")``;
* a path to an image folder laid out ``root/<split>/<class>/<image>``;
* any other tfds name (``tfds.load(name)``; downloads when the machine has a network).

Local data directories are searched in this order: ``$KERAS_GATED_DATA``,
``../shared/data`` beside a source checkout, ``~/.keras/datasets``,
``/usr/share/datasets`` (Debian's ``dataset-fashion-mnist`` installs there).

JPEGs are decoded with ``dct_method="INTEGER_ACCURATE"``, bit-identical to PIL/libjpeg,
in training, evaluation and model cards alike.
"""

from __future__ import annotations

import gzip
import os
import textwrap
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from keras_gated.class_names import CLASS_NAMES

CIFAR10_ZIP = "cifar10-jpeg.zip"
FASHION_MNIST_DIR = "fashion-mnist"
FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif")
SPLITS = ("train", "test")


@dataclass(frozen=True)
class DatasetInfo:
    """What a loaded split is: its tag, size, classes and where it came from."""

    tag: str
    split: str
    num_examples: int
    num_classes: int
    class_names: tuple[str, ...]
    image_shape: tuple[int | None, ...]
    source: str  # e.g. "/path/cifar10-jpeg.zip" or "tfds:cifar10"
    note: str = ""  # data caveats, e.g. "JPEG q75 copy" (goes into model cards)


class DatasetNotFoundError(FileNotFoundError, ValueError):
    """No local copy and no usable tfds source; the message says where it looked."""


def source_checkout_data_dir() -> Path:
    """``../shared/data`` beside the source checkout this package was imported from."""
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def data_dirs() -> list[Path]:
    """The local directories searched for data sets, in order."""
    dirs = []
    if os.environ.get("KERAS_GATED_DATA"):
        dirs.append(Path(os.environ["KERAS_GATED_DATA"]).expanduser())
    dirs += [
        source_checkout_data_dir(),
        Path("~/.keras/datasets").expanduser(),
        Path("/usr/share/datasets"),
    ]
    return dirs


def _find(relative: str) -> Path | None:
    for directory in data_dirs():
        if (directory / relative).exists():
            return directory / relative
    return None


def _check_split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"Unknown `split`={split!r}. Allowed values: {', '.join(SPLITS)}.")
    return split


def decode_image(encoded, channels: int = 0):
    """Decode JPEG bit-identically to PIL (INTEGER_ACCURATE IDCT); PNG/BMP/GIF as usual."""
    import tensorflow as tf

    is_jpeg = tf.strings.substr(encoded, 0, 3) == b"\xff\xd8\xff"
    return tf.cond(
        is_jpeg,
        lambda: tf.io.decode_jpeg(encoded, channels=channels, dct_method="INTEGER_ACCURATE"),
        lambda: tf.io.decode_image(encoded, channels=channels, expand_animations=False),
    )


# --- CIFAR-10 from the JPEG zip ----------------------------------------------------------
def _cifar10_zip(path: Path, split: str):
    import tensorflow as tf

    names = CLASS_NAMES["cifar10"]
    index = {name: i for i, name in enumerate(names)}
    encoded, labels = [], []
    with zipfile.ZipFile(path) as archive:
        members = sorted(
            m for m in archive.namelist() if m.endswith(".jpg") and f"/{split}/" in m
        )
        for member in members:
            encoded.append(archive.read(member))
            labels.append(index[member.split("/")[-2]])
    ds = tf.data.Dataset.from_tensor_slices((encoded, np.asarray(labels, "int64")))
    ds = ds.map(
        lambda e, y: (tf.ensure_shape(decode_image(e, 3), (32, 32, 3)), y),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    info = DatasetInfo(
        "cifar10", split, len(labels), 10, names, (32, 32, 3), str(path),
        note="CIFAR-10, JPEG q75 copy of the standard splits",
    )
    return ds, info


# --- Fashion-MNIST from the IDX files ----------------------------------------------------
def read_idx(path: Path) -> np.ndarray:
    """Read an IDX file (optionally gzip-compressed) into a numpy array."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype_code, ndim = data[0:2], data[2], data[3]
    if zero != b"\x00\x00" or dtype_code != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file.")
    shape = tuple(int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def _fashion_mnist_idx(directory: Path, split: str):
    import tensorflow as tf

    image_file, label_file = FASHION_MNIST_FILES[split]
    x = read_idx(directory / image_file)[..., None]
    y = read_idx(directory / label_file).astype("int64")
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    info = DatasetInfo(
        "fashion_mnist", split, len(y), 10, CLASS_NAMES["fashion_mnist"], (28, 28, 1),
        str(directory), note="Fashion-MNIST, the original IDX files (lossless)",
    )
    return ds, info


# --- image folders ------------------------------------------------------------------------
def _folder_classes(directory: Path) -> tuple[str, ...]:
    names = tuple(sorted(d.name for d in directory.iterdir() if d.is_dir()))
    if not names:
        raise DatasetNotFoundError(f"{directory} has no class sub-folders.")
    return names


def _check_same_size(files: list[str], size: tuple[int, int]) -> None:
    """Every image must be ``size`` (width, height); PIL reads only the headers."""
    from PIL import Image

    for f in files:
        with Image.open(f) as image:
            if image.size != size:
                raise ValueError(
                    f"{f} is {image.size[0]}x{image.size[1]} but {files[0]} is "
                    f"{size[0]}x{size[1]}: an image folder needs images of one size. "
                    "Resize them first (e.g. with PIL's Image.resize)."
                )


def _image_folder(root: Path, split: str):
    import tensorflow as tf

    split_dir = root / split
    if not split_dir.is_dir():
        raise DatasetNotFoundError(
            f"Image folder {root} has no {split!r} split: expected {split_dir}/<class>/<image>."
        )
    class_names = _folder_classes(root / "train" if (root / "train").is_dir() else split_dir)
    here = _folder_classes(split_dir)
    if here != class_names:
        raise ValueError(
            f"The class folders of {split_dir} ({', '.join(here)}) differ from those of "
            f"{root / 'train'} ({', '.join(class_names)}): labels would not agree between "
            "splits. Give every split the same class folders (an empty one is fine)."
        )
    files, labels = [], []
    for label, name in enumerate(class_names):
        for f in sorted((split_dir / name).iterdir()):
            if f.suffix.lower() in IMAGE_EXTENSIONS:
                files.append(str(f))
                labels.append(label)
    if not files:
        raise DatasetNotFoundError(f"No images ({', '.join(IMAGE_EXTENSIONS)}) under {split_dir}.")
    first = decode_image(tf.io.read_file(files[0])).shape
    _check_same_size(files, (first[1], first[0]))
    ds = tf.data.Dataset.from_tensor_slices((files, np.asarray(labels, "int64")))

    def read(path, y):
        image = decode_image(tf.io.read_file(path), first[-1])
        return tf.ensure_shape(image, first), y

    ds = ds.map(read, num_parallel_calls=tf.data.AUTOTUNE)
    info = DatasetInfo(
        str(root), split, len(files), len(class_names), class_names, tuple(first), str(root),
        note=f"image folder {root}",
    )
    return ds, info


# --- tfds -----------------------------------------------------------------------------------
def _tfds(name: str, split: str, data_dir: str | None, download: bool):
    try:
        import tensorflow_datasets as tfds
    except ModuleNotFoundError as error:  # an optional dependency: say how to get it
        raise ModuleNotFoundError(
            "tensorflow-datasets is not installed (pip install 'keras-gated[data]')",
            name=error.name,
        ) from error

    ds, tfds_info = tfds.load(
        name, split=split, as_supervised=True, with_info=True, data_dir=data_dir,
        download=download,
    )
    features = tfds_info.features
    label = features["label"] if "label" in features else None
    class_names = tuple(label.names) if label is not None else ()
    num_examples = (
        tfds_info.splits[split].num_examples if split in tfds_info.splits else int(ds.cardinality())
    )
    shape = tuple(features["image"].shape) if "image" in features else ()
    info = DatasetInfo(
        name, split, num_examples, len(class_names), class_names, shape, f"tfds:{name}",
        note=f"tfds {name}",
    )
    return ds, info


_LOCAL = {"cifar10": (CIFAR10_ZIP, _cifar10_zip), "fashion_mnist": (FASHION_MNIST_DIR, _fashion_mnist_idx)}
_HOW_TO_GET = {
    "cifar10": "put cifar10-jpeg.zip in one of them, or run once with a network so that "
    "tfds.load('cifar10') can download it",
    "fashion_mnist": "`apt-get install dataset-fashion-mnist` (installs the IDX files in "
    "/usr/share/datasets/fashion-mnist), or put them in one of them, or run once with a "
    "network so that tfds.load('fashion_mnist') can download it",
}


def load(
    tag: str,
    split: str = "train",
    *,
    tfds_data_dir: str | None = None,
    download: bool | None = None,
):
    """Load a split of a data set: local copies first, then tfds.

    Args:
        tag: ``"cifar10"``, ``"fashion_mnist"``, a path to an image folder, or a tfds name.
        split: ``"train"`` or ``"test"``.
        tfds_data_dir: tfds' ``data_dir``.
        download: allow tfds to download (default: unless ``HF_HUB_OFFLINE`` or
            ``KERAS_GATED_OFFLINE`` is set). Offline, a tfds download retries for minutes.

    Returns:
        ``(dataset, info)``: a ``tf.data.Dataset`` of ``(uint8 image, int64 label)`` in a
        fixed order, and its ``DatasetInfo``.
    """
    _check_split(split)
    path = Path(os.path.expanduser(tag))
    if path.is_dir() or tag.startswith(("/", ".", "~")):
        if not path.is_dir():
            raise DatasetNotFoundError(f"Image folder {tag!r} does not exist.")
        return _image_folder(path, split)
    if tag in _LOCAL:
        relative, reader = _LOCAL[tag]
        found = _find(relative)
        if found is not None:
            return reader(found, split)
    if download is None:
        download = not (os.environ.get("KERAS_GATED_OFFLINE") or os.environ.get("HF_HUB_OFFLINE"))
    try:
        return _tfds(tag, split, tfds_data_dir, download)
    except Exception as error:  # tfds raises many types: name it all in one clear error
        if type(error).__name__ == "DatasetNotFoundError" and tag not in _LOCAL:
            raise DatasetNotFoundError(_unknown_name_message(tag)) from error
        looked = [str(d / _LOCAL[tag][0]) for d in data_dirs()] if tag in _LOCAL else []
        where = (
            "Looked for a local copy in: " + ", ".join(looked) + f"; then tfds.load({tag!r}) "
            if looked
            else f"tfds.load({tag!r}) "
        )
        how = _HOW_TO_GET.get(tag, "check the tfds name, or pass a path to an image folder")
        # tfds messages run over many lines: one line, cut at a word boundary.
        reason = textwrap.shorten(str(error), 300, placeholder=" ...")
        raise DatasetNotFoundError(
            f"Data set {tag!r} ({split}) not found. {where}failed with "
            f"{type(error).__name__}: {reason}. To get it: {how}. "
            "Set KERAS_GATED_DATA to a directory holding the local copies."
        ) from error


def _unknown_name_message(tag: str) -> str:
    """Neither a local tag, an image folder nor a tfds name: say what the choices are, with
    the tfds names closest to ``tag`` (tfds knows hundreds)."""
    import difflib

    try:
        import tensorflow_datasets as tfds

        close = difflib.get_close_matches(tag, tfds.list_builders(with_community_datasets=False),
                                          n=5, cutoff=0.6)
    except Exception:  # suggestions are a courtesy: never fail on them
        close = []
    hint = f" (close tfds names: {', '.join(close)})" if close else ""
    return (
        f"Unknown data set {tag!r}: give {', '.join(_LOCAL)}, the path of an image folder "
        f"laid out <root>/<split>/<class>/<image>, or a tfds name{hint}; "
        "tfds.list_builders() lists the tfds names."
    )


def adapt_images(ds, shape: tuple[int, int, int]):
    """Fit images to a model's input shape: grey <-> RGB, then centre pad or crop.

    E.g. Fashion-MNIST (28×28×1) for a CIFAR model (32×32×3): tiled to 3 channels and
    zero-padded by 2 pixels on every side.
    """
    import tensorflow as tf

    height, width, channels = shape

    def fit(image, label):
        if image.shape[-1] == 1 and channels == 3:
            image = tf.image.grayscale_to_rgb(image)
        elif image.shape[-1] == 3 and channels == 1:
            image = tf.cast(tf.image.rgb_to_grayscale(image), image.dtype)
        elif image.shape[-1] != channels:
            raise ValueError(f"Cannot adapt {image.shape[-1]}-channel images to {channels} channels.")
        return tf.image.resize_with_crop_or_pad(image, height, width), label

    return ds.map(fit, num_parallel_calls=tf.data.AUTOTUNE)


def load_numpy(tag: str, split: str = "test", **kwargs) -> tuple[np.ndarray, np.ndarray, DatasetInfo]:
    """A whole split as numpy arrays ``(images uint8, labels int64, info)``."""
    ds, info = load(tag, split, **kwargs)
    images, labels = [], []
    for x, y in ds.batch(1024).as_numpy_iterator():
        images.append(x)
        labels.append(y)
    return np.concatenate(images), np.concatenate(labels), info
