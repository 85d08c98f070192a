"""python -m training.release_compressed: a keras-gated compress folder -> a zoo folder of
the compressed architecture's own name -> its line, its config, its tables."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.models.compressed import registered
from keras_gated.models.compressed.architectures import read_architectures
from keras_gated.release import listing
from keras_gated.weights import pretrained_cfgs_overlay
from keras_gated.release.zoo_folder import pretrained_cfg_from_folder
from tests.support.helpers import images, make_image_folder, to_numpy
from tests.support.zoo import KERAS_HUB_FILES, ZOO_FILES
from training import release, release_compressed


@pytest.fixture(autouse=True)
def steady_timing(monkeypatch):
    """The release times its net against the source with a control copy and refuses a busy
    machine; these tests check what is released, not the timing, so the clock is steady
    (a test that wants another replaces it)."""
    import keras_gated.analysis.report as report

    monkeypatch.setattr(report, "seconds_per_image", lambda models, x, rounds=5: [0.004, 0.002, 0.002])


def _compress(tmp_path, arch, shape, classes, *budget):
    """A real ``keras-gated compress`` run of a fresh ``arch`` on a tiny image folder."""
    from keras_gated.cli import main

    data = make_image_folder(tmp_path / "tiny", shape=shape, per_class=(16, 8), classes=classes)
    source = tmp_path / "source"
    keras.saving.save_model(kg.create_model(arch, classes=classes), source, zipped=False)
    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["compress", arch, "--weights", str(source), "--dataset", str(data), *budget,
                     "--batch-size", "16", "--out", str(out)]) == 0
    return data, out


def _one_block_removed(tmp_path):
    """``(data, out, name)``: gresnetfc2 with one block removed by a real compress run
    (no training), and the name its MACs give it."""
    data, out = _compress(tmp_path, "gresnetfc2", (28, 28, 1), 2, "--blocks", "1", "--epochs", "0",
                          "--pressure-epochs", "0", "--baseline", "lowest")
    record = json.loads((out / "compression.json").read_text())["record"]
    return data, out, f"gresnetfc2_c{int(np.ceil(100 * record['macs_after'] / record['macs_before']))}"


def _paths(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# project\n\n{listing.BEGIN}\n{listing.END}\n")
    (tmp_path / "cfgs").mkdir()
    return dict(zoo=tmp_path / "zoo", register_in=tmp_path / "cfgs", readme=readme,
                architectures=tmp_path / "architectures.jsonl", catalog=tmp_path / "catalog.json")


def test_a_compress_folder_is_released_under_its_own_name_and_registered(tmp_path):
    data, out, name = _one_block_removed(tmp_path)
    paths = _paths(tmp_path)
    with pytest.raises(ValueError, match=f"whose name is {name}"):
        release_compressed.release_compressed(out, "gresnetfc2_c50", dataset=str(data), **paths)
    assert not paths["zoo"].exists()  # refused before anything was written

    folder = release_compressed.release_compressed(out, name, dataset=str(data), **paths)
    assert folder == paths["zoo"] / f"{name}.tiny"
    assert {p.name for p in folder.iterdir()} == ZOO_FILES  # a fully connected net: no preset
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["test_accuracy"] == json.loads((out / "metrics.json").read_text())["test_accuracy"]
    assert metrics["model_args"] == {"removed_blocks": ["block1"]} and metrics["recipe"] == "compress"
    assert (folder / "training_log.csv").read_text() == "phase,epoch\n"  # no epoch was run
    card = (folder / "README.md").read_text()
    assert f'kg.create_model("{name}.tiny")' in card and "### Compression" in card
    assert "compression.json" not in card  # not part of the release

    [arch] = read_architectures(paths["architectures"])
    assert (arch.name, arch.source, arch.removed_blocks) == (name, "gresnetfc2", ("block1",))
    assert arch.budget == {"blocks": 1} and arch.parameters > 0
    [cfg] = release.registered_cfgs(paths["register_in"])
    assert cfg.weight_id == f"{name}.tiny" and cfg == pretrained_cfg_from_folder(folder)
    assert (paths["register_in"] / "compressed" / "compressed.json").is_file()
    assert f"| `{name}.tiny` |" in paths["readme"].read_text()
    catalog = json.loads(paths["catalog"].read_text())["models"]
    assert catalog[name]["constructor"] == f"keras_gated.models.compressed.compressed:{name}"
    assert not kg.is_model(name)  # registered in the data files, not left in this process


def test_the_release_loads_by_weight_id_and_computes_the_compress_folders_net(tmp_path, monkeypatch):
    data, out, name = _one_block_removed(tmp_path)
    monkeypatch.setenv("KERAS_GATED_ZOO", str(tmp_path / "zoo"))
    folder = release_compressed.release_compressed(out, name, dataset=str(data), **_paths(tmp_path))
    cfg = pretrained_cfg_from_folder(folder)
    arch = release_compressed.architecture_of(release_compressed.read_compress_output(out), name)
    x = images(3, (28, 28, 1))
    with registered(arch), pretrained_cfgs_overlay(cfg):
        model = kg.create_model(f"{name}.tiny", num_classes=2)
        assert model.name == name and "block1" not in [layer.name for layer in model.layers]
        np.testing.assert_allclose(to_numpy(model(x, training=False)),
                                   to_numpy(keras.saving.load_model(out)(x, training=False)),
                                   atol=1e-6)


def test_the_training_log_holds_every_epoch_of_both_phases(tmp_path):
    history = {"pressure": [{"loss": 1.5, "accuracy": 0.4}, {"loss": 1.2, "accuracy": 0.5}],
               "finetune": [{"loss": 0.9, "accuracy": 0.7}]}
    path = release_compressed.write_training_log({"history": history}, tmp_path / "log.csv")
    with path.open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["phase"], r["epoch"], r["loss"]) for r in rows] == [
        ("pressure", "0", "1.5"), ("pressure", "1", "1.2"), ("finetune", "0", "0.9")]
    assert list(rows[0]) == ["phase", "epoch", "accuracy", "loss"]


def test_the_card_times_the_release_against_its_source_and_a_busy_machine_is_refused(
        tmp_path, monkeypatch):
    import keras_gated.analysis.report as report

    data, out, name = _one_block_removed(tmp_path)
    timed = []

    def busy(models, x, rounds=5):  # the control copy of the compressed net 30 % slower
        timed.append(len(models))
        return [0.004, 0.002, 0.0026]

    monkeypatch.setattr(report, "seconds_per_image", busy)
    released = tmp_path / "released"
    with pytest.raises(ValueError, match="the machine was busy"):
        release_compressed.release_compressed(out, name, dataset=str(data), zoo=tmp_path / "zoo",
                                              out=released)
    assert timed == [3] and not (released / f"{name}.tiny").exists()

    monkeypatch.setattr(report, "seconds_per_image", lambda models, x, rounds=5: [0.004, 0.002, 0.0021])
    folder = release_compressed.release_compressed(out, name, dataset=str(data), zoo=tmp_path / "zoo",
                                                   out=released)
    assert folder == released / f"{name}.tiny" and not (tmp_path / "zoo").exists()
    card = (folder / "README.md").read_text()
    assert "| source |" in card and "| 4.000 | 250 |" in card and "| 2.000 | 500 |" in card
    assert "removed, not fine-tuned |" not in card and "before fine-tuning, the net scored" in card
    assert "the machine that released it" in card
    command = json.loads((folder / "metrics.json").read_text())["command"]
    assert f"--out {name}.tiny" in command and "--backup-dir" not in command and str(out) not in command


def test_the_cards_command_is_the_runs_as_a_user_runs_it():
    command = ("KERAS_BACKEND=jax keras-gated compress gresnet20.cifar10 --dataset cifar10 --macs 0.5 "
               "--seed 1 --backup-dir runs/x/backup --augment --out 'runs/my run/out'")
    assert release_compressed.portable_command(command, "gresnet20_c50.cifar10") == (
        "KERAS_BACKEND=jax keras-gated compress gresnet20.cifar10 --dataset cifar10 --macs 0.5 "
        "--seed 1 --augment --out gresnet20_c50.cifar10")


def test_without_register_the_zoo_is_not_written(tmp_path):
    data, out, name = _one_block_removed(tmp_path)
    zoo = tmp_path / "zoo"
    (zoo / f"{name}.tiny").mkdir(parents=True)
    (zoo / f"{name}.tiny" / "README.md").write_text("the release there\n")
    with pytest.raises(ValueError, match="Without --register nothing is written into zoo/"):
        release_compressed.release_compressed(out, name, dataset=str(data), zoo=zoo)
    with pytest.raises(ValueError, match="is in the zoo"):
        release_compressed.release_compressed(out, name, dataset=str(data), zoo=zoo, out=zoo)
    assert [p.name for p in zoo.rglob("*")] == [f"{name}.tiny", "README.md"]
    assert (zoo / f"{name}.tiny" / "README.md").read_text() == "the release there\n"


def test_a_release_that_fails_its_check_leaves_the_registered_folder_as_it_was(
        tmp_path, monkeypatch):
    data, out, name = _one_block_removed(tmp_path)
    paths = _paths(tmp_path)
    folder = release_compressed.release_compressed(out, name, dataset=str(data), **paths)
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}

    import keras_gated.evaluation as evaluation

    monkeypatch.setattr(evaluation, "evaluate", lambda *args, **kwargs: {"test_accuracy": -1.0})
    with pytest.raises(ValueError, match="not released .* is left as it was"):
        release_compressed.release_compressed(out, name, dataset=str(data), **paths)
    after = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in paths["zoo"].iterdir()) == [f"{name}.tiny"]  # no staging left


def test_register_and_out_together_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        release_compressed.main([str(tmp_path), "--name", "gresnet20_c50", "--register",
                                 "--out", str(tmp_path / "released")])
    assert exit_.value.code == 2 and "give one of them" in capsys.readouterr().err


def test_a_folder_that_is_not_a_compress_run_is_refused(tmp_path):
    with pytest.raises(ValueError, match="give the --out folder of a finished keras-gated compress run"):
        release_compressed.release_compressed(tmp_path, "gresnet20_c50", zoo=tmp_path / "zoo")


@pytest.mark.slow
@pytest.mark.needs("keras_hub")
def test_a_convolutional_release_carries_its_keras_hub_preset(tmp_path, monkeypatch):
    data, out = _compress(tmp_path, "gresnet20", (32, 32, 3), 2, "--macs", "0.5", "--epochs", "0",
                          "--pressure-epochs", "0", "--baseline", "lowest")
    monkeypatch.setenv("KERAS_GATED_ZOO", str(tmp_path / "zoo"))
    paths = _paths(tmp_path)
    folder = release_compressed.release_compressed(out, "gresnet20_c50", dataset=str(data), **paths)
    assert {p.name for p in folder.iterdir()} == ZOO_FILES | {"keras_hub"}
    assert {p.name for p in (folder / "keras_hub").iterdir()} == KERAS_HUB_FILES
    [arch] = read_architectures(paths["architectures"])
    assert arch.removed_blocks == ("stage1_unit2", "stage1_unit3", "stage2_unit2", "stage2_unit3",
                                   "stage3_unit2")
