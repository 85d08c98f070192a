"""Compression and analysis refuse what would give a silently wrong result: a backup of other
data or weights, bad hyperparameters (in the API and while parsing the command line), a
diverging run (stopped in one sentence, no NaN backed up), data of other classes; a class map
is taken as by evaluation."""

from __future__ import annotations


import numpy as np
import pytest

from tests.support.helpers import make_image_folder
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401


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
    ("finetune_learning_rate", 0.0, "finetune_learning_rate=0.0 must be a finite number > 0"),
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
                                         ("--learning-rate", "0"),
                                         ("--finetune-learning-rate", "-1")])
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
    assert not list(backup.rglob("*.weights.h5"))  # no backup of a diverged net


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


def test_analyze_refuses_data_of_other_classes(tmp_path):
    data = make_image_folder(tmp_path / "data", per_class=(2, 2), classes=10)
    code, out, err = _cli("analyze", "gresnetfc10.fashion_mnist", "--dataset", str(data),
                          "--out", str(tmp_path / "a"), "--no-prune")
    assert code == 2 and "accuracy" not in out
    assert "classify T-shirt/top" in err and "class0" in err
    assert not (tmp_path / "a").exists()


def test_analyze_builds_the_net_with_the_head_its_weights_hold(tmp_path):
    import keras_gated as kg

    kg.create_model("gresnetfc2", classes=2).save_weights(tmp_path / "two.weights.h5")
    data = make_image_folder(tmp_path / "data", per_class=(2, 4), classes=2)
    code, out, err = _cli("analyze", "gresnetfc2", "--weights", str(tmp_path / "two.weights.h5"),
                          "--dataset", str(data), "--out", str(tmp_path / "a"), "--no-prune")
    assert code == 0, err
    assert "on 8 " in out and (tmp_path / "a" / "analysis.json").is_file()


def test_compress_takes_a_class_map_too(tmp_path):
    from keras_gated.cli import build_parser
    from keras_gated.cli.compress import compress_command_line

    args = build_parser().parse_args(["compress", "gresnetfc10.fashion_mnist", "--blocks", "1",
                                      "--epochs", "1", "--out", str(tmp_path / "o"), "--dataset",
                                      "d", "--class-map", "tshirt=T-shirt/top"])
    assert args.class_map == [("tshirt", "T-shirt/top")]
    assert "--class-map tshirt=T-shirt/top" in compress_command_line(args, "jax")


def test_the_command_line_of_a_run_keeps_its_fine_tuning_rate(tmp_path):
    from keras_gated.analysis.compress_report import compression_recipe
    from keras_gated.cli import build_parser
    from keras_gated.cli.compress import compress_command_line

    args = build_parser().parse_args(["compress", "gresnet20.cifar10", "--macs", "0.5",
                                      "--epochs", "30", "--finetune-learning-rate", "0.05",
                                      "--dataset", "cifar10", "--out", str(tmp_path / "o")])
    assert "--epochs 30 --finetune-learning-rate 0.05 " in compress_command_line(args, "jax")
    record = {"method": "pressure", "pressure": {"strength": 0.01, "epochs": 2},
              "finetune_epochs": 30, "learning_rate": 0.01, "finetune_learning_rate": 0.05,
              "finetune_schedule": "cosine", "batch_size": 128, "augment": True, "seed": 0}
    assert ("learning rate 0.01 (the fine-tuning from 0.05) decayed to 0 along a half cosine"
            in compression_recipe(record))
    record["finetune_learning_rate"] = 0.01
    assert "learning rate 0.01 decayed" in compression_recipe(record)
