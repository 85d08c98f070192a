"""A result is what the user asked for, or the command says why not: a resumed run that
would mix two settings is refused naming what changed, a log row covers its whole epoch,
and bad numbers stop a run in one sentence. Each test replays a case where a command
gave a silently wrong result."""

from __future__ import annotations

import csv
import json

import keras
import numpy as np
import pytest

from tests.helpers import make_image_folder
from tests.hub_fixtures import hf_home, hub  # noqa: F401
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
    fingerprint["backend"] = "torch"  # the run was trained on another backend
    (out / "fingerprint.json").write_text(json.dumps(fingerprint))
    assert _train(folder, out) == 2
    assert "backend: stored 'torch'" in capsys.readouterr().err
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


def test_evaluate_refuses_hub_weights_whose_head_has_another_class_count(hub, tmp_path):  # noqa: F811
    import keras_gated as kg
    from keras_gated.evaluation import evaluate
    from keras_gated.release import hub as kg_hub
    from keras_gated.release.zoo_folder import save_zoo_folder

    data = make_image_folder(tmp_path / "three", per_class=(2, 2), classes=3)
    log = tmp_path / "log.csv"
    log.write_text("epoch,loss\n0,1.0\n")
    folder = save_zoo_folder(kg.GResNetFC(2, classes=2), tmp_path / "zoo" / "gresnetfc2.two",
                             weight_id="gresnetfc2.two", recipe="r", command="c",
                             metrics={"test_accuracy": 0.5, "split": "test", "num_examples": 4},
                             dataset_note="d", training_log=log)
    kg_hub.publish(folder, "user/two")
    for weights in ("hf://user/two", str(folder)):  # the same weights, served or local
        with pytest.raises(ValueError, match="classify 2 classes but .* has 3"):
            evaluate("gresnetfc2", weights, str(data))


@pytest.mark.parametrize("model_args, words", [
    ({"include_preprocessing": False}, "trained with include_preprocessing=True"),
    ({"include_top": False}, "without the head"),
])
def test_evaluate_refuses_model_args_with_which_the_weights_cannot_score(model_args, words, tmp_path):
    from keras_gated.evaluation import evaluate

    data = make_image_folder(tmp_path / "data", per_class=(2, 2), classes=10)
    with pytest.raises(ValueError, match=words):
        evaluate("gresnetfc10", "fashion_mnist", str(data), model_args=model_args)


def test_analyze_refuses_data_of_other_classes(tmp_path):
    data = make_image_folder(tmp_path / "data", per_class=(2, 2), classes=10)
    code, out, err = _cli("analyze", "gresnetfc10.fashion_mnist", "--dataset", str(data),
                          "--out", str(tmp_path / "a"), "--no-prune")
    assert code == 2 and "accuracy" not in out
    assert "classify T-shirt/top" in err and "class0" in err
    assert not (tmp_path / "a").exists()


# --- images are read as the user means them ---------------------------------------------------
def _save(path, array, mode=None):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array, mode).save(path)
    return path


def test_each_image_of_a_folder_is_read_in_its_own_mode(tmp_path):
    from PIL import Image

    from keras_gated.datasets import load_numpy

    rng = np.random.default_rng(0)
    grey = rng.integers(0, 256, (8, 8), dtype=np.uint8)
    rgb = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
    rgba = np.concatenate([rgb, np.full((8, 8, 1), 7, np.uint8)], axis=-1)
    _save(tmp_path / "d" / "test" / "a" / "0.png", grey)  # the first image is grey
    _save(tmp_path / "d" / "test" / "a" / "1.png", rgb)
    _save(tmp_path / "d" / "test" / "b" / "2.png", rgba)
    Image.fromarray(rgb).convert("P").save(tmp_path / "d" / "test" / "b" / "3.png")
    x, y, info = load_numpy(str(tmp_path / "d"), "test")
    assert info.image_shape == (8, 8, 3) and x.shape == (4, 8, 8, 3)
    np.testing.assert_array_equal(x[0], np.repeat(grey[..., None], 3, axis=-1))
    np.testing.assert_array_equal(x[1], rgb)  # not turned grey
    np.testing.assert_array_equal(x[2], rgb)  # the alpha channel dropped
    assert x[3].std(axis=-1).mean() > 1  # a palette image stays in colour


def test_sixteen_bit_images_are_scaled_not_clipped(tmp_path):
    from keras_gated.datasets import load_numpy

    eight = np.arange(64, dtype=np.uint8).reshape(8, 8) * 4
    _save(tmp_path / "d" / "test" / "a" / "16.png", eight.astype(np.uint16) * 257)
    _save(tmp_path / "d" / "test" / "b" / "8.png", eight)
    x, _, info = load_numpy(str(tmp_path / "d"), "test")
    assert info.image_shape == (8, 8, 1)
    np.testing.assert_array_equal(x[0, ..., 0], eight)
    np.testing.assert_array_equal(x[1, ..., 0], eight)


def test_images_in_sub_folders_and_webp_files_are_read(tmp_path):
    from keras_gated.datasets import load_numpy

    image = np.zeros((8, 8, 3), np.uint8)
    _save(tmp_path / "d" / "test" / "cat" / "kittens" / "0.jpg", image)
    _save(tmp_path / "d" / "test" / "cat" / "1.png", image)
    _save(tmp_path / "d" / "test" / "dog" / "2.webp", image)
    x, y, info = load_numpy(str(tmp_path / "d"), "test")
    assert info.class_names == ("cat", "dog") and y.tolist() == [0, 0, 1]


def test_a_bad_image_or_a_truncated_local_copy_is_named_in_one_sentence(tmp_path, monkeypatch):
    from PIL import Image

    from keras_gated import datasets

    _save(tmp_path / "d" / "test" / "a" / "big.png", np.zeros((32, 32), np.uint8))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)  # 1024 pixels: a decompression bomb
    with pytest.raises(datasets.BadImageError, match="big.png cannot be read as an image"):
        datasets.load_numpy(str(tmp_path / "d"), "test")
    monkeypatch.undo()
    data = tmp_path / "data"
    (data / "fashion-mnist").mkdir(parents=True)
    (data / "cifar10-jpeg.zip").write_bytes(b"PK\x03\x04" + b"\0" * 100)  # truncated
    for name in datasets.FASHION_MNIST_FILES["test"]:
        (data / "fashion-mnist" / name).write_bytes(b"\x1f\x8b\x08\x00" + b"\0" * 10)
    monkeypatch.setenv("KERAS_GATED_DATA", str(data))
    for tag, file in (("cifar10", "cifar10-jpeg.zip"), ("fashion_mnist", "fashion-mnist")):
        with pytest.raises(datasets.CorruptDataError, match=f"{file} of {tag} is truncated"):
            datasets.load_numpy(tag, "test")


def _cifar_folder(root, size):
    from keras_gated.datasets import CLASS_NAMES

    rng = np.random.default_rng(0)
    for name in CLASS_NAMES["cifar10"]:
        _save(root / "test" / name / "0.png", rng.integers(0, 256, (size, size, 3), dtype=np.uint8))
    return root


def test_evaluate_never_crops_larger_images_and_resizes_when_told(tmp_path):
    from keras_gated.evaluation import evaluate

    data = _cifar_folder(tmp_path / "big", 64)
    with pytest.raises(ValueError, match=r"are 64×64 but gresnet20 takes 32×32.*--resize"):
        evaluate("gresnet20", "cifar10", str(data))
    result = evaluate("gresnet20", "cifar10", str(data), resize=True)
    assert result["num_examples"] == 10


def test_a_folder_of_fashion_mnist_classes_is_evaluated_through_a_class_map(tmp_path):
    from keras_gated import datasets
    from keras_gated.datasets import CLASS_NAMES
    from keras_gated.evaluation import evaluate

    try:
        x, y, _ = datasets.load_numpy("fashion_mnist", "test")
    except datasets.DatasetNotFoundError:
        pytest.skip("no local Fashion-MNIST copy")
    folders = ["tshirt", *CLASS_NAMES["fashion_mnist"][1:]]
    for i in range(60):
        _save(tmp_path / "f" / "test" / folders[y[i]] / f"{i}.png", x[i, ..., 0])
    with pytest.raises(ValueError, match="--class-map FOLDER=CLASS"):
        evaluate("gresnetfc10", "fashion_mnist", str(tmp_path / "f"))
    with pytest.raises(ValueError, match="names tee, which the data set does not have"):
        evaluate("gresnetfc10", "fashion_mnist", str(tmp_path / "f"),
                 class_map={"tee": "T-shirt/top"})
    result = evaluate("gresnetfc10", "fashion_mnist", str(tmp_path / "f"),
                      class_map={"tshirt": "T-shirt/top"})
    assert result["test_accuracy"] > 0.7  # the folders' labels renumbered to the net's order
    code, out, err = _cli("analyze", "gresnetfc10.fashion_mnist", "--dataset", str(tmp_path / "f"),
                          "--class-map", "tshirt=T-shirt/top", "--no-prune",
                          "--out", str(tmp_path / "analysis"))
    assert code == 0, err
    assert float(out.split("accuracy ")[1].split(";")[0]) == pytest.approx(result["test_accuracy"],
                                                                          abs=1e-4)


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


def test_compress_takes_a_class_map_too(tmp_path):
    from keras_gated.cli import build_parser
    from keras_gated.cli.compress import compress_command_line

    args = build_parser().parse_args(["compress", "gresnetfc10.fashion_mnist", "--blocks", "1",
                                      "--epochs", "1", "--out", str(tmp_path / "o"), "--dataset",
                                      "d", "--class-map", "tshirt=T-shirt/top"])
    assert args.class_map == [("tshirt", "T-shirt/top")]
    assert "--class-map tshirt=T-shirt/top" in compress_command_line(args, "jax")


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


def test_a_given_path_outside_the_working_and_home_folders_is_published_relative(tmp_path, monkeypatch):
    from keras_gated.files import portable_record

    work, data = tmp_path / "work", tmp_path / "elsewhere" / "data"
    work.mkdir()
    data.mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", "/nonexistent-home")
    record = {"command": f"python -m training.finetune --dataset {data}",
              "dataset": f"image folder {data}, test split"}
    assert portable_record(record, [data]) == {
        "command": "python -m training.finetune --dataset ../elsewhere/data",
        "dataset": "image folder ../elsewhere/data, test split"}
