"""Bad inputs a careless user gives, replayed as they would be given: each gets one
sentence naming the file or value and what to do (never an internal error, a traceback
or advice that does not fit), or the right result, and nothing is lost: a flipped HDF5
header, a batch of 0, ``--batch-size 0``, ``analyze --examples 0`` / ``-5``, a text or
truncated ``.jpg`` in a data folder (train and evaluate), ``export --format onnx``
without the extra, ``backup/latest.json`` naming a missing file, a garbage ``log.csv``,
``--dataset cifar-10``, a zoo folder whose config.json is another architecture's, a
read-only ``HF_HOME``, ``--weights runs/x/last.keras`` and evaluating such a run trained
on other input shapes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import keras_gated as kg
from keras_gated import cli
from tests.helpers import make_image_folder
from training import train

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "zoo"


def last_line(capsys) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


def assert_one_clear_sentence(line: str, *words: str) -> None:
    assert "internal error" not in line and "Traceback" not in line, line
    for word in words:
        assert word in line, line


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A finished one-epoch run of gresnetfc2 on 32x32 RGB images (its model's default
    input is Fashion-MNIST's 28x28x1)."""
    root = tmp_path_factory.mktemp("run")
    folder = make_image_folder(root / "rgb", shape=(32, 32, 3), per_class=(20, 6))
    out = root / "run"
    assert train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "8", "--out", str(out), "--verbose", "0"]) == 0
    return out


def _unfinished_copy(finished_run: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    (out / "metrics.json").unlink()
    return out


def _resume(out: Path, finished_run: Path) -> int:
    return train.main(["--model", "gresnetfc2", "--dataset", str(finished_run.parent / "rgb"),
                       "--epochs", "2", "--batch-size", "8", "--out", str(out),
                       "--verbose", "0"])


def _snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# --- weights and model inputs ---------------------------------------------------------------
def test_flipped_hdf5_header_bytes_are_refused_naming_the_file(tmp_path):
    from keras_gated.weights.load import WeightsFileError

    path = tmp_path / "net.weights.h5"
    kg.create_model("plainnet10").save_weights(path)
    data = bytearray(path.read_bytes())
    for i in range(8, 40):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(WeightsFileError, match="cannot be read") as refused:
        kg.create_model("plainnet10", weights=str(path))
    assert str(path) in str(refused.value)


def test_a_batch_of_zero_images_gives_an_empty_answer():
    model = kg.create_model("plainnet10")
    out = model.predict(np.zeros((0, 28, 28, 1), "float32"), verbose=0)
    assert out.shape == (0, 10)


@pytest.mark.parametrize("argv, flag", [
    (["evaluate", "plainnet10", "--weights", "fashion_mnist", "--dataset", "fashion_mnist",
      "--batch-size", "0"], "--batch-size"),
    (["analyze", "plainnet10.fashion_mnist", "--dataset", "fashion_mnist", "--out", "{out}",
      "--examples", "0"], "--examples"),
    (["analyze", "plainnet10.fashion_mnist", "--dataset", "fashion_mnist", "--out", "{out}",
      "--examples", "-5"], "--examples"),
])
def test_a_count_below_one_is_a_usage_error(argv, flag, tmp_path, capsys):
    out = tmp_path / "analysis"
    with pytest.raises(SystemExit) as stopped:
        cli.main([a.replace("{out}", str(out)) for a in argv])
    assert stopped.value.code == 2
    assert_one_clear_sentence(last_line(capsys), flag, "must be a positive integer")
    assert not out.exists()


def test_a_path_to_a_whole_saved_model_as_weights_says_what_to_do(finished_run):
    with pytest.raises(ValueError, match="whole saved model") as refused:
        kg.create_model("gresnetfc2", weights=str(finished_run / "last.keras"))
    assert "keras.saving.load_model" in str(refused.value)
    with pytest.raises(ValueError, match="does not exist"):
        kg.create_model("gresnetfc2", weights=str(finished_run / "nothing.keras"))


def test_evaluate_takes_a_run_s_keras_file_trained_on_other_input_shapes(finished_run,
                                                                           capsys):
    dataset = str(finished_run.parent / "rgb")
    assert cli.main(["evaluate", "gresnetfc2", "--weights", str(finished_run / "last.keras"),
                     "--dataset", dataset]) == 0
    assert "test accuracy:" in capsys.readouterr().out
    assert cli.main(["evaluate", "gresnet20", "--weights", str(finished_run / "last.keras"),
                     "--dataset", dataset]) == 2
    assert_one_clear_sentence(last_line(capsys), "'gresnetfc2'", "not 'gresnet20'")


def test_evaluate_builds_a_save_folder_s_model_on_its_recorded_input_shape(finished_run,
                                                                            tmp_path, capsys):
    import keras

    from keras_gated.convert import save_folder

    folder = save_folder(keras.saving.load_model(finished_run / "last.keras", compile=False),
                         tmp_path / "saved")
    assert cli.main(["evaluate", "gresnetfc2", "--weights", str(folder),
                     "--dataset", str(finished_run.parent / "rgb")]) == 0
    assert "test accuracy:" in capsys.readouterr().out


# --- data -------------------------------------------------------------------------------------
def _text_jpg(path: Path) -> None:
    path.write_text("this is not an image")


def _truncated_jpg(path: Path) -> None:
    from PIL import Image

    Image.fromarray(np.zeros((28, 28), np.uint8)).save(path.with_suffix(".tmp.jpg"))
    path.write_bytes(path.with_suffix(".tmp.jpg").read_bytes()[:60])
    path.with_suffix(".tmp.jpg").unlink()


@pytest.mark.parametrize("damage", [_text_jpg, _truncated_jpg])
@pytest.mark.parametrize("split", ["train", "test"])
def test_a_bad_image_in_a_data_folder_is_named(tmp_path, capsys, damage, split):
    folder = make_image_folder(tmp_path / "data", shape=(28, 28, 1), per_class=(20, 6))
    bad = folder / split / "class1" / "bad.jpg"
    damage(bad)
    out = tmp_path / "run"
    code = train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "1",
                       "--out", str(out), "--verbose", "0"])
    assert code == 2 and not out.exists()
    assert_one_clear_sentence(last_line(capsys), str(bad), "remove it")
    if split == "test":
        assert cli.main(["evaluate", "plainnet10", "--weights", "fashion_mnist",
                         "--dataset", str(folder)]) == 2
        assert_one_clear_sentence(last_line(capsys), str(bad), "remove it")


@pytest.mark.parametrize("name, tag", [("cifar-10", "cifar10"), ("Fashion-MNIST", "fashion_mnist")])
def test_a_data_tag_spelt_another_way_names_the_tag(name, tag, capsys):
    assert cli.main(["evaluate", "plainnet10", "--weights", "fashion_mnist",
                     "--dataset", name]) == 2
    assert_one_clear_sentence(last_line(capsys), repr(name), f"did you mean the data tag {tag!r}")


# --- export -------------------------------------------------------------------------------------
def test_onnx_export_without_the_extra_says_what_to_install(tmp_path, capsys, monkeypatch):
    for module in ("onnx", "tf2onnx", "jax2onnx", "onnxscript"):
        monkeypatch.setitem(sys.modules, module, None)
    out = tmp_path / "net.onnx"
    assert cli.main(["export", "plainnet10", "--format", "onnx", "--out", str(out)]) == 2
    assert_one_clear_sentence(last_line(capsys), "not installed", 'keras-gated[onnx]')
    assert not out.exists()


# --- run folders -------------------------------------------------------------------------------
def test_a_backup_pointer_naming_a_missing_file_is_refused_and_nothing_lost(finished_run,
                                                                            tmp_path, capsys):
    out = _unfinished_copy(finished_run, tmp_path)
    pointer = out / "backup" / "latest.json"
    record = json.loads(pointer.read_text())
    record["weights"] = "epoch-0009.weights.h5"
    pointer.write_text(json.dumps(record))
    before = _snapshot(out)
    assert _resume(out, finished_run) == 2
    assert_one_clear_sentence(last_line(capsys), str(out / "backup" / "epoch-0009.weights.h5"),
                              "missing", "--restart")
    assert _snapshot(out) == before


def test_a_garbage_log_is_refused_and_nothing_lost(finished_run, tmp_path, capsys):
    out = _unfinished_copy(finished_run, tmp_path)
    (out / "log.csv").write_bytes(b"garbage\x00\x01,,,\nnot,a,log\n")
    before = _snapshot(out)
    assert _resume(out, finished_run) == 2
    assert_one_clear_sentence(last_line(capsys), str(out / "log.csv"), "corrupt", "--restart")
    assert _snapshot(out) == before


# --- released weights ---------------------------------------------------------------------------
def test_a_zoo_copy_with_another_architecture_s_config_is_called_damaged(tmp_path, monkeypatch):
    from keras_gated.weights.load import ConfigurationMismatchError

    zoo = tmp_path / "zoo"
    shutil.copytree(ZOO / "plainnet10.fashion_mnist", zoo / "plainnet10.fashion_mnist")
    shutil.copy(ZOO / "resnetfc10.fashion_mnist" / "config.json",
                zoo / "plainnet10.fashion_mnist" / "config.json")
    monkeypatch.setenv("KERAS_GATED_ZOO", str(zoo))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ConfigurationMismatchError, match="damaged") as refused:
        kg.create_model("plainnet10", weights="fashion_mnist")
    assert "'resnetfc10'" in str(refused.value) and "config.json" in str(refused.value)


def test_pull_with_a_read_only_hf_home_points_at_the_local_copy(tmp_path):
    home = tmp_path / "hf"
    home.mkdir()
    home.chmod(0o555)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "keras_gated.cli", "pull", "plainnet10.fashion_mnist"],
            capture_output=True, text=True, timeout=300, cwd=ROOT,
            env={**__import__("os").environ, "HF_HOME": str(home), "HF_HUB_OFFLINE": "1"})
    finally:
        home.chmod(0o755)
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip().splitlines()[-1]
    assert_one_clear_sentence(line, "already here", str(ZOO / "plainnet10.fashion_mnist"))
