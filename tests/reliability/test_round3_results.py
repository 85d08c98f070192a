"""A result is what the user asked for, or the command says why not: a resumed run that
would mix two settings is refused naming what changed, a log row covers its whole epoch,
and bad numbers stop a run in one sentence. Each test replays a case where a command
gave a silently wrong result."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from tests.helpers import make_image_folder
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
def test_a_run_resumed_with_another_data_engine_or_backend_is_refused(folder, tmp_path, capsys):
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
    fingerprint["backend"] = "torch"  # the run was trained on another backend
    (out / "fingerprint.json").write_text(json.dumps(fingerprint))
    assert _train(folder, out) == 2
    assert "backend: stored 'torch'" in capsys.readouterr().err
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


# --- compress: its backup is of this run, bad numbers stop it ------------------------------
def _fc_data(n=16, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 255, (n, 28, 28, 1)).astype("float32"), rng.integers(0, 3, n)


def test_a_compress_backup_of_other_data_or_weights_is_refused_naming_it(tmp_path):
    import keras_gated as kg
    from keras_gated.analysis.compress import compress

    args = dict(blocks=1, epochs=0, pressure_epochs=1, batch_size=16)
    source = kg.GResNetFC(6, classes=3)
    backup = tmp_path / "backup"
    compress(source, _fc_data(), backup_dir=backup, delete_backup=False, **args)
    kept = sorted(p.name for p in backup.iterdir())
    with pytest.raises(ValueError, match=r"other settings \(training_data\)"):
        compress(source, _fc_data(n=12), backup_dir=backup, **args)  # --examples 12
    with pytest.raises(ValueError, match=r"other settings \(training_data\)"):
        compress(source, _fc_data(seed=1), backup_dir=backup, **args)  # another data set
    with pytest.raises(ValueError, match=r"other settings \(source_weights\)"):
        compress(kg.GResNetFC(6, classes=3), _fc_data(), backup_dir=backup, **args)
    assert sorted(p.name for p in backup.iterdir()) == kept
    compress(source, _fc_data(), backup_dir=backup, **args)  # the same run resumes
    assert not backup.exists()


@pytest.mark.parametrize("option, value, words", [
    ("strength", float("nan"), "strength=nan must be a finite number >= 0"),
    ("strength", -1.0, "strength=-1.0 must be"),
    ("learning_rate", -5.0, "learning_rate=-5.0 must be a finite number > 0"),
    ("learning_rate", float("inf"), "learning_rate=inf must be"),
])
def test_compress_refuses_bad_hyperparameters_in_one_sentence(option, value, words, tmp_path):
    import keras_gated as kg
    from keras_gated.analysis.compress import compress

    with pytest.raises(ValueError, match=words):
        compress(kg.GResNetFC(6, classes=3), _fc_data(), blocks=1, epochs=1,
                 backup_dir=tmp_path / "b", **{option: value})
    assert not (tmp_path / "b").exists()  # refused before anything was written


@pytest.mark.parametrize("flag, value", [("--strength", "nan"), ("--strength", "-1"),
                                         ("--learning-rate", "-5"), ("--learning-rate", "nan"),
                                         ("--learning-rate", "0")])
def test_compress_cli_refuses_bad_hyperparameters_while_parsing(flag, value, capsys):
    from keras_gated.cli import build_parser

    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["compress", "gresnetfc2.x", "--dataset", "d", "--blocks", "1",
                                   "--epochs", "1", "--out", "o", flag, value])
    assert exit_.value.code == 2 and "give a finite number" in capsys.readouterr().err


def test_a_diverging_compress_stops_in_one_sentence_and_backs_up_no_nan(tmp_path):
    import keras_gated as kg
    from keras_gated.analysis.compress import compress

    backup = tmp_path / "backup"
    with pytest.raises(ValueError, match="diverged in epoch 1 of the pressure phase"):
        compress(kg.GResNetFC(6, classes=3), _fc_data(), blocks=1, epochs=1, pressure_epochs=2,
                 learning_rate=1e30, batch_size=8, backup_dir=backup)
    assert not list(backup.glob("*.weights.h5"))  # no backup of a diverged net
