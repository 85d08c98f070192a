"""Weights are loaded only into the architecture they were saved from: the saved model's
name and layers are compared before any weight moves (the released
``plainnet10.fashion_mnist`` into ``resnetfc10`` and the reverse are refused, naming
both), and non-finite weights are refused with the tensor named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import keras
import pytest

import keras_gated as kg
from keras_gated.weights.load import ConfigurationMismatchError, check_identity

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "zoo"


@pytest.mark.parametrize(("arch", "released"), [("resnetfc10", "plainnet10"),
                                                ("plainnet10", "resnetfc10")])
def test_another_architecture_s_release_is_refused_naming_both(arch, released):
    with pytest.raises(ConfigurationMismatchError) as refused:
        kg.create_model(arch, weights=str(ZOO / f"{released}.fashion_mnist"))
    message = str(refused.value)
    assert repr(arch) in message and repr(released) in message


def test_the_own_release_still_loads():
    model = kg.create_model("plainnet10", weights=str(ZOO / "plainnet10.fashion_mnist"))
    assert model.name == "plainnet10"


def test_no_shared_layer_is_a_mismatch_whatever_the_saved_name(tmp_path):
    saved = json.loads((ZOO / "plainnet10.fashion_mnist" / "config.json").read_text())
    config = saved["config"]
    config["name"] = "someone_elses_net"  # not a registered name: the layers decide
    model = kg.create_model("resnetfc10")
    with pytest.raises(ConfigurationMismatchError, match="someone_elses_net"):
        check_identity(model, config, origin="weights x.weights.h5", arch="resnetfc10")
    own = json.loads((ZOO / "resnetfc10.fashion_mnist" / "config.json").read_text())["config"]
    check_identity(model, own, origin="weights y.weights.h5", arch="resnetfc10")  # passes


# --- non-finite weights -------------------------------------------------------------------
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_weight_file_with_nan_or_inf_is_refused_naming_the_tensor(tmp_path, bad):
    import h5py

    from keras_gated.weights.load import WeightsFileError

    path = tmp_path / "net.weights.h5"
    kg.create_model("plainnet10").save_weights(path)
    with h5py.File(path, "r+") as h5:
        names = []
        h5.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset)
                      and "dense" in name else None)
        target = h5[names[0]]
        values = target[()]
        values.flat[0] = bad
        target[...] = values
    with pytest.warns(UserWarning, match="saved without a configuration"):
        with pytest.raises(WeightsFileError) as refused:
            kg.create_model("plainnet10", weights=str(path))
    message = str(refused.value)
    assert names[0] in message and str(path) in message and "NaN or infinite" in message


# --- a tag that is also a path ------------------------------------------------------------
def test_a_tag_that_is_also_a_path_gets_one_warning_saying_which(tmp_path, monkeypatch):
    import warnings

    monkeypatch.chdir(tmp_path)
    shutil.copytree(ZOO / "resnetfc10.fashion_mnist", tmp_path / "fashion_mnist")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = kg.create_model("plainnet10", weights="fashion_mnist")
    said = [str(w.message) for w in caught if "working directory" in str(w.message)]
    assert len(said) == 1
    assert "plainnet10.fashion_mnist are used" in said[0] and "'./fashion_mnist'" in said[0]
    assert model.name == "plainnet10"
