"""training.finetune never selects on the test split: by default it holds out a seeded
random tenth of the training examples, computes ``val_*`` and chooses ``best.keras`` on
it, names it in the card and ``metrics.json``, and reads the test split once, at the end."""

from __future__ import annotations

import csv
import json

import tensorflow as tf

from keras_gated import datasets
from tests.helpers import make_image_folder
from training import finetune


def test_finetune_validates_on_a_seeded_held_out_split_and_tests_once(tmp_path, monkeypatch):
    folder = make_image_folder(tmp_path / "new_data", shape=(28, 28, 1), per_class=(20, 6),
                               classes=2)
    test_reads = []
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
    out = tmp_path / "run"
    assert finetune.main(["--model", "gresnetfc2", "--weights", "none", "--dataset", str(folder),
                          "--epochs", "2", "--batch-size", "8", "--seed", "3",
                          "--out", str(out), "--verbose", "0"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["validation_split"] == 0.1 and metrics["val_num_examples"] == 4
    assert "held out at random" in metrics["val_split"] and "seed 3" in metrics["val_split"]
    assert metrics["train_examples"] == 36
    assert json.loads((out / "fingerprint.json").read_text())["validation_split"] == 0.1
    assert len(test_reads) == metrics["num_examples"] == 12  # the test split, read once
    with open(out / "log.csv") as f:
        assert all("val_accuracy" in row for row in csv.DictReader(f))  # per-epoch val_*
    card = (out / "zoo" / "gresnetfc2.new_data" / "README.md").read_text()
    assert "held out at random" in card and "seed 3" in card
