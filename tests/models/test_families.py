"""Every registered model builds and runs a forward pass; one model of every registered
constructor saves and loads back identically (.keras, safe_mode=True). The models are those of
``keras_gated.list_models()``: a new family is tested as soon as it registers. Entries
marked ``slow`` in the registry (ImageNet size, 110+ layers, WRN-16-8 and wider, the
50- and 100-layer FC nets) run with ``-m slow``. Sizes are covered by
test_parameter_counts.py; constructor options by ``OPTIONS`` below."""

import sys

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.registry import families
from keras_gated.training.recipes import RECIPES
from keras_gated.release.citations import bibtex, citation_keys
from keras_gated.registry import get_model_entry
from tests.support.backend_split import ONCE_BACKEND
from tests.support.helpers import assert_round_trip, images, to_numpy
from tests.support.models import one_per_constructor


def registered_models() -> list:
    """Every registered name, slow entries marked slow, in the TensorFlow pass; one per
    constructor in the other backends' passes (every size of a constructor runs the same
    layers, so a backend is covered by one of them; sizes are checked once)."""
    if keras.backend.backend() != ONCE_BACKEND:
        return one_per_constructor()
    return [
        pytest.param(name, marks=pytest.mark.slow) if get_model_entry(name).slow else name
        for name in kg.list_models()
    ]


def check_forward(model) -> np.ndarray:
    """A forward pass on raw pixels of the model's input shape: finite probabilities, one
    per class, summing to 1.

    training=True: batch norm uses the batch's statistics. In inference mode an untrained
    net uses the initial moving statistics (mean 0, variance 1), and in the 1001-layer nets
    the residual stream then grows until the logits overflow.
    """
    x = images(4, model.input_shape[1:])
    probs = to_numpy(model(x, training=True))
    assert probs.shape == (4, model.get_layer("predictions").units)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-4)
    assert np.all(np.isfinite(probs))
    return probs


def check_registered_model(name: str) -> None:
    """``create_model(name)`` builds the entry's model, named as registered (the builder
    and the registry name models with the same function), and runs."""
    model = kg.create_model(name)
    assert model.name == name
    assert model.num_classes == model.get_layer("predictions").units
    check_forward(model)


def check_round_trip(name: str, tmp_path) -> None:
    model = kg.create_model(name)
    assert_round_trip(model, images(2, model.input_shape[1:]), tmp_path)


@pytest.mark.parametrize("name", registered_models())
def test_registered_model_builds_and_runs(name):
    check_registered_model(name)


@pytest.mark.parametrize("name", one_per_constructor())
def test_round_trip(name, tmp_path):
    check_round_trip(name, tmp_path)


@pytest.mark.parametrize("name", kg.list_models())
def test_every_registered_model_is_cited(name):
    """Its family declares the papers behind it, and their BibTeX entries exist."""
    keys = citation_keys(name)
    assert keys, f"{name}: declare its papers in its family's declaration (Family.citations)"
    entries = bibtex(name)
    assert all(entries.count(f"{{{key},") == 1 for key in keys)



@pytest.mark.parametrize("family", [f.name for f in families.specs()])
def test_every_declaration_is_complete(family):
    """A family's one declaration: its constructors are public, every name it registers
    is built by one of them (or by its own ``register``), its recipes exist, its released
    configs are a data file in its folder, and what it counts or converts is registered."""
    declared = families.get_spec(family)
    entries = [get_model_entry(n) for n in kg.list_models()
               if get_model_entry(n).family in declared.registry_families]
    assert entries, f"{family} registers no model"
    for name, constructor in zip(declared.public_names, declared.constructors):
        assert getattr(kg, name) is constructor and name in kg.models.__all__
    if declared.register is None:
        assert {e.constructor for e in entries} <= set(declared.constructors)
    assert all(e.default_recipe in RECIPES for e in entries)
    if declared.released is not None:
        assert declared.released.is_file() and declared.released.suffix == ".json"
    assert set(declared.parameter_counts) <= set(kg.list_models())


CIFAR = (32, 32, 3)
# Constructor options that no registered name uses.
OPTIONS = [
    ("preactresnet_zeropad", lambda: kg.PreActResNet(14, shortcut="zeropad")),
    ("gresnet_bottleneck", lambda: kg.GResNet(11, block="bottleneck")),
    ("wrn_dropout", lambda: kg.WideResNet(1, 2, dropout=0.3)),
    ("gwrn_dropout", lambda: kg.GWideResNet(1, 2, dropout=0.3)),
    ("gwrn_nobn", lambda: kg.GWideResNet(1, 1, batch_norm=False)),
    ("highwaynet_full_variant", lambda: kg.HighwayNet(variant="full")),
    ("resnet50_small_input", lambda: kg.ResNet50(input_shape=(64, 64, 3))),
    ("highwaynet50_final_relu", lambda: kg.HighwayNet50(variant="final_relu", input_shape=(64, 64, 3))),
]
# The 50-layer ImageNet nets' save/load round trips take 15-30 s per backend: `-m slow`
# (their parameter counts are still checked in the default run,
# tests/models/test_parameter_counts.py, and a small input's forward pass by
# tests/test_features.py).
SLOW_OPTIONS = ("highwaynet50_final_relu", "resnet50_small_input")


@pytest.mark.parametrize("build", [
    pytest.param(build, marks=pytest.mark.slow) if name in SLOW_OPTIONS else build
    for name, build in OPTIONS
], ids=[name for name, _ in OPTIONS])
def test_constructor_options_forward_and_round_trip(build, tmp_path):
    model = build()
    check_forward(model)
    assert_round_trip(model, images(2, model.input_shape[1:]), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("constructor", [kg.PreActResNet1001, kg.GResNet1001])
def test_1000_layer_round_trip(constructor, tmp_path):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        model = constructor(input_shape=(8, 8, 3))
        assert_round_trip(model, images(1, (8, 8, 3)), tmp_path)
    finally:
        sys.setrecursionlimit(limit)
