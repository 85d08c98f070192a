"""A training run's epoch backups never write or delete through a link and remove only their
own older backups; ``training.finetune --out`` at the checkout root never writes ``zoo/``."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.models import compiled_tiny_fc


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
    callback.set_model(compiled_tiny_fc())
    with pytest.raises(ValueError, match="symbolic link"):
        callback.write(1)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["precious.weights.h5"]
    assert (elsewhere / "precious.weights.h5").read_bytes() == b"not ours"


@pytest.mark.parametrize("theirs", ["mine.weights.h5", "epoch-final.weights.txt"])
def test_epoch_backup_removes_only_its_own_older_backups(tmp_path, theirs):
    """A backup removes the older files it wrote, never a file of another name: one of the
    user's, or one that only looks like a backup (``epoch-final``)."""
    from keras_gated.training.callbacks import EpochBackup

    backup = tmp_path / "run" / "backup"
    backup.mkdir(parents=True)
    (backup / theirs).write_bytes(b"user file")
    callback = EpochBackup(backup)
    callback.set_model(compiled_tiny_fc())
    callback.write(1)
    callback.write(2)
    assert sorted(p.name for p in backup.iterdir()) == sorted(
        ["epoch-0002.weights.h5", "latest.json", theirs])
    assert (backup / theirs).read_bytes() == b"user file"


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


# --- release: zoo/ only with --register, whole, under a lock ---------------------------------
