"""The model is a class: timm's methods and properties belong to ``GatedModel`` and
survive ``model.save`` / ``keras.saving.load_model`` in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import keras_gated as kg
from keras_gated.models.gated_model import FeatureInfoList, GatedModel
from tests.support.helpers import to_numpy

ROOT = Path(__file__).resolve().parents[2]

# Runs in a fresh interpreter: reloads the saved model and writes what its methods give.
RELOAD = """
import json, sys
import numpy as np
import keras_gated
import keras

model = keras.saving.load_model(sys.argv[1])
x = np.load(sys.argv[2])
features = keras.ops.convert_to_numpy(model.forward_features(x))
reset = model.reset_classifier(3)
np.savez(sys.argv[3],
         features=features,
         head=keras.ops.convert_to_numpy(model.forward_head(features)),
         pooled=keras.ops.convert_to_numpy(model.forward_head(features, pre_logits=True)),
         reset_backbone=keras.ops.convert_to_numpy(reset.forward_features(x)),
         reset_shape=np.array(reset(x).shape))
print(json.dumps({
    "type": type(model).__name__,
    "num_classes": model.num_classes,
    "num_features": model.num_features,
    "reset_num_classes": reset.num_classes,
    "reset_type": type(reset).__name__,
    "classifier": model.get_classifier().name,
    "feature_info": list(model.feature_info),
    "channels": model.feature_info.channels(),
    "reduction": model.feature_info.reduction(),
    "pretrained_cfg": model.pretrained_cfg,
    "class_names": list(model.class_names),
}))
"""


def _pixels(model, seed: int = 0) -> np.ndarray:
    shape = model.input_shape[1:]
    return np.random.default_rng(seed).uniform(0, 255, (2, *shape)).astype("float32")


@pytest.mark.parametrize("name", ["gresnet20.cifar10", "highwayfc10.fashion_mnist"])
def test_a_reloaded_model_keeps_its_methods_in_a_fresh_process(name, tmp_path):
    model = kg.create_model(name)
    assert isinstance(model, GatedModel)
    x = _pixels(model)
    path = tmp_path / "model.keras"
    model.save(path)
    np.save(tmp_path / "x.npy", x)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    result = subprocess.run(
        [sys.executable, "-c", RELOAD, str(path), str(tmp_path / "x.npy"), str(tmp_path / "out.npz")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    got = json.loads(result.stdout.strip().splitlines()[-1])
    out = np.load(tmp_path / "out.npz")

    features = to_numpy(model.forward_features(x))
    assert got["type"] == "GatedModel" and got["reset_type"] == "GatedModel"
    np.testing.assert_allclose(out["features"], features, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["head"], to_numpy(model.forward_head(features)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["head"], to_numpy(model(x, training=False)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["pooled"],
                               to_numpy(model.forward_head(features, pre_logits=True)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["reset_backbone"], features, rtol=1e-5, atol=1e-5)
    assert tuple(out["reset_shape"]) == (2, 3) and got["reset_num_classes"] == 3
    assert got["num_classes"] == model.num_classes == 10
    assert got["num_features"] == model.num_features == features.shape[-1]
    assert got["classifier"] == model.get_classifier().name == "predictions"
    assert got["feature_info"] == list(model.feature_info)
    assert got["channels"] == model.feature_info.channels()
    assert got["reduction"] == model.feature_info.reduction()
    assert got["pretrained_cfg"] == json.loads(json.dumps(model.pretrained_cfg))
    assert got["pretrained_cfg"]["weight_id"] == name
    assert got["class_names"] == list(model.class_names)


def test_timm_api_is_the_class_s_own():
    for member in ("forward_features", "forward_head", "reset_classifier", "get_classifier"):
        assert callable(getattr(GatedModel, member)), member
    for member in ("feature_info", "pretrained_cfg", "num_classes", "num_features"):
        assert isinstance(getattr(GatedModel, member), property), member
    model = kg.GResNet20()
    # Nothing is attached to the instance: the methods resolve to the class.
    assert "forward_features" not in vars(model) and "reset_classifier" not in vars(model)
    assert model.forward_features.__func__ is GatedModel.forward_features


def test_feature_info_has_timm_accessors():
    model = kg.GResNet20(include_top=False)
    info = model.feature_info
    assert isinstance(info, FeatureInfoList)
    assert info.channels() == [16, 32, 64] and info.reduction() == [1, 2, 4]
    assert info.channels(-1) == 64 and info.reduction([0, 2]) == [1, 4]
    assert info.module_name(-1) == "final_relu"
    assert model.num_classes == 0 and model.get_classifier() is None
    fc = kg.HighwayFC(10)
    assert fc.feature_info.channels() == [fc.num_features] and fc.feature_info.reduction() == [1]


def test_pretrained_cfg_is_settable_and_kept_by_reset_classifier():
    model = kg.GResNet20()
    assert model.pretrained_cfg is None
    model.pretrained_cfg = {"file": "x.weights.h5"}
    assert model.reset_classifier(2).pretrained_cfg == {"file": "x.weights.h5"}
    assert model.get_config()["keras_gated"]["pretrained_cfg"] == {"file": "x.weights.h5"}


def test_a_plain_gated_model_says_what_it_lacks():
    import keras

    inputs = keras.Input((4,))
    model = GatedModel(inputs, keras.layers.Dense(2)(inputs))
    assert model.pretrained_cfg is None
    with pytest.raises(ValueError, match="not built by a keras-gated constructor"):
        model.forward_features(np.zeros((1, 4), "float32"))


