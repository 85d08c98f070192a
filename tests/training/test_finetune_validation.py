"""training.finetune never selects on the test split: by default it holds out a seeded
random tenth of the training examples, computes ``val_*`` and chooses ``best.keras`` on
it, names it in the card and ``metrics.json``, and reads the test split once, at the end
(on both input engines)."""

from __future__ import annotations

import csv
import json

import pytest

from tests.support.helpers import make_image_folder, needs_tensorflow
from tests.support.data import count_test_reads
from training import finetune



@pytest.mark.parametrize("engine", ["numpy", pytest.param("tf", marks=needs_tensorflow)])
def test_finetune_validates_on_a_seeded_held_out_split_and_tests_once(tmp_path, monkeypatch,
                                                                       engine):
    folder = make_image_folder(tmp_path / "new_data", shape=(28, 28, 1), per_class=(20, 6),
                               classes=2)
    out = tmp_path / "run"
    test_reads = count_test_reads(monkeypatch, engine, out / "log.csv")
    assert finetune.main(["--model", "gresnetfc2", "--weights", "none", "--dataset", str(folder),
                          "--epochs", "2", "--batch-size", "8", "--seed", "3",
                          "--out", str(out), "--verbose", "0",
                          "--data-engine", engine]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["validation_split"] == 0.1 and metrics["val_num_examples"] == 4
    assert "held out at random" in metrics["val_split"] and "seed 3" in metrics["val_split"]
    assert metrics["train_examples"] == 36
    assert json.loads((out / "fingerprint.json").read_text())["validation_split"] == 0.1
    assert metrics["num_examples"] == 12
    if engine == "tf":
        assert len(test_reads) == 12  # the test split, read once
    else:
        # Read only once training has ended (Keras's threaded PyDataset reader may read
        # ahead a second pass that nothing consumes), and every example of it.
        assert test_reads and all(epochs == 2 for epochs, _ in test_reads)
        assert sorted({i for _, batch in test_reads for i in batch}) == list(range(12))
    with open(out / "log.csv") as f:
        assert all("val_accuracy" in row for row in csv.DictReader(f))  # per-epoch val_*
    card = (out / "zoo" / "gresnetfc2.new_data" / "README.md").read_text()
    assert "held out at random" in card and "seed 3" in card
