"""keras_gated.analysis.compress_training.RunBackup: each epoch's weights in a new file,
the phase's record replaced atomically and naming it, older files removed, and a backup
in the earlier layout (``<phase>.weights.h5``, a record without ``weights``) restored."""

import json

import keras
import numpy as np
import pytest

from keras_gated.analysis.compress_training import RunBackup


def _model(seed: int) -> keras.Model:
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss="mse")
    model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
    return model


def _same(a: keras.Model, b: keras.Model) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a.get_weights(), b.get_weights()))


def test_each_epoch_goes_to_a_new_file_named_by_the_record(tmp_path):
    backup = RunBackup(tmp_path, {"macs": 0.5})
    first, second = _model(0), _model(1)
    backup.save("pressure", first, [{"loss": 1.0}])
    backup.save("pressure", second, [{"loss": 1.0}, {"loss": 0.5}])
    record = json.loads((tmp_path / "pressure.json").read_text())
    assert record == {"epochs": [{"loss": 1.0}, {"loss": 0.5}], "weights": "pressure-0002.weights.h5"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pressure-0002.weights.h5", "pressure.json",
                                                         "settings.json"]
    restored = _model(2)
    assert backup.restore("pressure", restored) == record["epochs"] and _same(restored, second)
    assert backup.restore("finetune", _model(3)) == []  # no backup of that phase


def test_a_backup_in_the_earlier_layout_is_restored_and_replaced(tmp_path):
    saved = _model(0)
    saved.save_weights(tmp_path / "finetune.weights.h5")
    (tmp_path / "finetune.json").write_text(json.dumps({"epochs": [{"loss": 2.0}]}))
    backup = RunBackup(tmp_path, {"macs": 0.5})
    restored = _model(1)
    assert backup.restore("finetune", restored) == [{"loss": 2.0}] and _same(restored, saved)
    backup.save("finetune", restored, [{"loss": 2.0}, {"loss": 1.0}])
    assert not (tmp_path / "finetune.weights.h5").exists()
    assert (tmp_path / "finetune-0002.weights.h5").is_file()


def test_other_settings_are_refused(tmp_path):
    RunBackup(tmp_path, {"macs": 0.5})
    assert json.loads((tmp_path / "settings.json").read_text()) == {"macs": 0.5}
    with pytest.raises(ValueError, match=r"other settings \(macs\)"):
        RunBackup(tmp_path, {"macs": 0.35})
