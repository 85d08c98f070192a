"""timm's habits: ``create_model(weight_id, pretrained=False)``, ``get_classifier``,
``num_features``, ``in_chans``, ``global_pool``, ``drop_rate`` and ``feature_info``."""

import numpy as np
import pytest

import keras_gated as kg

WEIGHT_ID = "gresnet20.cifar10"


def _images(channels: int = 3, size: int = 32) -> np.ndarray:
    return np.random.default_rng(0).uniform(0, 255, (2, size, size, channels)).astype("float32")


def _max_weight_diff(a, b) -> float:
    return max(float(np.abs(x - y).max()) for x, y in zip(a.get_weights(), b.get_weights()))


def test_pretrained_false_builds_fresh_weights_with_the_weight_ids_configuration():
    released = kg.create_model(WEIGHT_ID, pretrained=True)
    fresh = kg.create_model(WEIGHT_ID, pretrained=False)
    assert fresh.pretrained_cfg is None
    assert fresh.num_classes == released.num_classes == 10
    assert fresh.input_shape == released.input_shape
    assert [w.shape for w in fresh.get_weights()] == [w.shape for w in released.get_weights()]
    assert _max_weight_diff(fresh, released) > 0.1
    assert released.pretrained_cfg["weight_id"] == WEIGHT_ID


def test_get_classifier_and_num_features_survive_a_reload(tmp_path):
    import keras

    model = kg.create_model(WEIGHT_ID, pretrained=True)
    path = tmp_path / "model.keras"
    model.save(path)
    reloaded = keras.saving.load_model(path)
    for m in (model, reloaded):
        assert m.get_classifier().name == "predictions"
        assert m.num_features == 64 == m.get_classifier().kernel.shape[0]
    assert kg.create_model("gresnet20", num_classes=0).get_classifier() is None


@pytest.mark.parametrize("in_chans", [1, 5])
def test_in_chans_adapts_the_stem_of_pretrained_weights(in_chans):
    from keras_gated.models.input_adapt import adapt_input_conv

    released = kg.create_model(WEIGHT_ID, pretrained=True)
    model = kg.create_model(WEIGHT_ID, pretrained=True, in_chans=in_chans)
    assert model.input_shape == (None, 32, 32, in_chans)
    assert model.pretrained_cfg["weight_id"] == WEIGHT_ID
    stems = [(a, b) for a, b in zip(released.get_weights(), model.get_weights())
             if a.shape != b.shape]
    assert len(stems) == 1
    kernel, adapted = stems[0]
    if in_chans == 1:
        np.testing.assert_allclose(adapted, kernel.sum(axis=-2, keepdims=True), rtol=1e-6)
    else:
        np.testing.assert_allclose(adapted[..., :3, :], kernel * 3 / in_chans, rtol=1e-6)
    np.testing.assert_allclose(adapt_input_conv(kernel, in_chans), adapted, rtol=1e-6)
    assert model.predict(_images(in_chans), verbose=0).shape == (2, 10)
    fresh = kg.create_model("gresnet20", in_chans=1)
    assert fresh.input_shape == (None, 32, 32, 1)


def test_global_pool_and_drop_rate():
    released = kg.create_model(WEIGHT_ID, pretrained=True)
    model = kg.create_model(WEIGHT_ID, pretrained=True, global_pool="max", drop_rate=0.3)
    names = {layer.name for layer in model.layers}
    assert "max_pool" in names and "avg_pool" not in names
    assert model.get_layer("head_dropout").rate == 0.3
    np.testing.assert_array_equal(model.get_classifier().get_weights()[0],
                                  released.get_classifier().get_weights()[0])
    assert model.reset_classifier(0).output_shape == (None, 64)
    assert "max_pool" in {layer.name for layer in model.reset_classifier(3).layers}
    unpooled = kg.create_model("gresnet20", num_classes=0, global_pool="")
    assert unpooled.output_shape == (None, 8, 8, 64)
    pooled = kg.create_model("gresnet20", num_classes=0, global_pool="max")
    assert pooled.output_shape == (None, 64)
    with pytest.raises(ValueError, match="num_classes=0"):
        kg.create_model("gresnet20", global_pool="")


def test_feature_info_of_a_features_only_model_has_timms_accessors():
    backbone = kg.create_model("gresnet20", features_only=True, out_indices=(1, 2))
    assert backbone.feature_info.channels() == [32, 64]
    assert backbone.feature_info.reduction() == [2, 4]
    assert kg.create_model("gresnet20").feature_info.channels() == [16, 32, 64]
