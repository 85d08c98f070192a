"""A training run gives what the user asked for, or says why not: a resumed run that would mix
two settings is refused naming what changed, a log row covers its whole epoch (a log cut back
on resume is rewritten whole or not at all), a weight that becomes NaN stops the run, and a
fine-tuned card's check command evaluates the folder itself."""

from __future__ import annotations

import csv
import json

import keras
import numpy as np
import pytest

from tests.support.helpers import make_image_folder
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from training import train


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_image_folder(tmp_path_factory.mktemp("data") / "tiny", per_class=(40, 10))


def _train(folder, out, *extra):
    return train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "16", "--out", str(out), "--verbose", "0", *extra])


def _rows(log) -> list[dict]:
    with log.open(newline="") as f:
        return list(csv.DictReader(f))


# --- resume refuses a change of what determines the result ---------------------------------
def test_a_run_resumed_with_another_engine_backend_precision_or_model_is_refused(folder, tmp_path, capsys):
    pytest.importorskip("tensorflow", reason="the tf.data engine needs TensorFlow")
    out = tmp_path / "run"
    assert _train(folder, out) == 0
    (out / "metrics.json").unlink()  # killed after its last backup, before the end
    before = (out / "backup" / "latest.json").read_text()
    capsys.readouterr()
    assert _train(folder, out, "--data-engine", "tf") == 2
    error = capsys.readouterr().err
    assert "data_engine: stored 'numpy', now 'tf'" in error
    fingerprint = json.loads((out / "fingerprint.json").read_text())
    assert fingerprint["data_engine"] == "numpy"
    other = "jax" if keras.backend.backend() == "torch" else "torch"
    fingerprint["backend"] = other  # the run was trained on another backend
    (out / "fingerprint.json").write_text(json.dumps(fingerprint))
    assert _train(folder, out) == 2
    assert f"backend: stored '{other}'" in capsys.readouterr().err
    fingerprint["backend"] = keras.backend.backend()
    fingerprint["precision"] = "mixed_bfloat16"  # trained in mixed precision, resumed in float32
    (out / "fingerprint.json").write_text(json.dumps(fingerprint))
    assert _train(folder, out) == 2
    assert "precision: stored 'mixed_bfloat16', now 'float32'" in capsys.readouterr().err
    fingerprint["precision"] = "float32"
    (out / "fingerprint.json").write_text(json.dumps(fingerprint))
    assert _train(folder, out, "--model", "resnetfc10") == 2  # another model
    assert "model: stored 'gresnetfc2', now 'resnetfc10'" in capsys.readouterr().err
    assert (out / "backup" / "latest.json").read_text() == before
    assert not (out / "metrics.json").exists()


def test_a_run_recorded_before_engines_were_recorded_still_resumes(folder, tmp_path):
    out = tmp_path / "run"
    assert _train(folder, out) == 0
    (out / "metrics.json").unlink()
    fingerprint = json.loads((out / "fingerprint.json").read_text())
    del fingerprint["data_engine"], fingerprint["backend"]
    (out / "fingerprint.json").write_text(json.dumps(fingerprint))
    assert _train(folder, out) == 0 and (out / "metrics.json").is_file()


def test_the_log_row_of_an_epoch_resumed_after_a_time_limit_covers_the_whole_epoch(folder, tmp_path):
    assert _train(folder, tmp_path / "whole") == 0
    stopped = tmp_path / "stopped"
    for _ in range(2):  # one step a launch, twice: the epoch's first two steps
        assert _train(folder, stopped, "--time-limit", "0.00001") == 0
    assert _train(folder, stopped) == 0
    whole, resumed = _rows(tmp_path / "whole" / "log.csv"), _rows(stopped / "log.csv")
    assert [r["epoch"] for r in resumed] == ["0", "1"]
    for expected, got in zip(whole, resumed):
        for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
            np.testing.assert_allclose(float(got[key]), float(expected[key]), rtol=1e-4,
                                       atol=1e-5, err_msg=f"epoch {expected['epoch']} {key}")


# --- every command that scores checks the weights against the data -------------------------
def _cli(*argv: str) -> tuple[int, str, str]:
    """``keras-gated ARGV``: exit code, stdout and stderr."""
    import contextlib
    import io

    from keras_gated.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


# --- a fine-tuned card's check command measures that folder ----------------------------------
def test_a_fine_tuned_cards_check_command_evaluates_the_folder_itself(tmp_path, monkeypatch):
    import shlex

    from training import finetune

    monkeypatch.chdir(tmp_path)
    make_image_folder(tmp_path / "data" / "rgb", per_class=(24, 8))
    assert finetune.main(["--model", "gresnetfc2", "--weights", "none", "--dataset", str(tmp_path / "data" / "rgb"),
                          "--epochs", "1", "--batch-size", "16", "--out", str(tmp_path / "run"),
                          "--verbose", "0"]) == 0
    folder = tmp_path / "run" / "zoo" / "gresnetfc2.rgb"
    card = (folder / "README.md").read_text()
    command = card.split("Check it with:")[1].split("```bash\n")[1].split("\n```")[0]
    assert str(tmp_path) not in card and str(tmp_path) not in (folder / "metrics.json").read_text()
    argv = shlex.split(command, comments=True)
    assert argv[:2] == ["keras-gated", "evaluate"] and argv[argv.index("--weights") + 1] != "rgb"
    code, out, err = _cli(*argv[1:])
    assert code == 0, err
    measured = float(out.split("test accuracy: ")[1])
    recorded = json.loads((folder / "metrics.json").read_text())["test_accuracy"]
    assert measured == pytest.approx(recorded, abs=1e-4)


def test_a_run_stops_when_a_weight_becomes_nan_though_the_losses_are_finite():
    import keras_gated as kg
    from keras_gated.training.callbacks import StopOnNaN

    model = kg.GResNetFC(2, classes=2)
    guard = StopOnNaN()
    guard.set_model(model)
    logs = {"loss": 1.0, "val_loss": 0.5, "val_accuracy": 0.8}
    guard.on_epoch_end(0, dict(logs))
    assert guard.nan_at is None
    weight = model.trainable_weights[0]
    weight.assign(np.full(weight.shape, np.nan, "float32"))
    guard.on_epoch_end(1, dict(logs))
    assert guard.nan_at == (1, None) and model.stop_training and "weight" in guard.what


def test_a_log_cut_back_on_resume_is_rewritten_whole_or_not_at_all(tmp_path, monkeypatch):
    import csv as csv_module

    from keras_gated.training.callbacks import truncate_log

    log = tmp_path / "log.csv"
    log.write_text("epoch,loss\r\n0,2.0\r\n1,1.5\r\n2,1.2\r\n")
    before = log.read_bytes()

    def killed(self, rows):
        raise KeyboardInterrupt  # the process ends in the middle of the rewrite

    monkeypatch.setattr(csv_module.DictWriter, "writerows", killed)
    with pytest.raises(KeyboardInterrupt):
        truncate_log(log, 2)
    assert log.read_bytes() == before
    monkeypatch.undo()
    truncate_log(log, 2)
    assert log.read_bytes() == b"epoch,loss\r\n0,2.0\r\n1,1.5\r\n"
