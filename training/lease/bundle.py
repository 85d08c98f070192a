"""The bundle a lease call brings back: a trained net's weights, losslessly compressed in
at most 8 files of at most 16 MiB, with what is needed to check and release them.

Files (``DIR/``):

* ``manifest.json`` — every other file's sha256 and size, and the tensor index: each
  weight's Keras variable path, shape, stored dtype and place in the stream;
* ``weights.zlib.NNN`` — the weight stream, zlib-compressed in shards of at most 15 MiB
  of raw bytes (so each file stays under 16 MiB);
* ``metrics.json`` — the run's record (command, recipe, steps, img/s, test accuracy...);
* ``log.csv`` — one row per epoch.

A call that trains several nets (``--model A B ...``) brings each back as one file,
``DIR/<model>.tar``: the same files in an uncompressed tar (the shards are compressed
already), so that several bundles stay within the files a call may return.

The stream holds the trainable weights rounded to bfloat16 (the precision they were
trained in under ``mixed_bfloat16``), stored as byte planes — every value's high byte
(sign and exponent, which compress well), then every low byte — followed by the other
weights (BatchNorm moving statistics) in float32. bfloat16 → float32 is exact, so a net
loaded from a bundle computes with exactly the weights the bundle's accuracy was
measured on.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable, Iterator

import ml_dtypes
import numpy as np

MANIFEST = "manifest.json"
METRICS = "metrics.json"
LOG = "log.csv"
SHARD_PREFIX = "weights.zlib."
SHARD_RAW_BYTES = 15 * 2**20
MAX_FILES = 8
MAX_FILE_BYTES = 16 * 2**20
MAX_TOTAL_BYTES = 60 * 2**20
FORMAT = "keras-gated lease bundle 1"
PACKED_SUFFIX = ".tar"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(2**20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def to_bfloat16(value: np.ndarray) -> np.ndarray:
    """Round to nearest even bfloat16 (ml_dtypes' cast)."""
    return np.asarray(value, np.float32).astype(ml_dtypes.bfloat16)


def encode_stream(named: Iterable[tuple[str, np.ndarray, bool]]) -> tuple[bytes, list[dict]]:
    """(stream, index) of (path, value, as_bfloat16) triples, in the module's layout."""
    low_precision, full = [], []
    for path, value, as_bf16 in named:
        (low_precision if as_bf16 else full).append((path, np.asarray(value)))
    index = []
    words = []
    count = 0
    for path, value in low_precision:
        bits = to_bfloat16(value).view(np.uint16).ravel()
        index.append({"path": path, "shape": list(value.shape), "dtype": "bfloat16",
                      "start": count, "count": int(bits.size)})
        words.append(bits)
        count += bits.size
    planes = np.concatenate(words) if words else np.zeros(0, np.uint16)
    stream = [(planes >> 8).astype(np.uint8).tobytes(), (planes & 0xFF).astype(np.uint8).tobytes()]
    offset = 2 * count
    for path, value in full:
        raw = np.asarray(value, np.float32).tobytes()
        index.append({"path": path, "shape": list(value.shape), "dtype": "float32",
                      "offset": offset, "nbytes": len(raw)})
        stream.append(raw)
        offset += len(raw)
    return b"".join(stream), index + [{"bfloat16_count": int(count)}]


def decode_stream(stream: bytes, index: list[dict]) -> dict[str, np.ndarray]:
    """The float32 values of every weight, by variable path."""
    total = next(e["bfloat16_count"] for e in index if "bfloat16_count" in e)
    high = np.frombuffer(stream, np.uint8, total, 0).astype(np.uint16)
    low = np.frombuffer(stream, np.uint8, total, total).astype(np.uint16)
    words = (high << 8) | low
    values = {}
    for entry in index:
        if "path" not in entry:
            continue
        shape = tuple(entry["shape"])
        if entry["dtype"] == "bfloat16":
            bits = words[entry["start"]:entry["start"] + entry["count"]]
            values[entry["path"]] = bits.view(ml_dtypes.bfloat16).astype(np.float32).reshape(shape)
        else:
            raw = stream[entry["offset"]:entry["offset"] + entry["nbytes"]]
            values[entry["path"]] = np.frombuffer(raw, np.float32).reshape(shape).copy()
    return values


def _compress_shards(stream: bytes, level: int) -> list[bytes]:
    chunks = [stream[i:i + SHARD_RAW_BYTES] for i in range(0, len(stream), SHARD_RAW_BYTES)]
    with ThreadPoolExecutor(max(1, min(len(chunks), os.cpu_count() or 1))) as pool:
        return list(pool.map(lambda c: zlib.compress(c, level), chunks))


def write_bundle(
    out: Path,
    named: Iterable[tuple[str, np.ndarray, bool]],
    metrics: dict,
    log_rows: list[dict],
    *,
    level: int = 9,
) -> dict:
    """Write a bundle into ``out``, whole: it is written into a new folder beside ``out``
    and moved in place of the bundle ``out`` held (only a bundle: any other content of
    ``out`` is refused). Returns the manifest."""
    out = Path(out)
    if out.is_symlink():
        raise SystemExit(f"{out} is a symbolic link: give the bundle a real folder.")
    if out.exists() and not is_bundle_or_empty(out):
        raise SystemExit(
            f"{out} holds files that are not a lease bundle: give an empty or new folder."
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    stream, index = encode_stream(named)
    shards = _compress_shards(stream, level)
    if len(shards) + 3 > MAX_FILES:
        raise ValueError(f"{len(shards)} weight shards: more than {MAX_FILES - 3} do not travel back.")
    # Staged outside ``out``'s folder, so that the folder a lease call brings back never
    # holds more than one bundle, even when the call is killed while one is written.
    staging = Path(tempfile.mkdtemp(prefix="keras-gated-bundle-"))
    try:
        files = {}
        for i, shard in enumerate(shards):
            name = f"{SHARD_PREFIX}{i:03d}"
            (staging / name).write_bytes(shard)
            files[name] = shard
        (staging / METRICS).write_text(json.dumps(metrics, indent=2, default=str) + "\n")
        (staging / LOG).write_text(_csv(log_rows))
        manifest = {
            "format": FORMAT,
            "raw_bytes": len(stream),
            "shards": [f"{SHARD_PREFIX}{i:03d}" for i in range(len(shards))],
            "tensors": index,
            "files": {
                p.name: {"sha256": sha256_file(p), "bytes": p.stat().st_size}
                for p in sorted(staging.iterdir())
            },
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        check_limits(staging)
        if out.exists():
            for old in out.iterdir():  # a bundle (checked above): its files only
                old.unlink()
            out.rmdir()
        shutil.move(str(staging), str(out))
        out.chmod(0o755)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def write_packed_bundle(
    tar_path: Path,
    named: Iterable[tuple[str, np.ndarray, bool]],
    metrics: dict,
    log_rows: list[dict],
    *,
    level: int = 9,
) -> dict:
    """``write_bundle``, packed into the one file ``tar_path`` (``DIR/<model>.tar``), which
    appears whole: it replaces an earlier packed bundle there, never any other file."""
    tar_path = Path(tar_path)
    if tar_path.suffix != PACKED_SUFFIX:
        raise SystemExit(f"{tar_path}: a packed bundle's name ends in {PACKED_SUFFIX}.")
    if tar_path.is_symlink() or (tar_path.exists() and not is_packed_bundle(tar_path)):
        raise SystemExit(f"{tar_path} exists and is not a packed lease bundle: give a new --out.")
    staging = Path(tempfile.mkdtemp(prefix="keras-gated-packed-"))
    try:
        manifest = write_bundle(staging / "bundle", named, metrics, log_rows, level=level)
        tar_path.parent.mkdir(parents=True, exist_ok=True)
        partial = staging / tar_path.name
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted((staging / "bundle").iterdir()):
                tar.add(path, arcname=path.name, recursive=False)
        if partial.stat().st_size > MAX_FILE_BYTES:
            raise ValueError(f"The packed bundle of {tar_path.stem} is "
                             f"{partial.stat().st_size / 2**20:.1f} MiB, over the 16 MiB a returned "
                             "file may have: train this net alone (one --model), unpacked.")
        # Written beside the bundle's name, then renamed onto it: never half a file there.
        beside = tar_path.with_name(f".{tar_path.name}.partial")
        shutil.copyfile(partial, beside)
        os.replace(beside, tar_path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return manifest


def is_packed_bundle(path: Path) -> bool:
    """True when ``path`` is a tar file whose members are a lease bundle's files only."""
    path = Path(path)
    if path.is_symlink() or not path.is_file() or not tarfile.is_tarfile(path):
        return False
    with tarfile.open(path) as tar:
        members = tar.getmembers()
    return (any(m.name == MANIFEST for m in members)
            and all(m.isfile() and "/" not in m.name and _bundle_file_name(m.name) for m in members))


@contextlib.contextmanager
def unpacked_bundle(tar_path: Path) -> Iterator[Path]:
    """The packed bundle ``tar_path`` unpacked into a temporary folder, removed afterwards
    (only plain files at the tar's top level are accepted)."""
    if not is_packed_bundle(tar_path):
        raise ValueError(f"{tar_path} is not a packed lease bundle (a tar of its files only).")
    folder = Path(tempfile.mkdtemp(prefix="keras-gated-unpacked-"))
    try:
        with tarfile.open(tar_path) as tar:
            tar.extractall(folder, filter="data")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _bundle_file_name(name: str) -> bool:
    return name in {MANIFEST, METRICS, LOG} or name.startswith(SHARD_PREFIX)


def is_bundle_or_empty(folder: Path) -> bool:
    return all(_bundle_file_name(p.name) for p in folder.iterdir())


def check_limits(folder: Path) -> None:
    """Refuse a bundle that would not come back whole from a lease call."""
    files = [p for p in folder.iterdir() if p.is_file()]
    sizes = {p.name: p.stat().st_size for p in files}
    problems = []
    if len(files) > MAX_FILES:
        problems.append(f"{len(files)} files (at most {MAX_FILES})")
    problems += [f"{n} is {s / 2**20:.1f} MiB (at most 16)" for n, s in sizes.items() if s > MAX_FILE_BYTES]
    if sum(sizes.values()) > MAX_TOTAL_BYTES:
        problems.append(f"{sum(sizes.values()) / 2**20:.1f} MiB in all (at most 60)")
    if problems:
        raise ValueError(f"The bundle in {folder} would not come back whole: {'; '.join(problems)}.")


def read_bundle(folder: Path) -> tuple[dict[str, np.ndarray], dict, dict]:
    """(weights by variable path, manifest, metrics) of a bundle, every file's sha256
    checked against the manifest."""
    folder = Path(folder)
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{folder} has no {MANIFEST}: it is not a lease bundle.")
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{manifest_path}: unknown bundle format {manifest.get('format')!r}.")
    for name, entry in manifest["files"].items():
        path = folder / name
        if path.is_symlink() or not path.is_file():
            raise FileNotFoundError(f"{path} is missing or not a regular file.")
        if sha256_file(path) != entry["sha256"]:
            raise ValueError(f"{path}: sha256 differs from the bundle's manifest (damaged copy).")
    stream = b"".join(zlib.decompress((folder / n).read_bytes()) for n in manifest["shards"])
    if len(stream) != manifest["raw_bytes"]:
        raise ValueError(f"{folder}: the weight stream has {len(stream)} bytes, not {manifest['raw_bytes']}.")
    metrics = json.loads((folder / METRICS).read_text())
    return decode_stream(stream, manifest["tensors"]), manifest, metrics


def _csv(rows: list[dict]) -> str:
    """``rows`` as CSV text, the first row's keys as the header (empty without rows)."""
    if not rows:
        return ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def model_weights(model) -> list[tuple[str, np.ndarray, bool]]:
    """(path, value, as_bfloat16) of every saved weight of a Keras model: trainable ones
    in bfloat16, the rest (moving statistics) in float32; dropout seed states left out."""
    trainable = {id(v) for v in model.trainable_weights}
    return [
        (v.path, np.asarray(v.numpy(), np.float32), id(v) in trainable)
        for v in model.weights
        if "seed_generator" not in v.path
    ]


def assign_weights(model, values: dict[str, np.ndarray]) -> None:
    """Set a model's weights from a bundle, by variable path; every weight must be there."""
    missing = [v.path for v in model.weights if "seed_generator" not in v.path and v.path not in values]
    if missing:
        raise ValueError(f"The bundle has no value for {len(missing)} weights, e.g. {missing[:3]}.")
    for v in model.weights:
        if "seed_generator" in v.path:
            continue
        value = values[v.path]
        if tuple(value.shape) != tuple(v.shape):
            raise ValueError(f"{v.path}: the bundle's shape {value.shape} is not the model's {v.shape}.")
        v.assign(value)


def state_weights(model, trainable_values, non_trainable_values) -> list[tuple[str, np.ndarray, bool]]:
    """``model_weights`` of values held outside the model (a training state's lists, in
    the order of ``model.trainable_variables`` and ``model.non_trainable_variables``)."""
    named = [(v.path, np.asarray(x, np.float32), True)
             for v, x in zip(model.trainable_variables, trainable_values)]
    named += [(v.path, np.asarray(x, np.float32), False)
              for v, x in zip(model.non_trainable_variables, non_trainable_values)
              if "seed_generator" not in v.path]
    return named
