"""Nothing is deleted that a user did not ask to delete: an output folder is claimed by one writer
and appears whole or not at all, and what a command writes names local folders relative to
the working and home folders (``keras_gated.files``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from keras_gated.files import new_output_folder, new_output_path
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401


# --- compress --out: claimed, written whole -------------------------------------------------
def test_a_claimed_output_folder_refuses_a_second_writer_and_appears_whole(tmp_path):
    out = tmp_path / "out"
    with new_output_folder(out) as staging:
        (staging / "result.txt").write_text("first")
        assert not (out / "result.txt").exists()  # nothing shows before the end
        with pytest.raises(ValueError, match="another command"):
            with new_output_folder(out):
                pass
    assert sorted(p.name for p in out.iterdir()) == ["result.txt"]
    assert not list(tmp_path.glob(".out.partial-*"))


def test_a_failed_output_leaves_the_folder_as_it_was(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (empty, tmp_path / "new"):
        with pytest.raises(RuntimeError):
            with new_output_folder(out) as staging:
                (staging / "half.txt").write_text("half")
                raise RuntimeError("killed")
    assert list(empty.iterdir()) == [] and not (tmp_path / "new").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


def _ended_pid() -> int:
    """The pid of a process that has ended."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    return int(child.stdout)


def test_the_staging_a_killed_command_left_goes_with_the_next_run_of_its_output(tmp_path):
    dead, also_dead, outside = _ended_pid(), _ended_pid(), tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    stale = [tmp_path / f".out.partial-{dead}", tmp_path / f".partial-{dead}-net.onnx"]
    for folder in stale:
        folder.mkdir()
        (folder / "half.txt").write_text("half")
    (tmp_path / f".out.partial-{also_dead}").symlink_to(outside)
    kept = {tmp_path / ".out.partial-1": "a running process's",  # pid 1 always runs
            tmp_path / f".other.partial-{dead}": "another output's",
            tmp_path / f".out.partial-{dead}.bak": "not a staging name",
            tmp_path / f".partial-{dead}-other.onnx": "another path's"}
    for folder, text in kept.items():
        folder.mkdir()
        (folder / "note.txt").write_text(text)
    with new_output_folder(tmp_path / "out") as staging:
        (staging / "result.txt").write_text("done")
    with new_output_path(tmp_path / "net.onnx") as staging:
        staging.write_text("net")
    assert not any(os.path.lexists(p) for p in [*stale, tmp_path / f".out.partial-{also_dead}"])
    assert {p: (p / "note.txt").read_text() for p in kept} == kept
    assert (outside / "keep.txt").read_text() == "keep"
    assert (tmp_path / "out" / "result.txt").read_text() == "done"


def test_a_finished_output_that_cannot_be_placed_is_kept_where_no_run_removes_it(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(OSError, match="out.unplaced-"):
        with new_output_folder(out) as staging:
            (staging / "result.txt").write_text("done")
            (out / "theirs.txt").write_text("theirs")  # written meanwhile by something else
    assert (tmp_path / f"out.unplaced-{os.getpid()}" / "result.txt").read_text() == "done"
    assert (out / "theirs.txt").read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", f"out.unplaced-{os.getpid()}"]


# --- release: zoo/ only with --register, whole, under a lock ---------------------------------


# --- published records name no local folder ---------------------------------------------------
def test_cards_and_records_name_paths_relative_to_the_working_and_home_folders(tmp_path, monkeypatch):
    from keras_gated.files import portable_path, portable_record
    from training.finetune import card_usage

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path.parent))
    usage = card_usage("gresnetfc2", tmp_path / "runs" / "x" / "zoo" / "gresnetfc2.tiny",
                       (28, 28, 1), 2, adapted=False)
    assert 'folder = "runs/x/zoo/gresnetfc2.tiny"' in usage and str(tmp_path) not in usage
    record = portable_record({"command": f"python -m training.finetune --dataset {tmp_path}/data "
                                         f"--weights {tmp_path.parent}/w.h5 --out {tmp_path}",
                              "notes": [f"image folder {tmp_path}/data"], "epochs": 3})
    assert record == {"command": "python -m training.finetune --dataset ./data --weights ~/w.h5 "
                                 "--out .", "notes": ["image folder ./data"], "epochs": 3}
    assert portable_path(tmp_path.parent / "elsewhere") == "~/elsewhere"


def test_free_text_names_no_absolute_local_folder_outside_the_working_and_home_folders(
        tmp_path, monkeypatch):
    """A note or a command that names a folder neither given to the command nor under the
    working or home folder (a data disk, /tmp) shows it relative to the working folder;
    URLs, program paths and fractions are left as they are."""
    from keras_gated.files import portable_text

    work, data = tmp_path / "home" / "work", tmp_path / "disk" / "data"
    work.mkdir(parents=True)
    data.mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    text = (f"fine-tuned on {data}/train (copied from {data}/) by /usr/bin/python; "
            f"see https://huggingface.co/org/repo/tree/main and hf://org/repo, 1/2 of it")
    portable = portable_text(text)
    assert str(tmp_path) not in portable
    assert "fine-tuned on ../../disk/data/train (copied from ../../disk/data/)" in portable
    assert portable.endswith("by /usr/bin/python; see https://huggingface.co/org/repo/tree/main "
                             "and hf://org/repo, 1/2 of it")
