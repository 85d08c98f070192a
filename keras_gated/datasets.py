"""Real data sets, local copies first, then tfds.

``load_numpy(tag, split)`` returns a whole split as numpy arrays ``(images uint8 (N, H, W,
C), labels int64 (N,), info)``, without TensorFlow for the local copies and image folders
(JPEGs decoded by PIL). ``load(tag, split)`` returns the same examples as a
``tf.data.Dataset`` (TensorFlow needed) and a ``DatasetInfo``. A tag is

* ``"cifar10"``: ``cifar10-jpeg.zip`` (the standard splits re-encoded as JPEG q75) from a
  local data directory, else ``tfds.load("cifar10")``;
* ``"fashion_mnist"``: the four IDX files (``fashion-mnist/*-ubyte.gz``) from a local data
  directory, else ``tfds.load("fashion_mnist")``;
* a path to an image folder laid out ``root/{train,test}/<class>/<image>`` (one folder
  per class, named after it, in each split; the classes are the sorted folder names);
* any other tfds name (``tfds.load(name)``; downloads when the machine has a network).

Local data directories are searched in this order: ``$KERAS_GATED_DATA``;
``shared/data`` and ``../shared/data`` from the working directory; ``../shared/data``
beside the source checkout this package runs from (none for an installed package);
``~/.keras/datasets``; ``/usr/share/datasets`` (Debian's ``dataset-fashion-mnist``
installs there).

JPEGs are decoded by PIL (libjpeg's accurate integer IDCT); TensorFlow's
``decode_image`` below decodes them with ``dct_method="INTEGER_ACCURATE"``, bit-identical
to PIL, so training, evaluation and model cards see the same pixels on either path. The
local copies' registered sha256 are in ``CHECKSUMS`` (``verify_local_copy``).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import textwrap
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from keras_gated import tensorflow_cpu  # the module: its functions looked up when called

CIFAR10_ZIP = "cifar10-jpeg.zip"
FASHION_MNIST_DIR = "fashion-mnist"
FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
# sha256 of the local copies (../shared/data/README.md), by file name.
CHECKSUMS = {
    CIFAR10_ZIP: "d0bb132ddcd829171ce8a9017680e2cabb873869b8acb47b3b6e7ca4ab384f0f",
    "train-images-idx3-ubyte.gz": "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7",
    "train-labels-idx1-ubyte.gz": "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056",
    "t10k-images-idx3-ubyte.gz": "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa",
    "t10k-labels-idx1-ubyte.gz": "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05",
}

# Class names of the data sets keras-gated releases weights for, by data tag.
CLASS_NAMES: dict[str, tuple[str, ...]] = {
    "cifar10": (
        "airplane", "automobile", "bird", "cat", "deer",
        "dog", "frog", "horse", "ship", "truck",
    ),
    "fashion_mnist": (
        "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
        "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
    ),
}


def class_names_for(tag: str) -> tuple[str, ...]:
    """The class names of a data tag (``"cifar10"``) or of a weight id's data."""
    dataset = tag.partition(".")[2] or tag
    if dataset in CLASS_NAMES:
        return CLASS_NAMES[dataset]
    raise ValueError(
        f"No class names known for {tag!r}. Known data tags: {', '.join(CLASS_NAMES)}; "
        "or pass the class names as a list."
    )


IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp")
# PIL modes of a grey image (1-bit, 8-bit, 16-bit and 32-bit integer, float, with alpha):
# a folder of such images only is read grey, a folder with any colour image as RGB.
GREY_MODES = ("1", "L", "LA", "La", "I", "I;16", "I;16L", "I;16B", "I;16N", "F")
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


DATA_ENV = "KERAS_GATED_DATA"
SHARED_DATA = Path("shared", "data")


def source_checkout_data_dir() -> Path | None:
    """``../shared/data`` beside the source checkout this package was imported from; None
    when it runs from an installed copy (no ``pyproject.toml`` above the package)."""
    checkout = Path(__file__).resolve().parents[1]
    if not (checkout / "pyproject.toml").is_file():
        return None
    return checkout.parent / SHARED_DATA


def working_directory_data_dirs() -> list[Path]:
    """``shared/data`` in the working directory and beside it (``../shared/data``: the
    layout of a checkout next to its data)."""
    cwd = Path.cwd()
    return [cwd / SHARED_DATA, cwd.parent / SHARED_DATA]


def data_dirs() -> list[Path]:
    """The local directories searched for data sets, in order (each once)."""
    dirs = []
    if os.environ.get(DATA_ENV):
        dirs.append(Path(os.environ[DATA_ENV]).expanduser())
    dirs += working_directory_data_dirs()
    checkout = source_checkout_data_dir()
    if checkout is not None:
        dirs.append(checkout)
    dirs += [Path("~/.keras/datasets").expanduser(), Path("/usr/share/datasets")]
    unique: dict[Path, Path] = {}
    for directory in dirs:
        unique.setdefault(directory.resolve(), directory)
    return list(unique.values())


def _find(relative: str) -> Path | None:
    for directory in data_dirs():
        if (directory / relative).exists():
            return directory / relative
    return None


def _check_split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"Unknown `split`={split!r}. Allowed values: {', '.join(SPLITS)}.")
    return split


def sha256_file(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_local_copy(path: Path) -> bool | None:
    """Whether a local copy's files (a file, or a folder's files) have their registered
    sha256: None when no file of it is registered (e.g. a copy under other names)."""
    path = Path(path)
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    known = [f for f in files if f.name in CHECKSUMS]
    if not known:
        return None
    return all(sha256_file(f) == CHECKSUMS[f.name] for f in known)


def decode_image(encoded, channels: int = 0):
    """Decode JPEG bit-identically to PIL (INTEGER_ACCURATE IDCT); PNG/BMP/GIF as usual.
    TensorFlow ops (the ``tf.data`` engine); ``decode_image_array`` is the numpy twin."""
    tf = tensorflow_cpu.import_tensorflow("Decoding images with TensorFlow")
    is_jpeg = tf.strings.substr(encoded, 0, 3) == b"\xff\xd8\xff"
    return tf.cond(
        is_jpeg,
        lambda: tf.io.decode_jpeg(encoded, channels=channels, dct_method="INTEGER_ACCURATE"),
        lambda: tf.io.decode_image(encoded, channels=channels, expand_animations=False),
    )


# PIL modes by channel count, and what a file's own mode decodes to when ``channels`` is 0
# (as TensorFlow's decoders: palette images to RGB or RGBA, 16-bit grey to 8 bits).
_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _native_mode(image) -> str:
    if image.mode in _MODES.values():
        return image.mode
    if image.mode == "P":
        return "RGBA" if "transparency" in image.info else "RGB"
    if image.format == "GIF":
        return "RGB"
    return "RGBA" if "A" in image.mode else ("L" if image.mode in ("1", "I", "I;16", "F") else "RGB")


def _eight_bits(image):
    """``image`` with 8-bit channels: a 16- or 32-bit integer grey image is scaled to
    0-255 (65535 -> 255, as TensorFlow's PNG decoder does), never clipped; a float one is
    taken as 0-1 when its values are, else as 0-255; other modes are already 8-bit."""
    from PIL import Image

    if not (image.mode.startswith("I") or image.mode == "F"):
        return image
    wide = np.asarray(image, dtype=np.float64)
    if image.mode == "F":
        scale = 1 / 255 if wide.size and np.nanmax(wide) <= 1.0 else 1.0
    else:
        scale = 257.0  # 16 bits (a 16-bit PNG opens as "I;16" or "I")
    return Image.fromarray(np.clip(np.round(wide / scale), 0, 255).astype(np.uint8), "L")


def decode_image_array(encoded: bytes, channels: int = 0) -> np.ndarray:
    """Decode an image file's bytes to uint8 ``(H, W, C)`` with PIL: ``channels`` 1, 3 or 4
    (0: the file's own). JPEGs equal TensorFlow's INTEGER_ACCURATE decode bit for bit;
    16-bit images are scaled to 8 bits, an alpha channel dropped when ``channels`` asks
    for none."""
    from PIL import Image

    with Image.open(io.BytesIO(encoded)) as image:
        mode = _MODES[channels] if channels else _native_mode(image)
        image = _eight_bits(image)
        array = np.asarray(image.convert(mode) if image.mode != mode else image, dtype=np.uint8)
    return array[..., None] if array.ndim == 2 else array


class CorruptDataError(ValueError):
    """A local copy of a data set is truncated or corrupt; the message names the file."""


class BadImageError(ValueError):
    """An image file of a data set cannot be decoded; the message names it."""


def _pil_errors() -> tuple[type[BaseException], ...]:
    from PIL import Image

    return (OSError, ValueError, SyntaxError, Image.DecompressionBombError)


def bad_image(name: str, error: Exception) -> BadImageError:
    """The refusal of an image file that PIL cannot decode (not an image, or truncated)."""
    return BadImageError(
        f"{name} cannot be read as an image ({error}): remove it from the folder or replace "
        "it with an intact image."
    )


def decode_named(encoded: bytes, name: str, channels: int = 0) -> np.ndarray:
    """``decode_image_array``, refusing a file that is not an intact image with its name."""
    try:
        return decode_image_array(encoded, channels)
    except _pil_errors() as error:  # PIL's errors for bad image bytes, or too many pixels
        raise bad_image(name, error) from None


def decode_all(encoded: list[bytes], shape: tuple[int, int, int],
               names: list[str] | None = None) -> np.ndarray:
    """Decode many image files' bytes into one uint8 array ``(N, *shape)``, on a few
    threads (PIL's decoders release the GIL). ``names``: the files, named when one of
    them cannot be decoded."""
    from concurrent.futures import ThreadPoolExecutor

    images = np.empty((len(encoded), *shape), np.uint8)

    def decode_range(start: int) -> None:
        for i in range(start, min(start + 1024, len(encoded))):
            name = names[i] if names is not None else f"image {i}"
            images[i] = decode_named(encoded[i], name, shape[-1])

    with ThreadPoolExecutor(min(4, os.cpu_count() or 1)) as pool:
        list(pool.map(decode_range, range(0, len(encoded), 1024)))
    return images


# --- CIFAR-10 from the JPEG zip ----------------------------------------------------------
def _cifar10_zip(path: Path, split: str):
    names = CLASS_NAMES["cifar10"]
    index = {name: i for i, name in enumerate(names)}
    with zipfile.ZipFile(path) as archive:
        members = sorted(
            m for m in archive.namelist() if m.endswith(".jpg") and f"/{split}/" in m
        )
        encoded = [archive.read(member) for member in members]
    labels = np.asarray([index[member.split("/")[-2]] for member in members], np.int64)
    images = decode_all(encoded, (32, 32, 3))
    info = DatasetInfo(
        "cifar10", split, len(labels), 10, names, (32, 32, 3), str(path),
        note="CIFAR-10, JPEG q75 copy of the standard splits",
    )
    return images, labels, info


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
    image_file, label_file = FASHION_MNIST_FILES[split]
    x = read_idx(directory / image_file)[..., None]
    y = read_idx(directory / label_file).astype("int64")
    info = DatasetInfo(
        "fashion_mnist", split, len(y), 10, CLASS_NAMES["fashion_mnist"], (28, 28, 1),
        str(directory), note="Fashion-MNIST, the original IDX files (lossless)",
    )
    return x, y, info


# --- image folders ------------------------------------------------------------------------
def _folder_classes(directory: Path) -> tuple[str, ...]:
    names = tuple(sorted(d.name for d in directory.iterdir() if d.is_dir()))
    if not names:
        raise DatasetNotFoundError(f"{directory} has no class sub-folders.")
    return names


def _folder_shape(files: list[str]) -> tuple[int, int, int]:
    """The ``(height, width, channels)`` every image of a folder is read as: one size for
    all (else a ``ValueError`` naming two that differ), 1 channel when every image is grey
    (8-bit, 16-bit, with alpha or not), else 3 (RGB; an alpha channel is dropped, as
    Keras's folder loader does). PIL reads only the headers."""
    from PIL import Image

    size, grey = None, True
    for f in files:
        try:
            image = Image.open(f)
        except _pil_errors() as error:
            raise bad_image(f, error) from None
        with image:
            size = size or image.size
            if image.size != size:
                raise ValueError(
                    f"{f} is {image.size[0]}x{image.size[1]} but {files[0]} is "
                    f"{size[0]}x{size[1]}: an image folder needs images of one size. "
                    "Resize them first (e.g. with PIL's Image.resize)."
                )
            grey = grey and image.mode in GREY_MODES
    return size[1], size[0], 1 if grey else 3


def _class_files(folder: Path) -> list[str]:
    """The images of one class folder, its sub-folders included (as Keras's folder loader
    reads them), in sorted order."""
    return [str(f) for f in sorted(folder.rglob("*"))
            if f.suffix.lower() in IMAGE_EXTENSIONS and f.is_file()]


def _image_folder(root: Path, split: str):
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
        found = _class_files(split_dir / name)
        files += found
        labels += [label] * len(found)
    if not files:
        raise DatasetNotFoundError(f"No images ({', '.join(IMAGE_EXTENSIONS)}) under {split_dir}.")
    shape = _folder_shape(files)
    images = decode_all([Path(f).read_bytes() for f in files], shape, names=files)
    info = DatasetInfo(
        str(root), split, len(files), len(class_names), class_names, shape,
        str(root), note=f"image folder {root}",
    )
    return images, np.asarray(labels, np.int64), info


# --- tfds -----------------------------------------------------------------------------------
def _tfds(name: str, split: str, data_dir: str | None, download: bool):
    tensorflow_cpu.import_tensorflow(f"The tfds data set {name!r} (no local copy)")
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


def _local_arrays(tag: str, split: str):
    """``(images, labels, info)`` of an image folder or a local copy, or None when ``tag``
    has no local copy (then tfds is tried)."""
    path = Path(os.path.expanduser(tag))
    if path.is_dir() or tag.startswith(("/", ".", "~")):
        if not path.is_dir():
            raise DatasetNotFoundError(f"Image folder {tag!r} does not exist.")
        return _image_folder(path, split)
    if tag in _LOCAL:
        relative, reader = _LOCAL[tag]
        found = _find(relative)
        if found is not None:
            _warn_unless_registered(found)
            try:
                return reader(found, split)
            except (zipfile.BadZipFile, EOFError, gzip.BadGzipFile, zlib.error) as error:
                raise CorruptDataError(
                    f"The local copy {found} of {tag} is truncated or corrupt "
                    f"({type(error).__name__}: {error}): copy it again (its sha256 is in "
                    "keras_gated.datasets.CHECKSUMS), or remove it to use tfds.") from None
    return None


_VERIFIED: dict[tuple[str, float], bool | None] = {}


def _warn_unless_registered(path: Path) -> None:
    """Warn (once per file version) when a local copy's sha256 is not the registered one:
    it may be another encoding of the data set, and its accuracies are not the cards'."""
    import warnings

    key = (str(path), path.stat().st_mtime)
    if key not in _VERIFIED:
        _VERIFIED[key] = verify_local_copy(path)
        if _VERIFIED[key] is False:
            warnings.warn(f"{path} does not have the registered sha256 of its files "
                          "(keras_gated.datasets.CHECKSUMS): results on it may differ from "
                          "the model cards.", stacklevel=3)


def _tfds_or_error(tag: str, split: str, tfds_data_dir: str | None, download: bool | None):
    """tfds' ``(dataset, info)`` of ``tag``, or one clear ``DatasetNotFoundError``."""
    check_not_misspelt_tag(tag)
    if download is None:
        download = not (os.environ.get("KERAS_GATED_OFFLINE") or os.environ.get("HF_HUB_OFFLINE"))
    try:
        return _tfds(tag, split, tfds_data_dir, download)
    except ValueError as error:  # no TensorFlow here: its own sentence says what to install
        if not isinstance(error, tensorflow_cpu.TensorFlowRequiredError):
            raise _not_found(tag, split, error) from error
        looked = [str(d / _LOCAL[tag][0]) for d in data_dirs()] if tag in _LOCAL else []
        where = f" (no local copy in: {', '.join(looked)})" if looked else ""
        local = (f" Or set {DATA_ENV} to the folder that holds {_LOCAL[tag][0]}."
                 if tag in _LOCAL else "")
        raise type(error)(f"Data set {tag!r}{where}: {error}{local}", name="tensorflow") from error
    except Exception as error:  # tfds raises many types: name it all in one clear error
        raise _not_found(tag, split, error) from error


def check_not_misspelt_tag(tag: str) -> None:
    """Refuse a data set name that spells a local tag another way (``cifar-10``,
    ``CIFAR10``, ``fashion-mnist``), naming the tag, before tfds is asked."""
    def plain(name: str) -> str:
        return "".join(c for c in name.lower() if c.isalnum())

    for local in _LOCAL:
        if tag != local and plain(tag) == plain(local):
            raise DatasetNotFoundError(
                f"Unknown data set {tag!r}: did you mean the data tag {local!r} (the tags "
                f"are {', '.join(_LOCAL)}; else give an image folder or a tfds name)?")


def _not_found(tag: str, split: str, error: Exception) -> DatasetNotFoundError:
    if type(error).__name__ == "DatasetNotFoundError" and tag not in _LOCAL:
        return DatasetNotFoundError(_unknown_name_message(tag))
    looked = [str(d / _LOCAL[tag][0]) for d in data_dirs()] if tag in _LOCAL else []
    where = (
        "Looked for a local copy in: " + ", ".join(looked) + f"; then tfds.load({tag!r}) "
        if looked
        else f"tfds.load({tag!r}) "
    )
    how = _HOW_TO_GET.get(tag, "check the tfds name, or pass a path to an image folder")
    # tfds messages run over many lines: one line, cut at a word boundary.
    reason = textwrap.shorten(str(error), 300, placeholder=" ...")
    return DatasetNotFoundError(
        f"Data set {tag!r} ({split}) not found. {where}failed with "
        f"{type(error).__name__}: {reason}. To get it: {how}. "
        f"Set {DATA_ENV} to a directory holding the local copies."
    )


def load(
    tag: str,
    split: str = "train",
    *,
    tfds_data_dir: str | None = None,
    download: bool | None = None,
):
    """Load a split of a data set as a ``tf.data.Dataset``: local copies first, then tfds.
    Needs TensorFlow; ``load_numpy`` is the TensorFlow-free form.

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
    local = _local_arrays(tag, split)
    if local is None:
        return _tfds_or_error(tag, split, tfds_data_dir, download)
    tf = tensorflow_cpu.import_tensorflow("datasets.load (a tf.data.Dataset)")
    images, labels, info = local
    return tf.data.Dataset.from_tensor_slices((images, labels)), info


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
        f"laid out <root>/{{train,test}}/<class>/<image>, or a tfds name{hint}; "
        "tfds.list_builders() lists the tfds names."
    )


def adapt_array(images: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """``adapt_images`` for a numpy batch ``(N, H, W, C)`` of uint8 images: grey <-> RGB
    (ITU-R 601 luma, as TensorFlow's ``rgb_to_grayscale``), then centre pad or crop."""
    height, width, channels = shape
    have = images.shape[-1]
    if have == 1 and channels == 3:
        images = np.repeat(images, 3, axis=-1)
    elif have == 3 and channels == 1:
        luma = (images.astype(np.float32) / 255) @ np.array([0.2989, 0.5870, 0.1140], np.float32)
        images = np.floor(luma * np.float32(255.5)).clip(0, 255).astype(images.dtype)[..., None]
    elif have != channels:
        raise ValueError(f"Cannot adapt {have}-channel images to {channels} channels.")
    for axis, target in ((1, height), (2, width)):
        size = images.shape[axis]
        if size > target:  # centre crop
            start = (size - target) // 2
            images = np.take(images, np.arange(start, start + target), axis=axis)
        elif size < target:  # centre zero pad
            before = (target - size) // 2
            pad = [(0, 0)] * images.ndim
            pad[axis] = (before, target - size - before)
            images = np.pad(images, pad)
    return images


def adapt_images(ds, shape: tuple[int, int, int]):
    """Fit images to a model's input shape: grey <-> RGB, then centre pad or crop.

    E.g. Fashion-MNIST (28×28×1) for a CIFAR model (32×32×3): tiled to 3 channels and
    zero-padded by 2 pixels on every side. ``ds``: a ``tf.data.Dataset`` of ``(image,
    label)``, or a numpy batch of images (``adapt_array``).
    """
    if isinstance(ds, np.ndarray):
        return adapt_array(ds, shape)
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
    """A whole split as numpy arrays ``(images uint8 (N, H, W, C), labels int64 (N,),
    info)``, in the split's fixed order. Local copies and image folders load without
    TensorFlow; a tfds data set needs it (``kwargs``: ``load``'s)."""
    _check_split(split)
    local = _local_arrays(tag, split)
    if local is not None:
        return local
    ds, info = _tfds_or_error(tag, split, kwargs.get("tfds_data_dir"), kwargs.get("download"))
    images, labels = [], []
    for x, y in ds.batch(1024).as_numpy_iterator():
        images.append(x)
        labels.append(y)
    return np.concatenate(images), np.concatenate(labels).astype(np.int64), info
