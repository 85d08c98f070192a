"""A run never overwrites what it did not write: ``training.train`` and
``training.finetune`` refuse a folder that holds no run but files under a run's names, a
link anywhere in the run's own subfolders, and a zoo subfolder they did not write; what
they refuse is left as it was."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from keras_gated.training.run_dir import (
    LOCK_FILE,
    RunFolderError,
    check_no_linked_run_files,
    open_run_folder,
)
from tests.support.helpers import make_image_folder
from training import finetune, train


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_image_folder(tmp_path_factory.mktemp("data") / "tiny", per_class=(40, 10))


def tree(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: a file's sha256, a link's target, a folder as such."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink():
            entries[name] = f"link to {os.readlink(path)}"
        elif path.is_file():
            entries[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            entries[name] = "folder"
    return entries


def error_line(stderr: str, module: str) -> str:
    """The one line a refused command prints (no traceback)."""
    assert "Traceback" not in stderr
    [line] = [x for x in stderr.splitlines() if x.startswith(f"training.{module}: ")]
    assert line.endswith(".")
    return line


def launch(module, data: Path, out: Path, *extra: str) -> int:
    weights = ["--weights", "none"] if module is finetune else []
    return module.main(["--model", "gresnetfc2", *weights, "--dataset", str(data), "--epochs", "1",
                        "--batch-size", "16", "--out", str(out), "--verbose", "0", *extra])


def users_folder(folder: Path) -> Path:
    """A folder of the user's own, with the names a run writes among its files."""
    (folder / "backup").mkdir(parents=True)
    for name in ("last.keras", "best.keras", "gates.csv", "notes.txt"):
        (folder / name).write_text(f"the user's {name}\n")
    (folder / "log.csv").write_text("epoch,score\n0,1\n5,9\n")
    (folder / "backup" / "epoch-0042.weights.h5").write_bytes(b"the user's weights")
    return folder


# --- a folder that holds no run ----------------------------------------------------------
@pytest.mark.parametrize("module", [train, finetune])
@pytest.mark.parametrize("restart", [False, True])
def test_a_folder_of_other_files_is_refused_and_left_as_it_was(module, restart, data, tmp_path,
                                                                capsys):
    out = users_folder(tmp_path / "mine")
    before = tree(tmp_path)
    code = launch(module, data, out, *(["--restart"] if restart else []))
    line = error_line(capsys.readouterr().err, module.__name__.split(".")[1])
    assert code == 2
    assert str(out) in line and "give a new or empty --out" in line and "resume" in line
    assert tree(tmp_path) == before


def test_a_lock_left_by_a_killed_launch_is_no_one_elses_file_but_a_log_is(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / LOCK_FILE).write_text("12345\n")
    with open_run_folder(out):
        pass
    assert not (out / LOCK_FILE).exists()
    (out / "log.csv").write_text("the user's\n")
    with pytest.raises(RunFolderError, match="holds no run"):
        with open_run_folder(out):
            pass
    assert [p.name for p in out.iterdir()] == ["log.csv"]


# --- links below the run's own folders ----------------------------------------------------
def test_a_link_inside_tensorboard_is_refused_and_nothing_written_through_it(data, tmp_path,
                                                                             capsys):
    outside = tmp_path / "outside" / "tb"
    outside.mkdir(parents=True)
    (outside / "keep.txt").write_text("precious\n")
    out = tmp_path / "run"
    (out / "tensorboard").mkdir(parents=True)
    (out / "tensorboard" / "train").symlink_to(outside, target_is_directory=True)
    before = tree(tmp_path)
    assert launch(train, data, out) == 2
    line = error_line(capsys.readouterr().err, "train")
    assert str(out / "tensorboard" / "train") in line and "symbolic link" in line
    assert tree(tmp_path) == before


@pytest.mark.parametrize("where", ["tensorboard/train/events", "backup/epoch-0001.weights.h5",
                                   "backup/deeper/file"])
@pytest.mark.parametrize("kind", ["symbolic link", "file with other hard links"])
def test_a_link_anywhere_under_the_runs_subfolders_is_refused(where, kind, tmp_path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not the run's\n")
    out = tmp_path / "run"
    link = out / where
    link.parent.mkdir(parents=True)
    if kind == "symbolic link":
        link.symlink_to(elsewhere)
    else:
        os.link(elsewhere, link)
    with pytest.raises(RunFolderError, match=f"{link} is a {kind}"):
        check_no_linked_run_files(out)


# --- the backup removes its own series only ----------------------------------------------


# --- the fine-tuning run's zoo subfolder ---------------------------------------------------
@pytest.mark.parametrize("linked", ["zoo", "zoo/gresnetfc2.tiny"])
def test_finetune_refuses_a_linked_zoo_folder_and_touches_nothing_outside(linked, data, tmp_path,
                                                                         capsys):
    outside = tmp_path / "outside"
    (outside / "gresnetfc2.tiny").mkdir(parents=True)
    (outside / "gresnetfc2.tiny" / "precious.txt").write_text("precious\n")
    out = tmp_path / "run"
    link = out / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside if linked == "zoo" else outside / "gresnetfc2.tiny",
                    target_is_directory=True)
    before = tree(tmp_path)
    assert launch(finetune, data, out) == 2
    line = error_line(capsys.readouterr().err, "finetune")
    assert str(link) in line and "symbolic link" in line
    assert tree(tmp_path) == before


def test_finetune_rewrites_its_own_zoo_folder_but_never_another(data, tmp_path, capsys):
    out = tmp_path / "run"
    zoo = out / "zoo" / "gresnetfc2.tiny"
    assert launch(finetune, data, out) == 0
    # Killed after its zoo folder was written, before metrics.json: the rerun writes it again.
    (out / "metrics.json").unlink()
    assert launch(finetune, data, out) == 0
    assert (out / "metrics.json").is_file() and (zoo / "model.weights.h5").is_file()
    assert not [p for p in (out / "zoo").iterdir() if p != zoo]  # no staging folder left
    # A file the user put in it makes it another folder: refused, and left as it was.
    (out / "metrics.json").unlink()
    (zoo / "mine.txt").write_text("the user's\n")
    capsys.readouterr()
    before = tree(tmp_path)
    assert launch(finetune, data, out) == 2
    line = error_line(capsys.readouterr().err, "finetune")
    assert str(zoo) in line and "not written by this run" in line
    assert tree(tmp_path) == before
