"""``training.release`` writes only into its output unless told to register, leaves a zoo
folder as it was when it fails or is killed, never runs twice at once for one weight id,
and never copies a linked training log into a release."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import keras_gated as kg
from keras_gated.files import is_linked
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401


# --- the zoo: written by the release tool alone ----------------------------------------------
def _release_folder(folder: Path) -> dict[str, bytes]:
    """A stand-in release folder (a release's file names); its files' contents."""
    folder.mkdir(parents=True)
    for name in ("config.json", "README.md", "metrics.json", "model.weights.h5"):
        (folder / name).write_bytes(f"official {name}".encode())
    return {p.name: p.read_bytes() for p in folder.iterdir()}


# --- release: zoo/ only with --register, whole, under a lock ---------------------------------


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_release_without_register_writes_only_into_out(tmp_path, tiny):  # noqa: F811
    from training import release

    run, zoo = tiny.train("gresnetfc2"), tmp_path / "zoo"
    official = _release_folder(zoo / "gresnetfc2.tiny")
    with pytest.raises(ValueError, match="--out DIR"):
        release.release(run, zoo=zoo)
    folder = release.release(run, zoo=zoo, out=tmp_path / "out")
    assert folder == tmp_path / "out" / "gresnetfc2.tiny" and (folder / "model.weights.h5").is_file()
    assert _files(zoo / "gresnetfc2.tiny") == official
    with pytest.raises(ValueError, match="exists"):  # never over an earlier release in --out
        release.release(run, zoo=zoo, out=tmp_path / "out")
    with pytest.raises(ValueError, match="is in the zoo"):
        release.release(run, zoo=zoo, out=zoo)
    assert _files(zoo / "gresnetfc2.tiny") == official
    assert sorted(p.name for p in zoo.iterdir()) == ["gresnetfc2.tiny"]


def test_a_failed_or_killed_release_leaves_the_zoo_folder_as_it_was(tmp_path, tiny, monkeypatch):  # noqa: F811
    import keras_gated.evaluation as evaluation
    from keras_gated.release import zoo_folder
    from training import release

    run, zoo = tiny.train("gresnetfc2"), tmp_path / "zoo"
    official = _release_folder(zoo / "gresnetfc2.tiny")
    real_evaluate = evaluation.evaluate
    monkeypatch.setattr(evaluation, "evaluate", lambda *a, **k: {"test_accuracy": -1.0})
    with pytest.raises(ValueError, match="not released"):
        release.release(run, zoo=zoo, register_in=tiny.cfgs)
    assert _files(zoo / "gresnetfc2.tiny") == official
    monkeypatch.setattr(evaluation, "evaluate", real_evaluate)

    def killed(model, folder, **kwargs):  # the process dies after the first file
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / "config.json").write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(zoo_folder, "save_zoo_folder", killed)
    with pytest.raises(KeyboardInterrupt):
        release.release(run, zoo=zoo, register_in=tiny.cfgs)
    assert _files(zoo / "gresnetfc2.tiny") == official
    assert sorted(p.name for p in zoo.iterdir()) == ["gresnetfc2.tiny"]
    assert release.registered_cfgs(tiny.cfgs) == []


def test_a_release_removes_what_a_killed_release_of_its_weight_id_left(tmp_path, tiny):  # noqa: F811
    from training import release

    run, zoo = tiny.train("gresnetfc2"), tmp_path / "zoo"
    dead = 2 ** 22 + 12345  # above the kernel's default pid limit: no process has it
    left = {name: zoo / name for name in (f".gresnetfc2.tiny.partial-{dead}",
                                           f".gresnetfc2.tiny.partial-{dead}-1")}
    kept = {name: zoo / name for name in (".gresnetfc2.tiny.partial-1",  # pid 1 runs
                                           ".other.tiny.partial-99999999", "notes.partial-5")}
    for folder in (*left.values(), *kept.values()):
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}")
    release.release(run, zoo=zoo, register_in=tiny.cfgs)
    assert sorted(p.name for p in zoo.iterdir()) == sorted(["gresnetfc2.tiny", *kept])


def test_two_releases_of_one_weight_id_never_run_at_once(tmp_path, tiny, monkeypatch):  # noqa: F811
    import keras_gated.evaluation as evaluation
    from training import release

    run, zoo = tiny.train("gresnetfc2"), tmp_path / "zoo"
    real_evaluate, started, second = evaluation.evaluate, [], []

    def evaluate_while_another_starts(*args, **kwargs):
        if not started:
            started.append(True)
            try:
                second.append(release.release(run, zoo=zoo, register_in=tiny.cfgs))
            except ValueError as error:
                second.append(error)
        return real_evaluate(*args, **kwargs)

    monkeypatch.setattr(evaluation, "evaluate", evaluate_while_another_starts)
    folder = release.release(run, zoo=zoo, register_in=tiny.cfgs)
    assert isinstance(second[0], ValueError) and "in use by another process" in str(second[0])
    [cfg] = release.registered_cfgs(tiny.cfgs)
    assert cfg.sha256 == kg.pretrained.sha256_of(folder / "model.weights.h5")
    assert sorted(p.name for p in zoo.iterdir()) == ["gresnetfc2.tiny"]  # no lock, no staging left


# --- linked files are never copied or published ----------------------------------------------
def test_a_linked_training_log_is_never_copied_into_a_release(tmp_path):
    from keras_gated.release.zoo_folder import save_zoo_folder

    secret = tmp_path / "token"
    secret.write_text("hf_secret")
    for kind in ("symlink", "hardlink"):
        log = tmp_path / kind / "log.csv"
        log.parent.mkdir()
        log.symlink_to(secret) if kind == "symlink" else os.link(secret, log)
        assert is_linked(log)
        with pytest.raises(ValueError, match="training log"):
            save_zoo_folder(kg.GResNetFC(2, classes=2), tmp_path / kind / "zoo",
                            weight_id="gresnetfc2.x", metrics={"test_accuracy": 0.5, "split": "test", "num_examples": 4},
                            recipe="r", command="c", dataset_note="d", training_log=log)
        assert not (tmp_path / kind / "zoo").exists()
