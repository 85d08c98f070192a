"""python -m training.train end to end: outputs, kill-and-resume, NaN stop."""

import csv
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import keras
import pytest

from tests.helpers import make_image_folder
from keras_gated import recipes
from training import train

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_image_folder(tmp_path_factory.mktemp("data") / "tiny", per_class=(200, 20))


def _epochs(log: Path) -> list[int]:
    with log.open() as f:
        return [int(row["epoch"]) for row in csv.DictReader(f)]


def test_train_writes_log_checkpoints_and_metrics(folder, tmp_path):
    out = tmp_path / "run"
    code = train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "32", "--out", str(out), "--verbose", "0"])
    assert code == 0
    assert _epochs(out / "log.csv") == [0, 1]
    assert (out / "last.keras").exists() and (out / "best.keras").exists()
    assert any((out / "tensorboard").rglob("*tfevents*"))
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics) >= {"test_accuracy", "split", "num_examples", "dataset", "command"}
    assert metrics["split"] == "test" and metrics["num_examples"] == 40
    assert 0.0 <= metrics["test_accuracy"] <= 1.0
    assert metrics["command"].startswith(f"KERAS_BACKEND={keras.backend.backend()} python -m training.train")
    # The same command on a finished run only reports.
    assert train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "32", "--out", str(out), "--verbose", "0"]) == 0
    assert _epochs(out / "log.csv") == [0, 1]


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="runs once, in the JAX pass (fastest)")
def test_sigkill_after_first_epoch_then_resume(folder, tmp_path):
    out = tmp_path / "run"
    epochs = 12
    cmd = [sys.executable, "-m", "training.train", "--model", "gresnetfc2", "--dataset",
           str(folder), "--epochs", str(epochs), "--batch-size", "8", "--out", str(out),
           "--verbose", "0"]
    env = {**os.environ, "KERAS_BACKEND": "jax"}
    first = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log = out / "log.csv"
    pointer = out / "backup" / "latest.json"
    deadline = time.time() + 240
    while time.time() < deadline and first.poll() is None:
        if pointer.exists():  # the first epoch is logged and backed up
            break
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert first.returncode == -signal.SIGKILL, first.stderr.read().decode()[-2000:]
    killed_at = len(_epochs(log))
    assert 1 <= killed_at < epochs and not (out / "metrics.json").exists()
    backed_up = json.loads((out / "backup" / "latest.json").read_text())["epoch"]
    assert backed_up >= 1
    with log.open() as f:
        rows_before = list(csv.DictReader(f))[:backed_up]

    second = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"resuming from {out / 'backup'} after epoch {backed_up}" in second.stdout
    assert _epochs(log) == list(range(epochs))  # every epoch exactly once, full count
    with log.open() as f:
        assert list(csv.DictReader(f))[:backed_up] == rows_before  # not retrained
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["epochs"] == epochs and metrics["num_examples"] == 40


def test_nan_loss_stops_with_a_clear_message(folder, tmp_path, monkeypatch, capsys):
    exploding = dataclasses.replace(recipes.get_recipe("rg_mnist_fc"), name="exploding",
                                    optimizer="sgd", learning_rate=1e30, momentum=0.0)
    monkeypatch.setitem(recipes.RECIPES, "exploding", exploding)
    out = tmp_path / "nan"
    code = train.main(["--model", "plainnet2", "--dataset", str(folder), "--recipe", "exploding",
                       "--epochs", "3", "--batch-size", "16", "--out", str(out), "--verbose", "0"])
    assert code == 1
    assert "loss became NaN" in capsys.readouterr().err
    assert not (out / "metrics.json").exists()
    assert not (out / "backup" / "latest.json").exists()  # no NaN backup


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="runs once, in the TF pass")
def test_backend_flag_is_applied_before_keras_is_imported(folder, tmp_path):
    cmd = [sys.executable, "-m", "training.train", "--backend", "jax", "--model", "gresnetfc2",
           "--dataset", str(folder), "--epochs", "1", "--out", str(tmp_path / "run"), "--verbose", "0"]
    result = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "KERAS_BACKEND": "tensorflow"},
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "backend jax" in result.stdout
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["backend"] == "jax"


def test_unknown_recipe_is_a_clear_error(folder, tmp_path, capsys):
    code = train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--recipe", "adam",
                       "--out", str(tmp_path / "x")])
    assert code == 2 and "Unknown recipe 'adam'" in capsys.readouterr().err
