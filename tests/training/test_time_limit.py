"""``training.train --time-limit``: a run stopped at a step, backed up (sharded with
``--shard-mb``) and started again ends with the weights and optimizer state of a run
that was never stopped."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support.helpers import make_image_folder
from training import train

SHARDS = ("--shard-mb", "1")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_image_folder(tmp_path_factory.mktemp("data") / "tiny", per_class=(40, 10))


def _train(folder, out, *extra):
    return train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "16", "--out", str(out), "--verbose", "0", *extra])


def _backup_arrays(run) -> dict[str, np.ndarray]:
    """Every array of a run's last backup (model weights and optimizer state), by path."""
    import h5py

    latest = json.loads((run / "backup" / "latest.json").read_text())
    arrays = {}
    with h5py.File(run / "backup" / latest["weights"], "r") as f:
        f.visititems(lambda name, item: arrays.__setitem__(name, item[()])
                     if isinstance(item, h5py.Dataset) else None)
    return arrays


def test_a_run_stopped_by_its_time_limit_resumes_exactly(folder, tmp_path, capsys):
    assert _train(folder, tmp_path / "whole") == 0
    stopped = tmp_path / "stopped"
    # A limit that every step overruns: each launch does one step, backs up, exits 0.
    for step in (1, 2):
        assert _train(folder, stopped, "--time-limit", "0.00001", *SHARDS) == 0
        assert f"stopped after step {step} of epoch 1" in capsys.readouterr().out
        latest = json.loads((stopped / "backup" / "latest.json").read_text())
        assert latest["epoch"] == 0 and latest["step"] == step
        assert not SHARDS or latest["weights"].endswith(".weights.json")  # Keras sharded weights
        assert not SHARDS or list((stopped / "backup").glob("*_*.weights.h5"))  # its shard files
        assert not (stopped / "metrics.json").exists()
    assert _train(folder, stopped) == 0
    assert "resuming from" in capsys.readouterr().out
    whole, resumed = _backup_arrays(tmp_path / "whole"), _backup_arrays(stopped)
    assert set(resumed) == set(whole) and any("optimizer" in name for name in whole)
    for name, expected in whole.items():
        np.testing.assert_allclose(resumed[name], expected, atol=1e-6, rtol=0, err_msg=name)
    rows = (stopped / "log.csv").read_text().splitlines()
    assert len(rows) == 3  # the header and one row per epoch, each logged once


def test_time_limit_needs_the_numpy_engine(folder, tmp_path, capsys):
    pytest.importorskip("tensorflow", reason="the tf.data engine needs TensorFlow")
    code = _train(folder, tmp_path / "tf", "--data-engine", "tf", "--time-limit", "1")
    assert code == 2 and "numpy data engine" in capsys.readouterr().err
