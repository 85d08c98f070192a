"""CONTRIBUTING.md's "add a family" steps, followed for a throw-away family: a tiny gated
FC net in a temporary package (its block in ``layers/``, its module in ``models/``
registering itself, one import line in ``models/__init__.py``). The family is then found
by ``list_models``, ``create_model`` and the checks the parametrized tests run on every
registered name; the registry is cleaned afterwards."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import keras
import pytest

import keras_gated as kg
import keras_gated.pretrained
from keras_gated.registry import get_model_entry, unregister_family
from tests import test_registry, test_timm_api
from tests.conftest import ONCE_BACKEND
from tests.helpers import trainable_count
from tests.models import test_application_api, test_families, test_parameter_counts

PACKAGE = "tinyzoo_for_tests"

BLOCK = '''
"""u = g(k)·ReLU(W x + b) + x: a one-layer residual block with a Residual Gate."""

import keras

from keras_gated.layers.residual_gate import ResidualGate


@keras.saving.register_keras_serializable(package="{package}")
class TinyGatedBlock(keras.layers.Layer):
    def __init__(self, gate="relu", **kwargs):
        super().__init__(**kwargs)
        self.gate = gate
        self.dense = None
        self.residual_gate = None

    def build(self, input_shape):
        units = input_shape[-1]
        self.dense = keras.layers.Dense(units, activation="relu", name="dense")
        self.dense.build(input_shape)
        self.residual_gate = ResidualGate(self.gate, form="residual", name="gate")
        self.residual_gate.build([input_shape, input_shape])

    def call(self, x):
        return self.residual_gate([self.dense(x), x])

    def get_config(self):
        return {{**super().get_config(), "gate": self.gate}}
'''

MODULE = '''
"""Tiny gated FC nets: flatten -> Dense(width) -> depth TinyGatedBlocks -> head."""

import keras

from keras_gated.models.application import (
    APPLICATION_ARGUMENTS, MNIST_FC_INPUT, build_application, public_constructor,
)
from keras_gated.registry import register_family
from {package}.layers.tiny_block import TinyGatedBlock

WIDTH = 8


def tiny_name(depth):
    return f"tinygated{{depth}}"


@public_constructor(*APPLICATION_ARGUMENTS, defaults={{"classes": 10}})
def TinyGatedNet(depth=2, **kwargs):
    """A tiny gated FC net of ``depth`` blocks."""
    def features(x):
        x = keras.layers.Flatten(name="flatten")(x)
        x = keras.layers.Dense(WIDTH, name="stem")(x)
        for i in range(1, depth + 1):
            x = TinyGatedBlock(name=f"block{{i}}")(x)
        return x

    arguments = dict(include_top=True, weights=None, input_tensor=None, input_shape=None,
                     pooling=None, classes=10, classifier_activation="softmax",
                     include_preprocessing=True, name=None)
    arguments.update(kwargs)
    return build_application(features, arch=tiny_name(depth), spec=MNIST_FC_INPUT,
                             **arguments)


register_family(
    "tinygated",
    TinyGatedNet,
    arch_name=tiny_name,
    configs=[{{"depth": 2}}, {{"depth": 3}}],
    description="Tiny gated FC net, {{depth}} blocks",
    default_recipe="rg_mnist_fc",
)
'''


def tiny_count(depth: int) -> int:
    """Closed form: stem 784·8 + 8, per block 8·8 + 8 + one k, head 8·10 + 10."""
    return 784 * 8 + 8 + depth * (8 * 8 + 8 + 1) + 8 * 10 + 10


def write_family(root: Path) -> Path:
    """The package as CONTRIBUTING.md's steps make it; returns the module's data file."""
    package = root / PACKAGE
    (package / "layers").mkdir(parents=True)
    (package / "models").mkdir()
    (package / "__init__.py").write_text("")
    # Step 1: the block in layers/, exported by layers/__init__.py.
    (package / "layers" / "tiny_block.py").write_text(textwrap.dedent(BLOCK.format(package=PACKAGE)))
    (package / "layers" / "__init__.py").write_text(
        f"from {PACKAGE}.layers.tiny_block import TinyGatedBlock\n")
    # Step 2: the module in models/, registering itself; released weights would be its
    # data file beside it.
    (package / "models" / "tiny_net.py").write_text(textwrap.dedent(MODULE.format(package=PACKAGE)))
    data_file = package / "models" / "tiny_net.json"
    data_file.write_text("{}\n")
    # Step 3: one import line.
    (package / "models" / "__init__.py").write_text(
        f"from {PACKAGE}.models.tiny_net import TinyGatedNet\n")
    return data_file


@pytest.fixture
def tiny_family(tmp_path, monkeypatch):
    data_file = write_family(tmp_path / "src")
    registered_files = []
    monkeypatch.setattr(keras_gated.pretrained, "register_cfg_file", registered_files.append)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    try:
        importlib.import_module(f"{PACKAGE}.models")
        yield data_file, registered_files
    finally:
        unregister_family("tinygated")
        for module in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[module]


def _names(params) -> list[str]:
    return [p if isinstance(p, str) else p.values[0] for p in params]


def test_a_new_family_is_found_by_the_registry_and_the_family_tests(tiny_family, tmp_path,
                                                                     monkeypatch):
    data_file, registered_files = tiny_family
    names = ["tinygated2", "tinygated3"]

    # The registry: listed, created under its name, and its data file registered.
    assert kg.list_models("tinygated*") == names
    assert [Path(p) for p in registered_files] == [data_file]
    model = kg.create_model("tinygated2", classes=5)
    assert model.name == "tinygated2" and model.num_classes == 5
    assert list(kg.gate_values(model)) == ["block1", "block2"]
    entry = get_model_entry("tinygated3")
    assert (entry.family, entry.kwargs, entry.default_recipe) == ("tinygated", {"depth": 3},
                                                                  "rg_mnist_fc")
    assert not entry.supports_dropout and not entry.slow

    # The parametrized tests include it, and their checks pass on it.
    # Every size in the backend that checks sizes, one per constructor in the others.
    expected = set(names) if keras.backend.backend() == ONCE_BACKEND else {"tinygated2"}
    assert expected <= set(_names(test_families.registered_models()))
    assert "tinygated2" in _names(test_families.one_per_constructor())
    for name in names:
        test_families.check_registered_model(name)
        test_registry.test_entry_holds_what_training_and_listing_need(name)
        test_timm_api.test_timm_model_api(name)
    test_families.check_round_trip("tinygated2", tmp_path)
    test_application_api.test_signature_defaults_are_what_the_model_gets("tinygated2")

    # Its parameter counts: missing from EXPECTED fails the completeness test; given
    # (by closed form), the count test passes.
    with pytest.raises(AssertionError, match="tinygated2"):
        test_parameter_counts.test_every_registered_model_has_a_count()
    expected = {**test_parameter_counts.EXPECTED, **{n: tiny_count(int(n[-1])) for n in names}}
    monkeypatch.setattr(test_parameter_counts, "EXPECTED", expected)
    test_parameter_counts.test_every_registered_model_has_a_count()
    for name in names:
        test_parameter_counts.test_registered_parameter_count(name)
        assert trainable_count(kg.create_model(name)) == tiny_count(int(name[-1]))

    # Training's defaults come from the entry.
    from training.train import _model_kwargs, default_recipe_name

    assert default_recipe_name(entry) == "rg_mnist_fc"
    info = type("Info", (), {"num_classes": 10, "image_shape": (28, 28, 1)})()
    recipe = type("Recipe", (), {"dropout": 0.3})()
    assert "dropout" not in _model_kwargs(entry, recipe, info)


def test_the_registry_is_clean_afterwards():
    assert kg.list_models("tinygated*") == []
    assert PACKAGE not in sys.modules
