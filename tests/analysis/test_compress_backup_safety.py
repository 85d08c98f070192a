"""Compression's backups and outputs never delete what they did not write: a backup folder
holding other files or a link is refused and left whole, deleting a backup removes only its
own files, two runs never write one output, and ``analyze`` never writes a release folder."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.training.phases import PhaseBackup, train_phase
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.models import compiled_tiny_fc
SETTINGS = {"source": "gresnetfc2", "seed": 0}


def _cli(*argv: str) -> tuple[int, str, str]:
    """``keras-gated ARGV``: exit code, stdout and stderr."""
    from keras_gated.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _one_epoch(backup: PhaseBackup, phase: str) -> None:
    """One epoch of a tiny gated net in ``phase`` of ``backup``: the files a phase writes."""
    x = np.random.default_rng(0).uniform(0, 255, (8, 28, 28, 1)).astype("float32")
    train_phase(compiled_tiny_fc(), (x, np.arange(8) % 2), epochs=1, batch_size=8,
                learning_rate=0.01, backup=backup, phase=phase)


# --- compress --backup-dir ----------------------------------------------------------------
def test_a_backup_dir_holding_other_files_is_refused_and_left_whole(tmp_path):
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "thesis.tex").write_text("\\chapter{Results}")
    with pytest.raises(ValueError, match="not a compress backup"):
        PhaseBackup(folder, SETTINGS)
    assert (folder / "thesis.tex").read_text() == "\\chapter{Results}"
    assert sorted(p.name for p in folder.iterdir()) == ["thesis.tex"]


def test_a_backup_dir_that_is_a_link_is_refused(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(ValueError, match="symbolic link"):
        PhaseBackup(tmp_path / "link", SETTINGS)
    assert list(target.iterdir()) == []


def test_deleting_a_backup_removes_only_what_the_backup_wrote(tmp_path):
    folder = tmp_path / "backup"
    backup = PhaseBackup(folder, SETTINGS)
    _one_epoch(backup, "pressure")
    (folder / "notes.md").write_text("mine")  # put there by the user while it ran
    (folder / "pressure" / "backup" / "plot.png").write_bytes(b"mine too")
    backup.delete()
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "notes.md", "pressure/backup/plot.png"]
    backup = PhaseBackup(tmp_path / "fresh", SETTINGS)
    _one_epoch(backup, "finetune")
    backup.delete()
    assert not (tmp_path / "fresh").exists()  # nothing else was there: the folder goes too


def test_compress_cli_refuses_a_non_empty_backup_dir_before_training(tmp_path, monkeypatch):
    import importlib

    compress_module = importlib.import_module("keras_gated.analysis.compress")
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "thesis.tex").write_text("draft")
    source = tmp_path / "source"
    keras.saving.save_model(kg.create_model("gresnetfc2", classes=2), source, zipped=False)
    from tests.support.helpers import make_image_folder

    data = make_image_folder(tmp_path / "tiny", per_class=(8, 4))
    monkeypatch.setattr(compress_module, "train_phase",
                        lambda *a, **k: pytest.fail("trained with a foreign --backup-dir"))
    code, _, err = _cli("compress", "gresnetfc2", "--weights", str(source), "--dataset",
                        str(data), "--blocks", "1", "--epochs", "1", "--out",
                        str(tmp_path / "out"), "--backup-dir", str(folder))
    assert code == 2, err
    assert "--backup-dir" in err or str(folder) in err
    assert (folder / "thesis.tex").read_text() == "draft"
    assert not (tmp_path / "out").exists()


# --- the zoo: written by the release tool alone ----------------------------------------------
def _release_folder(folder: Path) -> dict[str, bytes]:
    """A stand-in release folder (a release's file names); its files' contents."""
    folder.mkdir(parents=True)
    for name in ("config.json", "README.md", "metrics.json", "model.weights.h5"):
        (folder / name).write_bytes(f"official {name}".encode())
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.mark.parametrize("inside", [True, False])
def test_analyze_never_writes_a_release_folder(tmp_path, monkeypatch, inside):
    import keras_gated.cli.analyze  # noqa: F401  imported before the patch, never bound to it
    from keras_gated.models import factory

    zoo = tmp_path / "zoo"
    zoo.mkdir()
    monkeypatch.setenv("KERAS_GATED_ZOO", str(zoo))
    folder = (zoo if inside else tmp_path / "copies") / "gresnet20.cifar10"
    official = _release_folder(folder)
    monkeypatch.setattr(factory, "create_model", lambda *a, **k: pytest.fail("analyzed"))
    code, _, err = _cli("analyze", "gresnet20.cifar10", "--dataset", "cifar10", "--out", str(folder))
    assert code == 2, err
    assert "training.release" in err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == official


def test_no_command_makes_a_new_folder_or_path_in_the_zoo(tmp_path, monkeypatch, capsys):
    import keras_gated.cli.compress as compress_cli
    from keras_gated.cli import main
    from keras_gated.files import new_output_folder, new_output_path, replaced_files

    zoo = tmp_path / "zoo"
    official = _release_folder(zoo / "gresnet20.cifar10")
    monkeypatch.setenv("KERAS_GATED_ZOO", str(zoo))
    monkeypatch.setattr(compress_cli, "source_model", lambda *a, **k: pytest.fail("compressed"))
    compress = ["compress", "gresnet20.cifar10", "--dataset", "cifar10", "--blocks", "1",
                "--epochs", "0"]
    with pytest.raises(SystemExit) as refused:  # --out: refused while parsing
        main([*compress, "--out", str(zoo / "newthing")])
    assert refused.value.code == 2
    assert "is in the zoo" in capsys.readouterr().err
    code, _, err = _cli(*compress, "--out", str(tmp_path / "c"), "--backup-dir", str(zoo / "bk"))
    assert code == 2 and "--backup-dir" in err and "is in the zoo" in err, err
    assert len(err.strip().splitlines()) == 1
    for writing in (new_output_folder, new_output_path):
        with pytest.raises(ValueError, match="is in the zoo"):
            with writing(zoo / "newthing"):
                pytest.fail("written")
    with pytest.raises(ValueError, match="is in the zoo"):
        with replaced_files(zoo / "gresnet20.cifar10", ["analysis.json"]):
            pytest.fail("written")
    with pytest.raises(ValueError, match="is in the zoo"):
        PhaseBackup(zoo / "bk", SETTINGS)
    assert sorted(p.name for p in zoo.iterdir()) == ["gresnet20.cifar10"]
    assert {p.name: p.read_bytes() for p in (zoo / "gresnet20.cifar10").iterdir()} == official
    assert not (tmp_path / "c").exists()


def test_two_compress_runs_into_one_out_never_both_write_it(tmp_path, monkeypatch):
    import importlib

    from tests.support.helpers import make_image_folder

    module = importlib.import_module("keras_gated.analysis.compress")
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "source"
    keras.saving.save_model(kg.create_model("gresnetfc2", classes=2), source, zipped=False)
    data = make_image_folder(tmp_path / "tiny", per_class=(8, 4))
    out = tmp_path / "out"
    argv = ("compress", "gresnetfc2", "--weights", str(source), "--dataset", str(data),
            "--blocks", "1", "--epochs", "0", "--pressure-epochs", "0", "--out", str(out))
    real, started, second = module.compress, [], []

    def first_run(*args, **kwargs):  # the second run starts while the first one trains
        if not started:
            started.append(True)
            second.append(_cli(*argv))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "compress", first_run)
    code, printed, err = _cli(*argv)
    assert code == 0, err
    second_code, _, second_err = second[0]
    assert second_code == 2 and "another command" in second_err
    assert {"compression.json", "README.md", "metrics.json"} <= {p.name for p in out.iterdir()}
    assert not (out / ".keras-gated-writing").exists()
    card = (out / "README.md").read_text()
    assert 'folder = "out"' in card  # the final folder, as a path relative to where it ran
    for name in ("README.md", "metrics.json", "compression.json"):  # no local path published
        assert str(tmp_path) not in (out / name).read_text(), name


# --- release: zoo/ only with --register, whole, under a lock ---------------------------------
