"""Nothing is deleted that a user did not ask to delete: an output folder is claimed by one writer
and appears whole or not at all, and what a command writes names local folders relative to
the working and home folders (``keras_gated.files``)."""

from __future__ import annotations


import pytest

from keras_gated.files import new_output_folder
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
