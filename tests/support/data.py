"""Shared test data: small JPEG files, and loaders patched to count the test examples a
command reads."""

import io

import numpy as np

from keras_gated import datasets


def jpegs(n, seed=0):
    from PIL import Image

    rng = np.random.default_rng(seed)
    files = []
    for _ in range(n):
        buffer = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (32, 32, 3), np.uint8)).save(buffer, "JPEG", quality=75)
        files.append(buffer.getvalue())
    return files


class CountedImages(np.ndarray):
    """Images that note, for each batch read of them, which examples were read and how
    many epochs ``log.csv`` held by then."""

    reads: list
    log: object

    def __getitem__(self, index):
        if isinstance(index, np.ndarray) and index.dtype.kind in "iu":
            epochs = len(self.log.read_text().splitlines()) - 1 if self.log.is_file() else 0
            self.reads.append((epochs, index.tolist()))
        return np.asarray(super().__getitem__(index))


def count_test_reads(monkeypatch, engine: str, log) -> list:
    """Patch the loaders so that every test example read by ``engine`` is counted (numpy:
    ``(epochs logged by then, examples)`` per batch read)."""
    test_reads: list = []
    if engine == "numpy":
        load_numpy = datasets.load_numpy

        def counting_load_numpy(tag, split="test", **kwargs):
            images, labels, info = load_numpy(tag, split, **kwargs)
            if split == "test":
                images = images.view(CountedImages)
                images.reads, images.log = test_reads, log
            return images, labels, info

        monkeypatch.setattr(datasets, "load_numpy", counting_load_numpy)
        return test_reads
    import tensorflow as tf

    load = datasets.load

    def counting_load(dataset, split, *args, **kwargs):
        """The data set as given, with each test example counted when it is read."""
        ds, info = load(dataset, split, *args, **kwargs)
        if split == "test":
            def count(image, label):
                tf.py_function(lambda: test_reads.append(1) or 0, [], tf.int32)
                return image, label
            ds = ds.map(count)
        return ds, info

    monkeypatch.setattr(datasets, "load", counting_load)
    return test_reads
