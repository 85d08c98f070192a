"""A path given outside the working and home folders is published relative, never as an
absolute local folder."""

from __future__ import annotations


from tests.support.hub_fixtures import hf_home, hub  # noqa: F401


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
