"""Every command that writes, pointed at a folder holding an unrelated file, a symbolic
link and a hard link, leaves all three (and what the links name) as they were: it writes
only new paths of its own, never through a link (``keras_gated.files``)."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
from pathlib import Path

import keras
import pytest

import keras_gated as kg
from tests.support.helpers import make_image_folder
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401


@pytest.fixture
def crowded(tmp_path) -> Path:
    """``tmp_path/folder`` with ``notes.txt`` (the user's), ``link`` (a symbolic link to a
    file outside), ``dangling`` (a link to a path that does not exist yet) and ``hard``
    (a second name of a file outside)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (outside / "shared.txt").write_text("shared")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes")
    (folder / "link").symlink_to(outside / "secret.txt")
    (folder / "dangling").symlink_to(outside / "created-through-a-link")
    os.link(outside / "shared.txt", folder / "hard")
    return folder


def state(folder: Path) -> dict:
    """What must not change: every entry of ``folder`` and of the folder beside it that
    the links name, with contents, link targets and inode numbers."""
    seen = {}
    for root in (folder, folder.parent / "outside"):
        for path in sorted(root.iterdir()):
            key = str(path.relative_to(folder.parent))
            if path.is_symlink():
                seen[key] = ("link", os.readlink(path))
            elif path.is_file():
                seen[key] = ("file", path.read_bytes(), path.stat().st_ino)
            else:
                seen[key] = ("dir",)
    return seen


def untouched(before: dict, folder: Path, *new: str) -> None:
    after = state(folder)
    assert {k: v for k, v in after.items() if k not in {f"folder/{n}" for n in new}} == before
    assert not (folder.parent / "outside" / "created-through-a-link").exists()


def _cli(*argv: str) -> tuple[int, str]:
    from keras_gated.cli import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, err.getvalue()


# --- export ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [None, "link", "dangling", "hard", "notes.txt"])
def test_export_never_replaces_or_follows_what_is_there(crowded, name):
    from keras_gated.export import export

    before = state(crowded)
    target = crowded if name is None else crowded / name
    with pytest.raises(FileExistsError, match="exists already"):
        export(kg.GResNetFC(2, classes=2), target, "savedmodel")
    untouched(before, crowded)


def test_an_export_appears_whole_beside_what_is_there(crowded):
    pytest.importorskip("tensorflow", reason="a SavedModel needs TensorFlow")
    if keras.backend.backend() != "tensorflow":
        pytest.skip("one export is enough to show where it writes (TensorFlow pass)")
    from keras_gated.export import export

    before = state(crowded)
    export(kg.GResNetFC(2, classes=2), crowded / "net_savedmodel", "savedmodel")
    assert (crowded / "net_savedmodel" / "saved_model.pb").is_file()
    assert not [p for p in crowded.iterdir() if p.name.startswith(".partial-")]
    untouched(before, crowded, "net_savedmodel")


# --- convert ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [None, "link", "dangling"])
def test_convert_refuses_a_folder_with_files_or_a_link_before_any_work(crowded, name):
    from keras_gated.convert import convert, save_folder

    before = state(crowded)
    target = crowded if name is None else crowded / name
    with pytest.raises(ValueError, match="not an empty folder|symbolic link"):
        convert("resnet50", crowded / "missing.pth", "torchvision", out=target)
    with pytest.raises(ValueError, match="not an empty folder|symbolic link"):
        save_folder(kg.GResNetFC(2, classes=2), target)
    untouched(before, crowded)


def test_convert_writes_its_folder_beside_what_is_there(crowded):
    from keras_gated.convert import save_folder

    before = state(crowded)
    save_folder(kg.GResNetFC(2, classes=2), crowded / "converted")
    assert (crowded / "converted" / "model.weights.h5").is_file()
    assert kg.create_model("gresnetfc2", weights=str(crowded / "converted"), classes=2)
    untouched(before, crowded, "converted")


# --- pull ------------------------------------------------------------------------------------
def test_pull_writes_only_the_cache_beside_what_is_there(hub, hf_home, tmp_path):  # noqa: F811
    from keras_gated.release import hub as kg_hub
    from tests.support.zoo import write_zoo

    folder = write_zoo(tmp_path / "src" / "gresnet8.cifar10")
    kg_hub.publish(folder, "user/net")
    hf_home.mkdir(parents=True, exist_ok=True)
    (hf_home.parent / "outside").mkdir(exist_ok=True)
    (hf_home.parent / "outside" / "secret.txt").write_text("secret")
    (hf_home.parent / "outside" / "shared.txt").write_text("shared")
    (hf_home / "notes.txt").write_text("my notes")
    (hf_home / "link").symlink_to(hf_home.parent / "outside" / "secret.txt")
    (hf_home / "dangling").symlink_to(hf_home.parent / "outside" / "created-through-a-link")
    os.link(hf_home.parent / "outside" / "shared.txt", hf_home / "hard")
    before = {k: v for k, v in state(hf_home).items() if not k.startswith(f"{hf_home.name}/hub")}
    code, err = _cli("pull", "hf://user/net")
    assert code == 0, err
    after = {k: v for k, v in state(hf_home).items() if not k.startswith(f"{hf_home.name}/hub")}
    assert after == before
    assert not (hf_home.parent / "outside" / "created-through-a-link").exists()


def test_pull_of_a_repo_the_hub_does_not_have_says_so(hub, monkeypatch):  # noqa: F811
    from keras_gated.weights import hub as kg_hub
    monkeypatch.setattr(kg_hub, "local_copy", lambda cfg: None)  # no local copy serves it
    with pytest.raises(kg_hub.HubDownloadError) as raised:
        kg_hub.pull("gresnet20.cifar10")
    assert "answered HTTP 404" in str(raised.value) and "Cannot reach" not in str(raised.value)


# --- train and finetune ----------------------------------------------------------------------
TINY = ["--epochs", "1", "--batch-size", "16", "--verbose", "0"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_image_folder(tmp_path_factory.mktemp("data") / "tiny", per_class=(24, 8))


def _own(folder: Path) -> list[str]:
    """What a command wrote in ``folder``: every entry but the fixture's."""
    return [p.name for p in folder.iterdir() if p.name not in ("notes.txt", "link", "dangling", "hard")]


def test_train_leaves_what_is_in_its_folder(crowded, data):
    from training import train

    before = state(crowded)
    assert train.main(["--model", "gresnetfc2", "--dataset", str(data), "--out", str(crowded),
                       *TINY]) == 0
    assert (crowded / "metrics.json").is_file()
    untouched(before, crowded, *_own(crowded))


def test_finetune_leaves_what_is_in_its_folder(crowded, data):
    from training import finetune

    before = state(crowded)
    assert finetune.main(["--model", "gresnetfc2", "--weights", "none", "--dataset", str(data),
                          "--out", str(crowded), *TINY]) == 0
    assert (crowded / "zoo" / "gresnetfc2.tiny" / "README.md").is_file()
    untouched(before, crowded, *_own(crowded))


@pytest.mark.parametrize("name", ["log.csv", "run.lock", "gates.csv", "fingerprint.json"])
def test_a_run_never_writes_through_a_linked_run_file(crowded, data, name, capsys):
    from training import train

    secret = crowded.parent / "outside" / "secret.txt"
    (crowded / name).symlink_to(secret)
    before = state(crowded)
    assert train.main(["--model", "gresnetfc2", "--dataset", str(data), "--out", str(crowded),
                       *TINY]) == 2
    assert "a run never writes through" in capsys.readouterr().err
    assert secret.read_text() == "secret"
    untouched(before, crowded)


# --- analyze, compress, release, the lease's bundle --------------------------------------------
@pytest.fixture(scope="module")
def fc2_weights(tmp_path_factory):
    path = tmp_path_factory.mktemp("weights") / "fc2.weights.h5"
    kg.create_model("gresnetfc2", classes=2).save_weights(path)
    return path


def test_analyze_leaves_what_is_in_its_folder(crowded, data, fc2_weights):
    before = state(crowded)
    code, err = _cli("analyze", "gresnetfc2", "--weights", str(fc2_weights), "--dataset",
                     str(data), "--out", str(crowded), "--examples", "8")
    assert code == 2 and "--overwrite" in err, err  # a folder of other files: refused
    untouched(before, crowded)


@pytest.fixture(scope="module")
def analyzable(tmp_path_factory) -> tuple[str, str]:
    """``(weights, data)`` that analyze runs on: gresnetfc2's (its ten classes) and an
    image folder of ten classes."""
    root = tmp_path_factory.mktemp("analyzable")
    kg.create_model("gresnetfc2").save_weights(root / "fc2.weights.h5")
    data = make_image_folder(root / "ten", per_class=(1, 1), classes=10)
    return str(root / "fc2.weights.h5"), str(data)


def one_sentence(err: str, *words: str) -> str:
    """The one line ``err`` holds: a user-facing sentence naming each of ``words``."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("."), err
    assert "internal error" not in err and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], err
    return lines[0]


@pytest.mark.parametrize("name, says", [(None, "--overwrite"), ("link", "symbolic link"),
                                        ("dangling", "symbolic link"), ("notes.txt", "a file"),
                                        ("notes.txt/sub", "not a folder")])
def test_analyze_refuses_a_folder_with_files_a_link_or_a_file_before_any_work(
        crowded, monkeypatch, name, says):
    from keras_gated.models import factory

    monkeypatch.setattr(factory, "create_model", lambda *a, **k: pytest.fail("analyzed"))
    before = state(crowded)
    target = crowded if name is None else crowded / name
    code, err = _cli("analyze", "gresnetfc2", "--weights", "w.h5", "--dataset", "d",
                     "--out", str(target), "--examples", "8")
    assert code == 2, err
    one_sentence(err, "--out", says)
    untouched(before, crowded)


def test_analyze_overwrite_replaces_only_its_own_files_and_never_a_link(crowded, analyzable):
    (crowded / "gates.png").write_bytes(b"the user's own picture")
    (crowded / "analysis.json").symlink_to(crowded.parent / "outside" / "secret.txt")
    weights, data = analyzable
    argv = ("analyze", "gresnetfc2", "--weights", weights, "--dataset", data,
            "--out", str(crowded), "--no-prune")
    before = state(crowded)
    for flags in ((), ("--overwrite",)):  # a folder with files; a link among its own files
        code, err = _cli(*argv, *flags)
        assert code == 2, err
        one_sentence(err, str(crowded))
        untouched(before, crowded)
    (crowded / "analysis.json").unlink()
    before = state(crowded)
    del before["folder/gates.png"]  # the analysis's own name: replaced on purpose
    code, err = _cli(*argv, "--overwrite")
    assert code == 0, err
    assert (crowded / "gates.png").read_bytes().startswith(b"\x89PNG")
    assert json.loads((crowded / "analysis.json").read_text())["model"] == "gresnetfc2"
    assert sorted(_own(crowded)) == ["analysis.json", "gates.png", "removal.png"]
    assert not [p for p in crowded.parent.iterdir() if ".partial-" in p.name]
    untouched(before, crowded, "gates.png", "analysis.json", "removal.png")


def test_analyze_writes_its_folder_whole_or_not_at_all(tmp_path, analyzable, monkeypatch):
    from keras_gated.analysis import plots

    out, (weights, data) = tmp_path / "analysis", analyzable
    argv = ("analyze", "gresnetfc2", "--weights", weights, "--dataset", data, "--out", str(out),
            "--no-prune")
    def disk_full(*args) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patched:  # the disk fills after the first plot
        patched.setattr(plots, "plot_removal_curves", disk_full)
        code, err = _cli(*argv)
    assert code == 1, err
    assert list(tmp_path.iterdir()) == []
    code, err = _cli(*argv)
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["analysis.json", "gates.png", "removal.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["analysis"]


@pytest.mark.parametrize("name, says", [("link", "symbolic link"), ("dangling", "symbolic link"),
                                        ("notes.txt", "is a file"),
                                        ("notes.txt/sub", "not a folder")])
def test_compress_says_why_it_refuses_its_out(crowded, name, says, capsys):
    from keras_gated.cli import main

    before = state(crowded)
    with pytest.raises(SystemExit) as refused:
        main(["compress", "gresnetfc2", "--dataset", "d", "--blocks", "1", "--epochs", "0",
              "--out", str(crowded / name)])
    assert refused.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert says in line and "not an empty folder" not in line, line
    untouched(before, crowded)


@pytest.mark.parametrize("name, says", [("notes.txt", "exists already"), ("link", "exists already"),
                                        ("notes.txt/x", "not a folder")])
def test_an_export_path_taken_or_below_a_file_is_a_usage_error(crowded, name, says):
    before = state(crowded)
    code, err = _cli("export", "gresnetfc2", "--format", "savedmodel", "--out", str(crowded / name))
    assert code == 2, err
    one_sentence(err, says)
    untouched(before, crowded)


def test_compress_leaves_what_is_in_its_folder(crowded, data, tmp_path):
    source = tmp_path / "source"
    keras.saving.save_model(kg.create_model("gresnetfc2", classes=2), source, zipped=False)
    before = state(crowded)
    with pytest.raises(SystemExit) as refused:  # a usage error: --out must be new or empty
        _cli("compress", "gresnetfc2", "--weights", str(source), "--dataset", str(data),
             "--blocks", "1", "--epochs", "0", "--pressure-epochs", "0", "--out", str(crowded))
    assert refused.value.code == 2
    untouched(before, crowded, *_own(crowded))


def test_release_leaves_what_is_in_its_folder(crowded, data, tmp_path):
    from training import release, train

    run = tmp_path / "run"
    assert train.main(["--model", "gresnetfc2", "--dataset", str(data), "--out", str(run),
                       *TINY]) == 0
    before = state(crowded)
    with contextlib.redirect_stdout(io.StringIO()):
        code = release.main([str(run), "--out", str(crowded)])
    assert code in (0, 2)
    untouched(before, crowded, *_own(crowded))


def test_a_lease_bundle_is_never_written_over_other_files(crowded):
    import numpy as np

    from training.lease.bundle import write_bundle

    before = state(crowded)
    with pytest.raises(SystemExit, match="not a lease bundle"):
        write_bundle(crowded, [("w", np.zeros(4, "float32"), False)], {}, [])
    untouched(before, crowded)
