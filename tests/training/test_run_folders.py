"""A run folder is never a zoo folder, and a record is never deleted to get past a check:
``--out zoo/...`` is refused, ``--restart`` moves the old run aside, and a relaunch that
does not match the run's recorded settings (or whose fingerprint is corrupt or gone) is
refused with what differs and what to do, never resumed with wrong records."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.support.helpers import make_image_folder
from training import finetune, train
from keras_gated.training.run_dir import (
    CorruptRunFileError,
    RunFolderError,
    check_fingerprint,
    check_run_files,
    move_aside,
    open_run_folder,
)

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ["--model", "gresnetfc2", "--batch-size", "16", "--verbose", "0"]


def tree(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder``."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def backed_up_run(out: Path, epochs: int = 6, epoch: int = 4) -> Path:
    """A run folder backed up at ``epoch`` of ``epochs``, as training.train leaves it."""
    (out / "backup").mkdir(parents=True)
    (out / "backup" / "latest.json").write_text(
        json.dumps({"epoch": epoch, "weights": f"epoch-{epoch:04d}.weights.h5"}))
    (out / "fingerprint.json").write_text(json.dumps({"model": "gresnetfc2", "epochs": epochs}))
    return out


def one_error_line(stderr: str, module: str) -> str:
    assert "Traceback" not in stderr
    [line] = [x for x in stderr.splitlines() if x.startswith(f"training.{module}: ")]
    return line


# --- row 3: nothing a user runs writes into zoo/ ---------------------------------------------
@pytest.mark.parametrize("module", [train, finetune])
def test_out_in_the_zoo_is_refused_and_the_zoo_unchanged(module, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KERAS_GATED_ZOO", str(tmp_path / "other_zoo"))  # the checkout's too
    zoo_before = tree(ROOT / "zoo")
    extra = ["--weights", "none"] if module is finetune else []
    for out in (ROOT / "zoo" / "gresnet20.cifar10", ROOT / "zoo" / "anything"):
        code = module.main([*TRAIN, *extra, "--dataset", str(tmp_path / "nodata"),
                            "--epochs", "1", "--out", str(out)])
        assert code == 2
        line = one_error_line(capsys.readouterr().err, module.__name__.split(".")[1])
        assert str(out) in line and "training.release" in line and "delete" not in line
    assert not (ROOT / "zoo" / "anything").exists()
    assert tree(ROOT / "zoo") == zoo_before


def test_a_copied_release_folder_is_refused_anywhere(tmp_path):
    import shutil

    copy = Path(shutil.copytree(ROOT / "zoo" / "plainnet10.fashion_mnist", tmp_path / "release"))
    before = tree(copy)
    with pytest.raises(RunFolderError, match="a released zoo folder"):
        with open_run_folder(copy):
            pass
    assert tree(copy) == before


def test_restart_moves_the_old_run_aside_keeping_every_file(tmp_path, capsys):
    out = backed_up_run(tmp_path / "runs" / "r")
    before = tree(out)
    # The relaunch moves the run aside first, then fails on the missing data: the old run
    # is whole under its new name and the new folder is not left behind.
    code = train.main([*TRAIN, "--epochs", "2", "--dataset", str(tmp_path / "nodata"),
                       "--out", str(out), "--restart"])
    assert code == 2
    assert "moved the previous run" in capsys.readouterr().out
    [moved] = (tmp_path / "runs").glob("r.old-*")
    assert tree(moved) == before and not out.exists()


def test_move_aside_never_reuses_a_name(tmp_path):
    first = move_aside(backed_up_run(tmp_path / "r"))
    second = move_aside(backed_up_run(tmp_path / "r"))
    assert first != second and first.is_dir() and second.is_dir()
    assert move_aside(tmp_path / "r") is None  # nothing left to move


# --- row 5: a relaunch never resumes another run's records ------------------------------------
def test_other_epochs_on_a_backed_up_run_are_refused_naming_them(tmp_path):
    out = backed_up_run(tmp_path / "r")
    before = tree(out)
    with pytest.raises(RunFolderError) as refused:
        check_fingerprint(out, {"model": "gresnetfc2", "epochs": 2}, "[train]")
    message = str(refused.value)
    assert "epochs: stored 6, now 2" in message and "--restart" in message
    assert "delete" not in message
    assert tree(out) == before


def test_a_corrupt_fingerprint_says_restart_never_delete(tmp_path):
    out = backed_up_run(tmp_path / "r")
    (out / "fingerprint.json").write_text('{"model": "gresnetfc2", "epo')
    with pytest.raises(CorruptRunFileError) as refused:
        check_run_files(out)
    message = str(refused.value)
    assert str(out / "fingerprint.json") in message and "--restart" in message
    assert "delete" not in message


def test_a_backup_whose_fingerprint_is_gone_is_not_resumed(tmp_path):
    out = backed_up_run(tmp_path / "r")
    (out / "fingerprint.json").unlink()
    before = tree(out)
    with pytest.raises(RunFolderError, match="no fingerprint.json") as refused:
        check_fingerprint(out, {"model": "gresnetfc2", "epochs": 2}, "[train]")
    assert "--restart" in str(refused.value)
    assert tree(out) == before  # no fingerprint adopted, nothing written
