"""CIFAR-10 (JPEG q75 copy) packed small enough to travel with a lease call.

Every JPEG of the copy begins with the same bytes (SOI, APP0, the quantisation and Huffman
tables, SOF and SOS headers for a 32×32 image: 623 bytes). A packed split stores that
shared header once, then every file's remaining bytes (its entropy-coded scan) end to end:

    file_i = header ‖ payload[offsets[i] : offsets[i + 1]]

so each JPEG file is rebuilt byte for byte, and decodes to the same pixels as the zip's
members. ``pack_split`` checks that on the decoded arrays (sha256 of the uint8 pixels and
of the labels), which the manifest records; ``load_split`` checks it again where the data
are unpacked.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

SPLITS = ("train", "test")


def array_sha256(array: np.ndarray) -> str:
    """sha256 of an array's bytes in C order (dtype and shape are recorded beside it)."""
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def pack(files: list[bytes], labels: np.ndarray) -> dict[str, np.ndarray]:
    """The shared header of ``files``, their remaining bytes end to end, and the offsets."""
    if not files:
        raise ValueError("Nothing to pack: the split has no images.")
    header = os.path.commonprefix(files)
    rest = [f[len(header):] for f in files]
    offsets = np.zeros(len(files) + 1, np.int64)
    offsets[1:] = np.cumsum([len(r) for r in rest])
    payload = np.frombuffer(b"".join(rest), np.uint8)
    return {
        "header": np.frombuffer(header, np.uint8),
        "payload": payload,
        "offsets": offsets,
        "labels": np.asarray(labels, np.uint8),
    }


def unpack(packed: dict[str, np.ndarray]) -> list[bytes]:
    """The JPEG files of a packed split, byte for byte."""
    header = packed["header"].tobytes()
    payload = packed["payload"].tobytes()
    offsets = packed["offsets"]
    return [header + payload[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]


def read_zip_split(zip_path: Path, split: str) -> tuple[list[bytes], np.ndarray]:
    """The split's JPEG files and labels from the CIFAR-10 zip, in the order
    ``keras_gated.datasets`` reads them (sorted member names)."""
    import zipfile

    from keras_gated.datasets import CLASS_NAMES

    index = {name: i for i, name in enumerate(CLASS_NAMES["cifar10"])}
    with zipfile.ZipFile(zip_path) as archive:
        members = sorted(m for m in archive.namelist() if m.endswith(".jpg") and f"/{split}/" in m)
        files = [archive.read(m) for m in members]
    labels = np.asarray([index[m.split("/")[-2]] for m in members], np.uint8)
    return files, labels


def decode(files: list[bytes]) -> np.ndarray:
    """uint8 (N, 32, 32, 3) pixels, decoded as ``keras_gated.datasets`` decodes them."""
    from keras_gated.datasets import decode_all

    return decode_all(files, (32, 32, 3))


def pack_split(zip_path: Path, split: str, out: Path) -> dict:
    """Write ``out`` (a .npz of the packed split) and return its manifest entry, after
    checking the packed files decode to the arrays of ``keras_gated.datasets.load_numpy``."""
    from keras_gated.datasets import load_numpy

    files, labels = read_zip_split(zip_path, split)
    packed = pack(files, labels)
    rebuilt = unpack(packed)
    if rebuilt != files:
        raise RuntimeError(f"The packed {split} split does not rebuild its JPEG files.")
    images = decode(rebuilt)
    reference, reference_labels, _ = load_numpy("cifar10", split)
    if not (np.array_equal(images, reference) and np.array_equal(labels, reference_labels)):
        raise RuntimeError(
            f"The packed {split} split decodes to other pixels or labels than "
            "keras_gated.datasets.load_numpy('cifar10'): check that both read the same zip."
        )
    np.savez(out, **packed)
    return {
        "file": out.name,
        "split": split,
        "count": int(len(labels)),
        "shape": list(images.shape),
        "pixels_sha256": array_sha256(images),
        "labels_sha256": array_sha256(labels),
    }


def load_split(path: Path, entry: dict) -> tuple[np.ndarray, np.ndarray]:
    """Decode a packed split and check its pixels and labels against the manifest entry;
    a different decode (another JPEG library) stops here, saying so."""
    with np.load(path) as data:
        packed = {k: data[k] for k in data.files}
    images = decode(unpack(packed))
    labels = packed["labels"]
    if array_sha256(labels) != entry["labels_sha256"]:
        raise SystemExit(f"{path.name}: the labels differ from the manifest's; run prepare again.")
    if array_sha256(images) != entry["pixels_sha256"]:
        import PIL

        raise SystemExit(
            f"{path.name}: the decoded pixels differ from those the manifest records "
            f"(Pillow {PIL.__version__} here decodes these JPEGs differently from the "
            "Pillow that prepared them); stopping rather than training on other data."
        )
    return images, labels.astype(np.int32)
