"""A load flows one way: one ``weights=`` value is resolved once (one read of the
weights registry, one file resolution), then the model is built from the record and
the record loaded into it, with no look-up in between."""

from __future__ import annotations

import functools
import sys

import numpy as np
import pytest

import keras_gated as kg
from keras_gated.weights import registered as weights_registry
from keras_gated.weights import resolve, sources
from keras_gated.weights.resolve import ResolvedWeights


def spy(monkeypatch, module, name: str) -> list:
    """Count the calls of ``module.name``, wherever a keras_gated module imported it."""
    original = getattr(module, name)
    calls: list = []

    @functools.wraps(original)
    def counting(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    for loaded in list(sys.modules.values()):
        if (getattr(loaded, "__name__", "").startswith("keras_gated")
                and getattr(loaded, name, None) is original):
            monkeypatch.setattr(loaded, name, counting)
    return calls


@pytest.fixture
def counts(monkeypatch):
    """The look-ups of one load: registry reads, resolutions, file resolutions."""
    return {
        "registry_reads": spy(monkeypatch, weights_registry, "_registry"),
        "resolutions": spy(monkeypatch, sources, "identify_weights"),
        "file_resolutions": spy(monkeypatch, sources, "resolve_pretrained_file"),
        "config_files": spy(monkeypatch, sources, "companion_file"),
        "released_cfg": spy(monkeypatch, sources, "released_cfg"),
    }


LOADS = {
    "GResNet20(weights='cifar10')": lambda: kg.GResNet20(weights="cifar10"),
    "GResNet(20, weights='cifar10')": lambda: kg.GResNet(20, weights="cifar10"),
    "GResNet20(weights='cifar10', classes=5)": lambda: kg.GResNet20(weights="cifar10", classes=5),
    "create_model('gresnet20.cifar10')": lambda: kg.create_model("gresnet20.cifar10"),
}


@pytest.mark.parametrize("call", list(LOADS))
def test_one_load_reads_the_released_config_once(call, counts):
    model = LOADS[call]()
    assert counts["registry_reads"] == [()], "the weights registry is read once"
    assert len(counts["resolutions"]) == 1
    assert [args[0].weight_id for args in counts["file_resolutions"]] == ["gresnet20.cifar10"]
    assert len(counts["config_files"]) == 1  # config.json; the class names are the config's
    assert counts["released_cfg"] == []
    assert model.pretrained_cfg["weight_id"] == "gresnet20.cifar10"
    expected_classes = 5 if "classes=5" in call else 10
    assert model.num_classes == expected_classes
    if expected_classes == 10:
        assert model.class_names[:2] == ("airplane", "automobile")


def test_the_record_holds_what_building_and_loading_need():
    record = resolve.resolve_weights("gresnet20", "cifar10")
    assert isinstance(record, ResolvedWeights)
    assert record.arch == "gresnet20" and record.cfg.weight_id == "gresnet20.cifar10"
    assert record.path.is_file() and record.path.name == "model.weights.h5"
    assert sources.sha256_of(record.path) == record.cfg.sha256
    assert record.saved_config is not None and record.saved_config["layers"]
    assert record.class_names[0] == "airplane" and len(record.class_names) == 10
    assert record.pretrained_cfg["weight_id"] == "gresnet20.cifar10"
    assert record.origin == "weights gresnet20.cifar10" and str(record) == "cifar10"
    assert record.model_kwargs == dict(record.cfg.model_kwargs)


def test_a_resolved_record_is_built_from_without_a_second_look_up(counts):
    record = resolve.resolve_weights("gresnet20", "cifar10")
    counts["registry_reads"].clear()
    counts["file_resolutions"].clear()
    model = kg.GResNet20(weights=record)
    assert counts["registry_reads"] == [] and counts["file_resolutions"] == []
    reference = kg.GResNet20(weights="cifar10")
    x = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype("float32")
    np.testing.assert_allclose(np.asarray(model.predict(x, verbose=0)),
                               np.asarray(reference.predict(x, verbose=0)), rtol=1e-5, atol=1e-6)


def test_a_saved_folder_is_resolved_once_with_its_training_arguments(tmp_path, counts):
    import json

    model = kg.GResNet20()
    folder = tmp_path / "saved"
    folder.mkdir()
    model.save_weights(folder / "model.weights.h5")
    (folder / "metrics.json").write_text(json.dumps({"model_args": {"k_init": 1.0}}))
    counts["registry_reads"].clear()
    loaded = kg.GResNet20(weights=str(folder))
    assert len(counts["resolutions"]) == 1 and counts["file_resolutions"] == []
    assert len(counts["registry_reads"]) <= 1
    assert loaded.pretrained_cfg == {"file": str(folder)}
    record = resolve.resolve_weights(None, str(folder))
    assert record.model_kwargs == {"k_init": 1.0} and record.arch is None
    assert record.path == folder / "model.weights.h5" and record.saved_config is None
