"""Nothing is deleted that a user did not ask to delete: every writing command writes only
inside the folder it was given or created, never deletes or overwrites a folder it did
not create, never follows a symbolic link out of it, never writes a released zoo folder
(the release tool alone does, with ``--register``, under a lock), and a finished output
appears whole. Each test replays a case where a command destroyed or overwrote data."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.analysis.compress_training import RunBackup
from keras_gated.files import check_not_linked, is_linked, new_output_folder
from tests.hub_fixtures import hf_home, hub  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = {"source": "gresnetfc2", "seed": 0}


def _cli(*argv: str) -> tuple[int, str, str]:
    """``keras-gated ARGV``: exit code, stdout and stderr."""
    from keras_gated.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _tiny_model() -> keras.Model:
    model = kg.GResNetFC(2, classes=2)
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="sparse_categorical_crossentropy")
    return model


# --- compress --backup-dir ----------------------------------------------------------------
def test_a_backup_dir_holding_other_files_is_refused_and_left_whole(tmp_path):
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "thesis.tex").write_text("\\chapter{Results}")
    with pytest.raises(ValueError, match="not a compress backup"):
        RunBackup(folder, SETTINGS)
    assert (folder / "thesis.tex").read_text() == "\\chapter{Results}"
    assert sorted(p.name for p in folder.iterdir()) == ["thesis.tex"]


def test_a_backup_dir_that_is_a_link_is_refused(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(ValueError, match="symbolic link"):
        RunBackup(tmp_path / "link", SETTINGS)
    assert list(target.iterdir()) == []


def test_deleting_a_backup_removes_only_what_the_backup_wrote(tmp_path):
    folder = tmp_path / "backup"
    backup = RunBackup(folder, SETTINGS)
    backup.save("pressure", _tiny_model(), [{"loss": 1.0}])
    (folder / "notes.md").write_text("mine")  # put there by the user while it ran
    backup.delete()
    assert sorted(p.name for p in folder.iterdir()) == ["notes.md"]
    backup = RunBackup(tmp_path / "fresh", SETTINGS)
    backup.save("finetune", _tiny_model(), [{"loss": 1.0}])
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
    from tests.helpers import make_image_folder

    data = make_image_folder(tmp_path / "tiny", per_class=(8, 4))
    monkeypatch.setattr(compress_module, "train_epochs",
                        lambda *a, **k: pytest.fail("trained with a foreign --backup-dir"))
    code, _, err = _cli("compress", "gresnetfc2", "--weights", str(source), "--dataset",
                        str(data), "--blocks", "1", "--epochs", "1", "--out",
                        str(tmp_path / "out"), "--backup-dir", str(folder))
    assert code == 2, err
    assert "--backup-dir" in err or str(folder) in err
    assert (folder / "thesis.tex").read_text() == "draft"
    assert not (tmp_path / "out").exists()


# --- EpochBackup ----------------------------------------------------------------------------
def test_epoch_backup_never_writes_or_deletes_through_a_linked_backup_folder(tmp_path):
    from keras_gated.training.callbacks import EpochBackup

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.weights.h5").write_bytes(b"not ours")
    run = tmp_path / "run"
    run.mkdir()
    (run / "backup").symlink_to(elsewhere)
    callback = EpochBackup(run / "backup")
    callback.set_model(_tiny_model())
    with pytest.raises(ValueError, match="symbolic link"):
        callback.write(1)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["precious.weights.h5"]
    assert (elsewhere / "precious.weights.h5").read_bytes() == b"not ours"


def test_epoch_backup_removes_only_its_own_older_backups(tmp_path):
    from keras_gated.training.callbacks import EpochBackup

    backup = tmp_path / "run" / "backup"
    backup.mkdir(parents=True)
    (backup / "mine.weights.h5").write_bytes(b"user file")
    callback = EpochBackup(backup)
    callback.set_model(_tiny_model())
    callback.write(1)
    callback.write(2)
    assert sorted(p.name for p in backup.iterdir()) == [
        "epoch-0002.weights.h5", "latest.json", "mine.weights.h5"]


# --- the zoo: written by the release tool alone ----------------------------------------------
def _release_folder(folder: Path) -> dict[str, bytes]:
    """A stand-in release folder (a release's file names); its files' contents."""
    folder.mkdir(parents=True)
    for name in ("config.json", "README.md", "metrics.json", "model.weights.h5"):
        (folder / name).write_bytes(f"official {name}".encode())
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_finetune_out_at_the_checkout_root_never_writes_the_zoo(tmp_path, monkeypatch):
    from keras_gated.training import build
    from training import finetune

    checkout = tmp_path / "checkout"
    official = _release_folder(checkout / "zoo" / "gresnetfc2.tiny")
    monkeypatch.setenv("KERAS_GATED_ZOO", str(checkout / "zoo"))
    monkeypatch.setattr(build, "build_run", lambda *a, **k: pytest.fail("trained into the zoo"))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = finetune.main(["--model", "gresnetfc2", "--weights", "none", "--dataset",
                              str(tmp_path / "tiny"), "--epochs", "1", "--out", str(checkout)])
    assert code == 2, err.getvalue()
    assert "zoo" in err.getvalue() and "--out" in err.getvalue()
    assert {p.name: p.read_bytes() for p in (checkout / "zoo" / "gresnetfc2.tiny").iterdir()} == official
    assert sorted(p.name for p in checkout.iterdir()) == ["zoo"]  # no run.lock, no run files


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


# --- publish ----------------------------------------------------------------------------------
def test_publish_never_deletes_files_of_an_existing_repo_without_the_flag(hub, tmp_path):  # noqa: F811
    from huggingface_hub import HfApi

    from keras_gated.release import hub as kg_hub
    from tests.reliability.test_publish_release import write_zoo

    repo = "user/existing"
    api = HfApi()
    api.create_repo(repo)
    for name, content in (("analysis.ipynb", b"{}"), ("data/train.csv", b"x,y\n1,2\n")):
        api.upload_file(path_or_fileobj=content, path_in_repo=name, repo_id=repo)
    before = hub.files(repo)
    folder = write_zoo(tmp_path / "src" / "gresnet8.cifar10")
    with pytest.raises(ValueError, match="--delete-other-files") as refused:
        kg_hub.publish(folder, repo)
    assert "analysis.ipynb" in str(refused.value) and "data/train.csv" in str(refused.value)
    assert hub.files(repo) == before  # nothing committed
    kg_hub.publish(folder, repo, delete_other_files=True)
    assert "analysis.ipynb" not in hub.files(repo) and "model.weights.h5" in hub.files(repo)
    kg_hub.publish(folder, repo)  # a repo holding only a release is published over as before


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


def test_two_compress_runs_into_one_out_never_both_write_it(tmp_path, monkeypatch):
    import importlib

    from tests.helpers import make_image_folder

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
from tests.training.test_release import tiny  # noqa: E402, F401


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


def test_a_hard_linked_file_is_never_published(hub, tmp_path):  # noqa: F811
    from keras_gated.release import hub as kg_hub
    from tests.reliability.test_publish_release import write_zoo

    folder = write_zoo(tmp_path / "src" / "gresnet8.cifar10")
    secret = tmp_path / "token"
    secret.write_text("hf_secret_token")
    (folder / "training_log.csv").unlink()
    os.link(secret, folder / "training_log.txt")
    with pytest.raises(ValueError, match=r"hard links \(training_log.txt\)"):
        kg_hub.publish(folder, "user/repo")
    assert "user/repo" not in hub.state.repos
    with pytest.raises(ValueError, match="other hard links"):
        check_not_linked(folder / "training_log.txt", "The log")


# --- credentials in an endpoint never reach a message ----------------------------------------
def test_no_message_shows_the_credentials_of_hf_endpoint(hub, monkeypatch):  # noqa: F811
    import huggingface_hub.hf_api
    from huggingface_hub import constants

    from keras_gated.weights.sources import WeightsNotFoundError

    secret = hub.url.replace("http://", "http://user:s3cret-password@")
    monkeypatch.setenv("HF_ENDPOINT", secret)
    monkeypatch.setattr(constants, "ENDPOINT", secret)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        secret + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(huggingface_hub.hf_api.api, "endpoint", secret)
    with pytest.raises(WeightsNotFoundError) as raised:  # not on this Hub, not in the zoo
        kg.create_model("gresnet20", weights="cifar10")
    assert "s3cret-password" not in str(raised.value) and "user:" not in str(raised.value)
    assert hub.url.removeprefix("http://") in str(raised.value)  # the host is still named


def test_a_command_error_never_prints_url_credentials(capsys):
    from keras_gated.errors import run_command

    def fails() -> int:
        raise ValueError("Cannot reach http://user:s3cret@hub.example/api: check the endpoint.")

    assert run_command("keras-gated", fails) == 2
    err = capsys.readouterr().err
    assert "s3cret" not in err and "http://hub.example/api" in err


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
