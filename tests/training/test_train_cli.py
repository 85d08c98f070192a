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

from keras_gated.training import recipes
from tests.support.helpers import make_image_folder, needs_tensorflow
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
    from keras_gated.training.loop import tensorboard_available

    if tensorboard_available():  # TensorBoard's writer needs TensorFlow
        assert any((out / "tensorboard").rglob("*tfevents*"))
    else:
        assert not (out / "tensorboard").exists()
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics) >= {"test_accuracy", "split", "num_examples", "dataset", "command"}
    assert metrics["split"] == "test" and metrics["num_examples"] == 40
    assert 0.0 <= metrics["test_accuracy"] <= 1.0
    assert metrics["command"].startswith(f"KERAS_BACKEND={keras.backend.backend()} python -m training.train")
    # The same command on a finished run only reports.
    assert train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "32", "--out", str(out), "--verbose", "0"]) == 0
    assert _epochs(out / "log.csv") == [0, 1]
    # A checkout with only the committed resume state (no metrics.json, no ignored *.keras)
    # finishes the run without training: the final model is the last epoch's backup.
    (out / "metrics.json").unlink()
    (out / "last.keras").unlink()
    assert train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "32", "--out", str(out), "--verbose", "0"]) == 0
    assert _epochs(out / "log.csv") == [0, 1]
    assert (out / "last.keras").exists()
    again = json.loads((out / "metrics.json").read_text())
    assert again["test_accuracy"] == metrics["test_accuracy"]


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


# --- --model-arg, --validation-split, --lr --------------------------------------------------
from keras_gated.training import run_dir  # noqa: E402

# fingerprint.json of training/runs/gresnet20.cifar10 as written before the three flags
# existed: the CIFAR runs resume from folders like it.
CIFAR_FINGERPRINT_BEFORE_FLAGS = {
    "model": "gresnet20", "dataset": "cifar10",
    "recipe": {"name": "preact_cifar", "optimizer": "sgd", "learning_rate": 0.1, "momentum": 0.9,
               "nesterov": True, "lr_boundaries": [0.5, 0.75], "lr_decay": 0.1,
               "lr_epoch_decay": 1.0, "weight_decay": 0.0001, "decay": "all",
               "decay_gates": False, "pad": 4, "pad_mode": "mean", "flip": True, "dropout": None},
    "epochs": 40, "batch_size": 128, "seed": 0,
    "model_kwargs": {"classes": 10, "input_shape": [32, 32, 3]},
}


def _settings(*flags, stored=None):
    """The fingerprint a `training.train` launch records (model kwargs included) on a
    folder whose run recorded ``stored``."""
    args = train.build_parser().parse_args(
        ["--model", "gresnet20", "--dataset", "cifar10", "--epochs", "40", *flags])
    args.resolved_validation = train.resolve_validation(args.validation_split, stored)
    recipe = train.recipe_for_run(recipes.get_recipe("preact_cifar").with_epochs(40), args, 128)
    return {**train.fingerprint(args, recipe, 128),
            "model_kwargs": {"classes": 10, "input_shape": (32, 32, 3)}}


def _folder_with_backup(tmp_path, fingerprint):
    out = tmp_path / "run"
    (out / "backup").mkdir(parents=True)
    (out / "backup" / "latest.json").write_text(json.dumps({"epoch": 6}))
    (out / "fingerprint.json").write_text(json.dumps(fingerprint, indent=2))
    return out


def test_model_arg_values_are_python_literals_else_strings():
    args = train.build_parser().parse_args(
        ["--model", "highwayfc50", "--dataset", "fashion_mnist", "--model-arg", "transform_bias=-2",
         "--model-arg", "k_init=0.5", "--model-arg", "gate=relu", "--model-arg", "flag=True",
         "--lr", "0.03", "--validation-split", "0.1"])
    assert train.model_args(args) == {"transform_bias": -2, "k_init": 0.5, "gate": "relu",
                                      "flag": True}
    assert args.lr == 0.03 and args.validation_split == 0.1
    # The reproducing command parses back into the same settings.
    command = train.reproduce_command(args, "jax").split()
    again = train.build_parser().parse_args(command[command.index("--model"):])
    assert train.model_args(again) == train.model_args(args)
    assert (again.lr, train.validation_of(again)) == (0.03, (0.1, True))
    assert "--model-arg k_init=0.5" in " ".join(command)


@pytest.mark.parametrize("flags", [["--model-arg", "k_init"], ["--model-arg", "=1"]])
def test_a_malformed_model_arg_is_refused_before_anything_runs(flags, tmp_path, capsys):
    code = train.main(["--model", "gresnetfc2", "--dataset", "x", "--out", str(tmp_path / "r"),
                       *flags])
    assert code == 2 and "is not NAME=VALUE" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_model_arg_set_from_the_data_is_refused(tmp_path, capsys):
    code = train.main(["--model", "gresnetfc2", "--dataset", "x", "--out", str(tmp_path / "r"),
                       "--model-arg", "classes=3"])
    assert code == 2 and "set from the data set" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_clip_norm_is_a_recipe_setting_of_the_run():
    args = train.build_parser().parse_args(
        ["--model", "gwrn_16_2", "--dataset", "cifar10", "--clip-norm", "2.5", "--lr", "0.01"])
    recipe = train.recipe_for_run(recipes.get_recipe("wrn_cifar"), args, 64)
    assert (recipe.gradient_clip_norm, recipe.learning_rate, recipe.batch_size) == (2.5, 0.01, 64)
    assert "gradient clipped to global norm 2.5" in recipe.describe()
    assert train.recipe_settings(recipe)["gradient_clip_norm"] == 2.5
    command = train.reproduce_command(args, "tensorflow").split()
    again = train.build_parser().parse_args(command[command.index("--model"):])
    assert again.clip_norm == 2.5 and "--clip-norm 2.5" in " ".join(command)


@pytest.mark.parametrize("flags, message", [
    (["--clip-norm", "0"], "> 0"),
    (["--validation-split", "1"], "between 0 and 1"),
    (["--validation-split", "-0.1"], "between 0 and 1"),
    (["--lr", "-0.1"], "> 0"),
])
def test_bad_new_flags_are_refused_before_anything_runs(flags, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        train.main(["--model", "gresnetfc2", "--dataset", "x", "--out", str(tmp_path / "r"), *flags])
    assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_model_arg_given_twice_with_two_values_is_refused(tmp_path, capsys):
    code = train.main(["--model", "gresnetfc2", "--dataset", "x", "--out", str(tmp_path / "r"),
                       "--model-arg", "k_init=0.5", "--model-arg", "k_init=0.75"])
    assert code == 2 and "given twice" in capsys.readouterr().err


def test_a_fingerprint_from_before_the_new_flags_resumes_without_them(tmp_path):
    """Critical: the CIFAR runs resume from folders whose fingerprint lacks model_args,
    validation_split and lr; a launch without the flags is the same run, and the stored
    file is left as it is."""
    out = _folder_with_backup(tmp_path, CIFAR_FINGERPRINT_BEFORE_FLAGS)
    before = (out / "fingerprint.json").read_text()
    resumed = _settings(stored=CIFAR_FINGERPRINT_BEFORE_FLAGS)
    run_dir.check_fingerprint(out, resumed, "[train]", defaults=train.FINGERPRINT_DEFAULTS)
    assert (out / "fingerprint.json").read_text() == before
    assert run_dir.differences(CIFAR_FINGERPRINT_BEFORE_FLAGS, resumed,
                               train.FINGERPRINT_DEFAULTS) == []


@pytest.mark.parametrize("flags, field", [
    (["--lr", "0.05"], "lr: stored None, now 0.05"),
    (["--model-arg", "k_init=0.5"], "model_args: stored {}, now {'k_init': 0.5}"),
    (["--validation-split", "0.1"], "validation_split: stored None, now 0.1"),
    (["--clip-norm", "1"], "clip_norm: stored None, now 1.0"),
])
def test_a_fingerprint_from_before_the_new_flags_refuses_other_values(tmp_path, flags, field):
    out = _folder_with_backup(tmp_path, CIFAR_FINGERPRINT_BEFORE_FLAGS)
    with pytest.raises(run_dir.RunFolderError, match="holds the backup of another run") as error:
        run_dir.check_fingerprint(out, _settings(*flags, stored=CIFAR_FINGERPRINT_BEFORE_FLAGS),
                                  "[train]", defaults=train.FINGERPRINT_DEFAULTS)
    assert field in str(error.value)


def test_a_clipped_run_is_not_resumed_nor_reported_without_the_clip(tmp_path):
    """--clip-norm is compared both ways: a launch without it neither resumes nor reports a
    run recorded with it."""
    out = _folder_with_backup(tmp_path, _settings("--clip-norm", "1"))
    run_dir.check_fingerprint(out, _settings("--clip-norm", "1"), "[train]",
                              defaults=train.FINGERPRINT_DEFAULTS)
    for flags in ([], ["--clip-norm", "2"]):
        with pytest.raises(run_dir.RunFolderError, match="clip_norm: stored 1.0"):
            run_dir.check_fingerprint(out, _settings(*flags), "[train]",
                                      defaults=train.FINGERPRINT_DEFAULTS)
    (out / "metrics.json").write_text(json.dumps({"test_accuracy": 0.6, "epochs": 40}))
    settings = {k: v for k, v in _settings().items() if k != "model_kwargs"}
    with pytest.raises(run_dir.RunFolderError, match="clip_norm"):
        run_dir.finished_run(out, settings, 40, defaults=train.FINGERPRINT_DEFAULTS)


def test_model_args_are_compared_whole(tmp_path):
    """A run with k_init=0.5 is not resumed by a launch without it (nor with another)."""
    stored = _settings("--model-arg", "k_init=0.5")
    out = _folder_with_backup(tmp_path, stored)
    run_dir.check_fingerprint(out, _settings("--model-arg", "k_init=0.5"), "[train]",
                              defaults=train.FINGERPRINT_DEFAULTS)
    for flags in ([], ["--model-arg", "k_init=0.75"], ["--model-arg", "k_init=0.5", "--model-arg", "x=1"]):
        with pytest.raises(run_dir.RunFolderError, match="model_args"):
            run_dir.check_fingerprint(out, _settings(*flags), "[train]",
                                      defaults=train.FINGERPRINT_DEFAULTS)


def test_a_finished_run_from_before_the_new_flags_is_reported_not_refused(tmp_path):
    out = _folder_with_backup(tmp_path, CIFAR_FINGERPRINT_BEFORE_FLAGS)
    (out / "metrics.json").write_text(json.dumps({"test_accuracy": 0.9, "epochs": 40,
                                                  "model": "gresnet20"}))
    before = CIFAR_FINGERPRINT_BEFORE_FLAGS
    settings = {k: v for k, v in _settings(stored=before).items() if k != "model_kwargs"}
    assert run_dir.finished_run(out, settings, 40, defaults=train.FINGERPRINT_DEFAULTS)
    with pytest.raises(run_dir.RunFolderError, match="lr: stored None, now 0.05"):
        settings = {k: v for k, v in _settings("--lr", "0.05", stored=before).items()
                    if k != "model_kwargs"}
        run_dir.finished_run(out, settings, 40, defaults=train.FINGERPRINT_DEFAULTS)


@needs_tensorflow
def test_validation_split_holds_out_the_last_fraction_in_order():
    import tensorflow as tf

    from keras_gated.datasets import DatasetInfo

    ds = tf.data.Dataset.from_tensor_slices((tf.range(10), tf.range(10)))
    info = DatasetInfo("t", "train", 10, 2, ("a", "b"), (1,), "src")
    kept, kept_info, val, val_info = train.split_validation(ds, info, 0.3)
    assert [int(x) for x, _ in kept] == list(range(7)) and kept_info.num_examples == 7
    assert [int(x) for x, _ in val] == [7, 8, 9] and val_info.num_examples == 3
    assert "train[7:10]" in val_info.note
    assert train.split_validation(ds, info, None) == (ds, info, None, None)
    with pytest.raises(ValueError, match="both must be at least 1"):
        train.split_validation(ds, info, 0.01)


def test_new_flags_reach_the_model_the_data_and_the_run_records(folder, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["--model", "gplainnet2", "--dataset", str(folder), "--epochs", "1", "--batch-size", "32",
            "--model-arg", "k_init=0.5", "--validation-split", "0.25", "--lr", "0.001",
            "--out", str(out), "--verbose", "0"]
    assert train.main(argv) == 0
    printed = capsys.readouterr().out
    assert "val_* metrics and best.keras: 100 training examples held out at random" in printed
    fingerprint = json.loads((out / "fingerprint.json").read_text())
    assert fingerprint["model_args"] == {"k_init": 0.5}
    assert fingerprint["validation_split"] == 0.25 and fingerprint["lr"] == 0.001
    assert fingerprint["recipe"]["learning_rate"] == 0.001
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["model_args"] == {"k_init": 0.5} and metrics["lr"] == 0.001
    assert metrics["validation_split"] == 0.25 and metrics["val_num_examples"] == 100
    assert "held out at random (fraction 0.25, seed 0)" in metrics["val_split"]
    assert 0 <= metrics["val_accuracy"] <= 1
    assert metrics["split"] == "test" and metrics["num_examples"] == 40  # test_accuracy: test
    assert "lr 0.001 constant" in metrics["recipe"]
    # The model was built with k_init: 13 Nadam steps of lr 0.001 move k by 0.013 at most.
    from keras_gated.gating import gate_variables

    ks = [float(keras.ops.convert_to_numpy(v)) for v in
          gate_variables(keras.saving.load_model(out / "last.keras", compile=False))]
    assert ks and all(abs(k - 0.5) < 0.05 for k in ks), ks
    # The recorded command is this run: on the finished folder it only reports.
    command = metrics["command"].split()
    assert train.main([*command[command.index("--model"):], "--out", str(out), "--verbose", "0"]) == 0
    assert "is already finished" in capsys.readouterr().out
    # Another learning rate on the same folder is refused, naming it.
    code = train.main([*argv[:-4], "--lr", "0.002", "--out", str(out), "--verbose", "0"])
    assert code == 2 and "lr: stored 0.001, now 0.002" in capsys.readouterr().err


class _Killed(BaseException):
    """Ends a run in this process where a kill would (not an ``Exception``: nothing in
    the run catches it)."""


def _kill_after_first_call(monkeypatch, owner, name):
    """Make ``owner.name`` raise ``_Killed`` once it has run for the first time."""
    real = getattr(owner, name)

    def killed(*args, **kwargs):
        real(*args, **kwargs)
        raise _Killed

    monkeypatch.setattr(owner, name, killed)


@pytest.mark.parametrize("engine", ["numpy", "tf"])
def test_a_run_stopped_at_an_epoch_boundary_ends_as_the_uninterrupted_run(
        engine, folder, tmp_path, monkeypatch):
    """The order and the crops and flips of epoch e are a function of the seed and e on
    both engines, so a run stopped after an epoch's backup and started again in a fresh
    pipeline trains on the batches the uninterrupted run trains on."""
    if engine == "tf":
        pytest.importorskip("tensorflow", reason="the tf.data engine needs TensorFlow")
    from keras_gated.training import loop

    def run(out):
        return train.main(["--model", "gresnetfc2", "--recipe", "preact_cifar", "--dataset", str(folder), "--epochs", "3",
                           "--batch-size", "64", "--data-engine", engine, "--seed", "3",
                           "--out", str(out), "--verbose", "0"])

    assert run(tmp_path / "whole") == 0
    stopped = tmp_path / "stopped"
    with monkeypatch.context() as patch:  # the process ends after epoch 1's backup
        _kill_after_first_call(patch, loop.WallClock, "save")
        with pytest.raises(_Killed):
            run(stopped)
    assert json.loads((stopped / "backup" / "latest.json").read_text())["epoch"] == 1
    assert run(stopped) == 0
    whole = list(csv.DictReader((tmp_path / "whole" / "log.csv").open()))
    resumed = list(csv.DictReader((stopped / "log.csv").open()))
    assert [row["epoch"] for row in resumed] == ["0", "1", "2"]
    for a, b in zip(whole, resumed):
        for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
            assert float(a[key]) == pytest.approx(float(b[key]), rel=1e-5, abs=1e-6), (a, b)
    final = [json.loads((run_dir / "metrics.json").read_text())["test_accuracy"]
             for run_dir in (tmp_path / "whole", stopped)]
    assert final[0] == final[1]


def test_a_run_killed_before_its_first_backup_is_not_restarted_with_other_settings(
        folder, tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    args = ["--model", "gresnetfc2", "--dataset", str(folder), "--batch-size", "32",
            "--out", str(out), "--verbose", "0"]
    out.mkdir()  # made beforehand: a launch that fails removes only a folder it made
    with monkeypatch.context() as patch:  # killed at the end of the first epoch, before its backup
        _kill_after_first_call(patch, keras.callbacks.CSVLogger, "on_epoch_end")
        with pytest.raises(_Killed):
            train.main([*args, "--epochs", "2"])
    assert (out / "fingerprint.json").is_file() and not (out / "backup" / "latest.json").exists()
    fingerprint = (out / "fingerprint.json").read_text()
    capsys.readouterr()
    assert train.main([*args, "--epochs", "3"]) == 2
    error = capsys.readouterr().err
    assert "epochs: stored 2, now 3" in error and "--restart" in error
    assert (out / "fingerprint.json").read_text() == fingerprint
    assert train.main([*args, "--epochs", "2"]) == 0  # the same settings start it again
    assert _epochs(out / "log.csv") == [0, 1]
