"""timm's vocabulary: create_model(pretrained=, num_classes=, features_only=, out_indices=,
pretrained_cfg_overlay=), list_models(filter, exclude_filters=), and the per-model
pretrained_cfg / num_classes / reset_classifier / forward_features / forward_head."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import keras_gated as kg
from keras_gated.weights import get_pretrained_cfg, list_pretrained, tags_for
from keras_gated.registry import get_model_entry
from tests.support.helpers import to_numpy



def one_per_constructor_first(names: list[str]) -> list:
    """``names`` with the first quick one of each constructor in the default run and the
    others under ``-m slow``: the timm methods come from the builder a constructor shares
    with all its sizes, so one size covers them; the others run with the slow tests."""
    seen, params = set(), []
    for name in names:
        entry = get_model_entry(name)
        first = entry.constructor not in seen and not entry.slow
        if first:
            seen.add(entry.constructor)
        params.append(name if first else pytest.param(name, marks=pytest.mark.slow))
    return params


# Every registered name: one per constructor in the default run, the others (and the
# entries the registry marks slow: ImageNet size, 110+ layers, WRN-16-8 and wider, the 50-
# and 100-layer FC nets) with `-m slow`.
MODELS = one_per_constructor_first(kg.list_models())


def _pixels(model, batch: int = 2, seed: int = 0) -> np.ndarray:
    shape = model.input_shape[1:]
    return np.random.default_rng(seed).uniform(0, 255, (batch, *shape)).astype("float32")


def _backbone_values(model) -> dict[str, np.ndarray]:
    """Every weight but the head's, by path."""
    return {
        w.path: to_numpy(w) for w in model.weights if not w.path.startswith("predictions/")
    }


@pytest.mark.parametrize("name", MODELS)
def test_timm_model_api(name):
    model = kg.create_model(name)
    assert model.name == name  # the builder names its model as the registry does
    assert model.pretrained_cfg is None and model.num_classes == 10
    x = _pixels(model)
    expected = to_numpy(model(x, training=False))

    # forward_head(forward_features(x)) is the model, and pre_logits the pooled features.
    features = model.forward_features(x)
    np.testing.assert_allclose(to_numpy(model.forward_head(features)), expected, rtol=1e-5, atol=1e-6)
    pooled = to_numpy(model.forward_head(features, pre_logits=True))
    assert pooled.shape == (2, model.get_layer("predictions").input.shape[-1])

    # reset_classifier: a new head on the same backbone, whose weights are unchanged.
    before = _backbone_values(model)
    reset = model.reset_classifier(5)
    assert to_numpy(reset(x, training=False)).shape == (2, 5) and reset.num_classes == 5
    after = _backbone_values(reset)
    assert before.keys() == after.keys()
    for path, value in before.items():
        np.testing.assert_array_equal(after[path], value)
    np.testing.assert_allclose(to_numpy(model(x, training=False)), expected, rtol=1e-6)
    headless = model.reset_classifier(0)
    assert headless.num_classes == 0
    np.testing.assert_allclose(to_numpy(headless(x, training=False)), pooled, rtol=1e-5, atol=1e-6)

    # features_only: one output per stage, at the stage strides; a net whose features
    # are a vector (fully-connected) has no feature maps.
    if len(features.shape) == 2:
        with pytest.raises(ValueError, match="fully-connected"):
            kg.create_model(name, features_only=True)
        return
    backbone = kg.create_model(name, features_only=True)
    reductions = [info["reduction"] for info in backbone.feature_info]
    assert reductions == sorted(reductions) and reductions[0] >= 1
    maps = backbone(x)
    height, width = x.shape[1:3]
    assert [tuple(m.shape[1:3]) for m in maps] == [
        (-(-height // r), -(-width // r)) for r in reductions
    ]
    assert [m.shape[-1] for m in maps] == [info["num_chs"] for info in backbone.feature_info]


def test_features_only_out_indices():
    backbone = kg.create_model("gresnet20", features_only=True, out_indices=(-1, 0))
    assert [(i["reduction"], i["num_chs"]) for i in backbone.feature_info] == [(4, 64), (1, 16)]
    assert backbone.pretrained_cfg is None


# Every released architecture: each has its own weights file and config.
RELEASED_ARCHS = sorted({weight_id.split(".")[0] for weight_id in list_pretrained()})


@pytest.mark.parametrize("arch", RELEASED_ARCHS)
def test_pretrained_true_loads_the_backbone_with_a_new_head(arch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # caveats of early releases
        released = kg.create_model(arch, pretrained=True)
        model = kg.create_model(arch, pretrained=True, num_classes=5)
    tag = tags_for(arch)[0]
    assert model.pretrained_cfg == get_pretrained_cfg(f"{arch}.{tag}").__dict__ | {
        "class_names": model.pretrained_cfg["class_names"]
    }
    assert model.pretrained_cfg["weight_id"] == f"{arch}.{tag}"
    assert model.num_classes == 5
    x = _pixels(model)
    assert to_numpy(model(x, training=False)).shape == (2, 5)
    loaded, expected = _backbone_values(model), _backbone_values(released)
    assert loaded.keys() == expected.keys()
    for path, value in expected.items():
        np.testing.assert_array_equal(loaded[path], value)


def test_num_classes_zero_gives_pooled_features():
    model = kg.create_model("gresnet20", num_classes=0)
    assert model.output_shape == (None, 64) and model.num_classes == 0


def test_pretrained_cfg_overlay_replaces_fields_for_this_build_only():
    weight_id = list_pretrained("gresnetfc10.*")[0]
    arch, tag = weight_id.split(".")
    model = kg.create_model(weight_id, pretrained_cfg_overlay={"license": "mit"})
    assert model.pretrained_cfg["license"] == "mit"
    assert get_pretrained_cfg(weight_id).license != "mit"
    path = kg.pretrained.sources.resolve_pretrained_file(get_pretrained_cfg(weight_id))
    local = kg.create_model(arch, pretrained=tag, pretrained_cfg_overlay={"file": str(path)})
    assert local.pretrained_cfg["file"] == str(path)
    x = _pixels(model)
    np.testing.assert_allclose(to_numpy(local(x)), to_numpy(model(x)), rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_classes": 5, "classes": 3}, "alias"),
        ({"out_indices": (0,)}, "features_only"),
        ({"pretrained": True, "pretrained_cfg_overlay": {"nope": 1}}, "Allowed keys"),
        ({"pretrained_cfg_overlay": {"license": "mit"}}, "released weights"),
        ({"pretrained": "cifar10", "weights": "other"}, "give only one"),
        ({"features_only": True, "include_top": True}, "feature maps"),
    ],
)
def test_create_model_refuses_contradictions(kwargs, match):
    with pytest.raises(ValueError, match=match):
        kg.create_model("gresnetfc10" if "pretrained" in kwargs else "gresnet20", **kwargs)


def test_pretrained_true_without_released_weights_names_the_released_ones():
    with pytest.raises(ValueError, match="no weights are released for 'gresnet110'"):
        kg.create_model("gresnet110", pretrained=True)


def test_list_models_filters():
    assert kg.list_models("gresnet2?") == ["gresnet20"]  # positional, as before
    assert kg.list_models(["gresnet2?", "wrn_16_*"]) == ["gresnet20", "wrn_16_2", "wrn_16_4", "wrn_16_8"]
    assert kg.list_models("wrn_16_*", exclude_filters="*_8") == ["wrn_16_2", "wrn_16_4"]
    assert kg.list_models(filter="wrn_*", exclude_filters=["wrn_16_*", "wrn_4*"]) == [
        "wrn_28_10", "wrn_52_1"
    ]
    released = kg.list_models(pretrained=True, exclude_filters="*.fashion_mnist")
    assert released and all(not name.endswith(".fashion_mnist") for name in released)


@pytest.mark.parametrize("name, weights", [("gresnet20", "cifar10"), ("highwayfc10", None)])
def test_a_reloaded_model_keeps_the_timm_api(name, weights, tmp_path):
    import keras

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a superseded checkpoint's caveat
        model = kg.create_model(name, weights=weights)
    model.save(tmp_path / "model.keras")
    reloaded = keras.saving.load_model(tmp_path / "model.keras")
    assert reloaded.num_classes == model.num_classes == 10
    assert reloaded.pretrained_cfg == (None if weights is None else
                                       _as_json(model.pretrained_cfg))
    assert reloaded.class_names == model.class_names
    x = np.random.default_rng(0).uniform(0, 255, (2, *model.input_shape[1:])).astype("float32")
    features = to_numpy(reloaded.forward_features(x))
    np.testing.assert_allclose(features, to_numpy(model.forward_features(x)), atol=1e-6)
    np.testing.assert_allclose(to_numpy(reloaded.forward_head(features)), to_numpy(model(x)),
                               atol=1e-6)
    smaller = reloaded.reset_classifier(3)
    assert smaller.output_shape == (None, 3) and smaller.num_classes == 3


def _as_json(value):
    """``value`` as it comes back from a saved config (tuples become lists)."""
    import json

    return json.loads(json.dumps(value))
