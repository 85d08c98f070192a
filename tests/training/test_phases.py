"""keras_gated.training.phases: a phase runs through the library's resumable loop (its
backups and its exactly-once log, one folder per phase), its batches are drawn from the
seed and the epoch alone, a stopped phase resumes where it stopped, and the backup folder
refuses other settings and an earlier layout."""

import json

import keras
import numpy as np
import pytest

from keras_gated.training.phases import PhaseBackup, phase_batches, train_phase


def _data(n=32, shape=(8, 8, 3), seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 255, (n, *shape)).astype("float32"), rng.integers(0, 3, n)


def _model(seed: int) -> keras.Model:
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((8, 8, 3)), keras.layers.Rescaling(1 / 255),
                             keras.layers.Flatten(), keras.layers.Dense(3, name="predictions")])


def _epoch(batches, epoch):
    batches.set_epoch(epoch)
    xs, ys = zip(*(batches[i] for i in range(len(batches))))
    return np.concatenate(xs), np.concatenate(ys)


def test_each_epochs_batches_are_drawn_from_the_seed_and_epoch_alone():
    x, y = _data(n=64)
    args = dict(batch_size=16, augment=True, seed=1)
    first, again = _epoch(phase_batches((x, y), **args), 3), _epoch(phase_batches((x, y), **args), 3)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    other = _epoch(phase_batches((x, y), **args), 4)
    assert not np.array_equal(first[0], other[0])  # a new order and new crops each epoch
    assert first[0].shape == x.shape and sorted(first[1]) == sorted(y)
    assert np.isclose(first[0].mean(), x.mean(), rtol=0.05)  # moved pixels, not new ones
    plain = _epoch(phase_batches((x, y), batch_size=16, augment=False, seed=1), 3)
    np.testing.assert_array_equal(plain[1], first[1])  # the same order
    assert not np.array_equal(plain[0], first[0])  # flipped and shifted
    order = [np.flatnonzero((x == image).all(axis=(1, 2, 3)))[0] for image in plain[0]]
    np.testing.assert_array_equal(y[order], plain[1])  # unaugmented: the examples themselves


def test_a_phase_writes_the_loops_backup_and_log_in_its_own_folder(tmp_path):
    backup = PhaseBackup(tmp_path, {"macs": 0.5})
    rows = train_phase(_model(0), _data(), epochs=2, batch_size=16, learning_rate=0.01,
                       backup=backup, phase="pressure")
    assert [sorted(r) for r in rows] == [["accuracy", "loss"]] * 2
    assert json.loads((tmp_path / "pressure" / "backup" / "latest.json").read_text()) == {
        "epoch": 2, "weights": "epoch-0002.weights.h5"}
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["phases.json", "pressure/backup/epoch-0002.weights.h5",
                       "pressure/backup/latest.json", "pressure/log.csv", "pressure/run_state.json",
                       "settings.json"]
    backup.delete()
    assert not tmp_path.exists()


def test_a_stopped_phase_resumes_at_its_epoch_and_ends_as_an_unstopped_one(tmp_path, monkeypatch):
    args = dict(epochs=3, batch_size=8, learning_rate=0.05, schedule="cosine", augment=True,
                seed=2, phase="finetune")
    whole_model = _model(0)
    whole = train_phase(whole_model, _data(), **args)

    class StopInTheThirdEpoch(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            if epoch == 2:
                raise KeyboardInterrupt

    fit = keras.Model.fit
    monkeypatch.setattr(keras.Model, "fit", lambda self, *a, callbacks=(), **k: fit(
        self, *a, callbacks=[*callbacks, StopInTheThirdEpoch()], **k))
    stopped = _model(0)
    with pytest.raises(KeyboardInterrupt):
        train_phase(stopped, _data(), backup=PhaseBackup(tmp_path, {}), **args)
    assert json.loads((tmp_path / "finetune" / "backup" / "latest.json").read_text())["epoch"] == 2
    monkeypatch.setattr(keras.Model, "fit", fit)
    resumed_model = _model(5)  # other initial weights: the backup's are loaded
    resumed = train_phase(resumed_model, _data(), backup=PhaseBackup(tmp_path, {}), **args)
    assert len(resumed) == 3
    for got, want in zip(resumed, whole):
        assert got == pytest.approx(want, rel=1e-5)
    for a, b in zip(resumed_model.get_weights(), whole_model.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-6, rtol=1e-6)


def test_other_settings_are_refused(tmp_path):
    PhaseBackup(tmp_path, {"macs": 0.5})
    assert json.loads((tmp_path / "settings.json").read_text()) == {"macs": 0.5}
    with pytest.raises(ValueError, match=r"other settings \(macs\)"):
        PhaseBackup(tmp_path, {"macs": 0.35})


def test_a_backup_of_the_earlier_one_folder_layout_is_refused_and_kept(tmp_path):
    PhaseBackup(tmp_path, {"macs": 0.5})
    (tmp_path / "pressure.json").write_text(json.dumps({"epochs": [{"loss": 1.0}]}))
    (tmp_path / "pressure-0001.weights.h5").write_bytes(b"weights")
    with pytest.raises(ValueError, match="earlier keras-gated.*new backup folder"):
        PhaseBackup(tmp_path, {"macs": 0.5})
    assert (tmp_path / "pressure-0001.weights.h5").read_bytes() == b"weights"


@pytest.mark.parametrize("files", [["pressure/notes.md"], ["pressure/backup/partial/thesis.tex"],
                                   ["pressure/backup/latest.json", "pressure/log.csv"]])
def test_a_folder_without_the_backups_settings_is_not_taken_for_one(tmp_path, files):
    """A backup writes its settings first: a folder without them holding anything, even
    files named as a backup's, is refused (resuming it would skip the settings check) and
    left whole."""
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("mine")
    with pytest.raises(ValueError, match=r"not a compress backup's \(e.g. pressure\)"):
        PhaseBackup(tmp_path, {})
    assert all((tmp_path / name).read_text() == "mine" for name in files)


def test_deleting_a_backup_leaves_folders_it_did_not_train_in(tmp_path):
    backup = PhaseBackup(tmp_path, {})
    train_phase(_model(0), _data(n=8), epochs=1, batch_size=8, learning_rate=0.01,
                backup=backup, phase="pressure")
    (tmp_path / "notes").mkdir()  # a user's folder, with names a phase writes
    (tmp_path / "notes" / "log.csv").write_text("mine")
    backup.delete()
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "notes", "notes/log.csv"]


def test_a_link_where_the_backup_writes_is_never_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    folder = tmp_path / "backup"
    folder.mkdir()
    (folder / "settings.json.partial").symlink_to(victim)
    with pytest.raises(ValueError, match="not a compress backup's"):
        PhaseBackup(folder, {"macs": 0.5})
    (folder / "settings.json.partial").unlink()
    backup = PhaseBackup(folder, {"macs": 0.5})
    (folder / "pressure").mkdir()
    (folder / "pressure" / "log.csv").symlink_to(victim)
    with pytest.raises(ValueError, match="symbolic link"):
        train_phase(_model(0), _data(n=8), epochs=1, batch_size=8, learning_rate=0.01,
                    backup=backup, phase="pressure")
    assert victim.read_text() == "mine"


def test_a_phase_without_a_backup_folder_writes_no_backup(monkeypatch):
    from keras_gated.training.callbacks import EpochBackup

    monkeypatch.setattr(EpochBackup, "write", lambda *a, **k: pytest.fail("backed up"))
    rows = train_phase(_model(0), _data(n=8), epochs=2, batch_size=8, learning_rate=0.01)
    assert len(rows) == 2



def test_a_delete_stopped_midway_leaves_a_backup_that_is_still_taken(tmp_path, monkeypatch):
    from keras_gated.training import phases

    backup = PhaseBackup(tmp_path, {"macs": 0.5})
    train_phase(_model(0), _data(n=8), epochs=1, batch_size=8, learning_rate=0.01,
                backup=backup, phase="pressure")
    remove = phases._remove_files

    def stop_before_the_settings(folder, pattern):
        if pattern is phases.TOP_FILES:
            raise KeyboardInterrupt
        remove(folder, pattern)

    monkeypatch.setattr(phases, "_remove_files", stop_before_the_settings)
    with pytest.raises(KeyboardInterrupt):
        backup.delete()
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # written first, gone last
    PhaseBackup(tmp_path, {"macs": 0.5}).delete()  # still a backup: taken, then deleted
    assert not tmp_path.exists()
