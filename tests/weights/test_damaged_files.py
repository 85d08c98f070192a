"""Damaged or mistaken weight files get one sentence naming the file and what to do: flipped
HDF5 header bytes, a whole saved model given as weights, a zoo copy holding another
architecture's config."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import keras_gated as kg

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "zoo"


# --- weights and model inputs ---------------------------------------------------------------
def test_flipped_hdf5_header_bytes_are_refused_naming_the_file(tmp_path):
    from keras_gated.weights.load import WeightsFileError

    path = tmp_path / "net.weights.h5"
    kg.create_model("plainnet10").save_weights(path)
    data = bytearray(path.read_bytes())
    for i in range(8, 40):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(WeightsFileError, match="cannot be read") as refused:
        kg.create_model("plainnet10", weights=str(path))
    assert str(path) in str(refused.value)


def test_a_path_to_a_whole_saved_model_as_weights_says_what_to_do(finished_run):
    with pytest.raises(ValueError, match="whole saved model") as refused:
        kg.create_model("gresnetfc2", weights=str(finished_run / "last.keras"))
    assert "keras.saving.load_model" in str(refused.value)
    with pytest.raises(ValueError, match="does not exist"):
        kg.create_model("gresnetfc2", weights=str(finished_run / "nothing.keras"))


# --- released weights ---------------------------------------------------------------------------
def test_a_zoo_copy_with_another_architecture_s_config_is_called_damaged(tmp_path, monkeypatch):
    from keras_gated.weights.load import ConfigurationMismatchError

    zoo = tmp_path / "zoo"
    shutil.copytree(ZOO / "plainnet10.fashion_mnist", zoo / "plainnet10.fashion_mnist")
    shutil.copy(ZOO / "resnetfc10.fashion_mnist" / "config.json",
                zoo / "plainnet10.fashion_mnist" / "config.json")
    monkeypatch.setenv("KERAS_GATED_ZOO", str(zoo))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ConfigurationMismatchError, match="damaged") as refused:
        kg.create_model("plainnet10", weights="fashion_mnist")
    assert "'resnetfc10'" in str(refused.value) and "config.json" in str(refused.value)
