"""training.train never selects on the test split by default: it holds out a seeded
random tenth of the training examples (as training.finetune does), computes ``val_*``
and chooses ``best.keras`` on it, names it in ``metrics.json``, and reads the test split
once, at the end. ``--validation-split F`` still holds out F, ``--validation-split 0``
validates on the test split, and a run recorded before the held-out default resumes with
the validation it started with."""

from __future__ import annotations

import csv
import json

import pytest

from tests.support.helpers import make_image_folder, needs_tensorflow
from tests.support.data import count_test_reads
from keras_gated.training import run_dir
from training import train
from keras_gated.training.build import run_recipe


def _train(folder, out, engine, *flags):
    return train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "8", "--seed", "3", "--out", str(out), "--verbose", "0",
                       "--data-engine", engine, *flags])


@pytest.mark.parametrize("engine", ["numpy", pytest.param("tf", marks=needs_tensorflow)])
def test_train_validates_on_a_seeded_held_out_split_and_tests_once(tmp_path, monkeypatch,
                                                                    engine, capsys):
    folder = make_image_folder(tmp_path / "data", shape=(28, 28, 1), per_class=(20, 6),
                               classes=2)
    out = tmp_path / "run"
    test_reads = count_test_reads(monkeypatch, engine, out / "log.csv")
    assert _train(folder, out, engine) == 0
    assert "held out at random" in capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["validation_split"] == 0.1 and metrics["val_num_examples"] == 4
    assert "held out at random" in metrics["val_split"] and "seed 3" in metrics["val_split"]
    assert metrics["split"] == "test" and metrics["num_examples"] == 12
    fingerprint = json.loads((out / "fingerprint.json").read_text())
    assert fingerprint["validation_split"] == 0.1 and fingerprint["validation_seeded"] is True
    if engine == "tf":
        assert len(test_reads) == 12  # the test split, read once
    else:
        assert test_reads and all(epochs == 2 for epochs, _ in test_reads)
        assert sorted({i for _, batch in test_reads for i in batch}) == list(range(12))
    with open(out / "log.csv") as f:
        assert all("val_accuracy" in row for row in csv.DictReader(f))
    assert (out / "best.keras").is_file()
    assert "--validation-split" not in metrics["command"]  # the default reproduces it
    # The same command on the finished run only reports it.
    assert _train(folder, out, engine) == 0
    assert "already finished" in capsys.readouterr().out


def test_validation_split_zero_validates_on_the_test_split(tmp_path, capsys):
    folder = make_image_folder(tmp_path / "data", shape=(28, 28, 1), per_class=(20, 6),
                               classes=2)
    out = tmp_path / "run"
    assert _train(folder, out, "numpy", "--validation-split", "0") == 0
    assert "val_* metrics and best.keras: test" in capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["val_split"] == "test" and metrics["validation_split"] is None
    assert "--validation-split 0" in metrics["command"]


@pytest.mark.parametrize(("given", "stored", "resolved"), [
    (None, None, (0.1, True)),  # a new run: the default, seeded
    (0.25, None, (0.25, True)),
    (0.0, None, (None, False)),  # the test split
    (None, {"validation_split": None}, (None, False)),  # recorded before: as it started
    (None, {"validation_split": 0.2}, (0.2, False)),  # the last fraction, as it started
    (0.2, {"validation_split": 0.2}, (0.2, False)),
    (None, {"validation_split": 0.1, "validation_seeded": True}, (0.1, True)),
])
def test_the_validation_a_launch_uses(given, stored, resolved):
    assert train.resolve_validation(given, stored) == resolved


def test_a_run_recorded_before_the_default_resumes_and_other_values_are_refused(tmp_path):
    before = {"model": "gresnet20", "dataset": "cifar10", "epochs": 40, "batch_size": 128,
              "seed": 0}
    out = tmp_path / "run"
    (out / "backup").mkdir(parents=True)
    (out / "backup" / "latest.json").write_text(json.dumps({"epoch": 6}))
    (out / "fingerprint.json").write_text(json.dumps(before))

    def launch(*flags):
        args = train.build_parser().parse_args(
            ["--model", "gresnet20", "--dataset", "cifar10", "--epochs", "40", *flags])
        args.resolved_validation = train.resolve_validation(args.validation_split,
                                                            train.recorded_settings(out))
        settings = train.fingerprint(args, run_recipe(train.run_settings(args)), 128)
        return {key: settings[key] for key in (*before, "validation_split", "validation_seeded")}

    run_dir.check_fingerprint(out, launch(), "[train]", defaults=train.FINGERPRINT_DEFAULTS)
    with pytest.raises(run_dir.RunFolderError, match="validation_split: stored None, now 0.1"):
        run_dir.check_fingerprint(out, launch("--validation-split", "0.1"), "[train]",
                                  defaults=train.FINGERPRINT_DEFAULTS)
