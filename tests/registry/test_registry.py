"""The timm-style registry: names, listing, creation, errors, and what every entry holds."""

import inspect
import re
from pathlib import Path

import pytest

import keras_gated as kg
from keras_gated.training.recipes import RECIPES
from keras_gated.registry.families import Family, Models, declare, declared, undeclare
from keras_gated.registry import get_model_entry, register_model, unregister_model
from tests.support.helpers import trainable_count

README = Path(__file__).resolve().parents[2] / "README.md"
DOCS = sorted((README.parent / "docs").glob("*.md"))


def documented_names() -> set[str]:
    """The model names the README and the docs/ pages use: ``create_model("...")``,
    ``--model ...`` and the architecture of every weight id in backticks."""
    text = "\n".join(page.read_text() for page in [README, *DOCS])
    names = set(re.findall(r'create_model\("([a-z0-9_]+)', text))
    names |= set(re.findall(r"--model ([a-z0-9_]+)", text))
    names |= set(re.findall(r"`([a-z0-9_]+)\.(?:cifar10|cifar100|fashion_mnist|mnist)`", text))
    return names


def test_every_name_the_readme_uses_is_registered():
    names = documented_names()
    assert len(names) >= 5  # the README's commands and zoo tables
    assert not sorted(names - set(kg.list_models()))


@pytest.mark.parametrize("name", kg.list_models())
def test_entry_holds_what_training_and_listing_need(name):
    entry = get_model_entry(name)
    assert entry.name == name and entry.family and entry.description
    assert entry.default_recipe in RECIPES
    signature = inspect.signature(entry.constructor)
    signature.bind(**entry.kwargs)  # the registered arguments are the constructor's
    assert entry.supports_dropout == ("dropout" in signature.parameters)


def test_pattern_filter_and_natural_order():
    # Compressed nets (gresnet20_c50) are their own family: left out by their family name.
    compressed = [n for n in kg.list_models() if get_model_entry(n).family == "compressed"]
    assert kg.list_models("gresnet[0-9]*", exclude_filters=compressed) == [
        "gresnet20", "gresnet32", "gresnet44", "gresnet50", "gresnet56", "gresnet110",
        "gresnet164", "gresnet1001",
    ]
    assert kg.list_models("gresnetfc*") == [f"gresnetfc{d}" for d in (2, 10, 20, 50, 100)]
    assert kg.list_models("nothing*") == []


def test_create_model_matches_the_constructor():
    model = kg.create_model("gwrn_16_2", classes=100)
    assert model.name == "gwrn_16_2"
    assert trainable_count(model) == trainable_count(kg.GWideResNet(2, 2, classes=100))
    assert kg.create_model("gresnetfc10").name == "gresnetfc10"


def test_unknown_name_suggests_close_matches():
    with pytest.raises(ValueError, match="Unknown model name 'gresnet21'.*gresnet20"):
        kg.create_model("gresnet21")


def test_weight_id_with_no_released_weights():
    with pytest.raises(ValueError, match="No weights are released for 'gwrn_40_4'"):
        kg.create_model("gwrn_40_4.cifar10")


def test_registered_entry_knows_its_family_and_training_defaults():
    entry = get_model_entry("gplainnet50")
    assert entry.family == "fc" and entry.kwargs == {"depth": 50}
    assert entry.default_recipe == "rg_mnist_fc" and not entry.supports_dropout
    wrn = get_model_entry("gwrn_28_10")
    assert wrn.kwargs == {"n": 4, "widen_factor": 10} and wrn.supports_dropout and wrn.slow
    assert not get_model_entry("gresnet20").slow and get_model_entry("resnet50").slow


def _tiny(depth: int = 1, width: int = 4, classes: int = 10, name: str | None = None):
    """A stand-in constructor: registration never builds a model."""
    raise AssertionError("not built in these tests")


def test_a_declaration_names_every_config_with_one_function():
    calls = []

    def arch_name(depth, width=4):
        calls.append((depth, width))
        return f"tinyreg{depth}" + ("" if width == 4 else f"_w{width}")

    family = Family(
        name="tinyreg",
        constructors=(_tiny,),
        models=(Models("tinyreg", _tiny, arch_name=arch_name,
                       configs=[{"depth": 1}, {"depth": 2, "width": 8}],
                       description="Tiny net, {depth} layers",
                       slow=lambda depth, width=4: width > 4),),
        default_recipe="rg_mnist_fc",
        citations=(("tinyreg*", ("tiny2026",)),),
    )
    try:
        assert declare(family) is family and declare(family) is family  # once, idempotent
        assert kg.list_models("tinyreg*") == ["tinyreg1", "tinyreg2_w8"]
        assert calls == [(1, 4), (2, 8)]
        entries = [get_model_entry(n) for n in ("tinyreg1", "tinyreg2_w8")]
        assert entries[1].kwargs == {"depth": 2, "width": 8}
        assert entries[0].description == "Tiny net, 1 layers"
        assert [e.slow for e in entries] == [False, True]
        assert {e.default_recipe for e in entries} == {"rg_mnist_fc"}
        assert not entries[0].supports_dropout
        assert family in declared() and family.registry_families == ("tinyreg",)
        assert family.public_names == ["_tiny"]
        with pytest.raises(ValueError, match="already registered"):
            register_model("tinyreg1", _tiny)
        with pytest.raises(ValueError, match="already declared"):
            declare(Family(name="tinyreg"))
    finally:
        undeclare("tinyreg")
    assert kg.list_models("tinyreg*") == [] and family not in declared()


def test_unregister_model_and_name_rules():
    with pytest.raises(ValueError, match="lower case without dots"):
        register_model("Tiny", _tiny)
    with pytest.raises(ValueError, match="lower case without dots"):
        register_model("tiny.v1", _tiny)
    register_model("tinyone", _tiny, family="tinyone")
    assert kg.is_model("tinyone")
    unregister_model("tinyone")
    assert not kg.is_model("tinyone")


def test_one_registry_package():
    import importlib

    import keras_gated as kg
    from keras_gated import registry
    from keras_gated.models import factory
    from keras_gated.registry import models
    from keras_gated.weights import registered

    assert kg.create_model is factory.create_model  # built above the families; listed below
    assert "create_model" not in registry.__all__ and kg.list_models is registry.list_models
    assert registry.get_model_entry is models.get_model_entry
    assert registry.get_pretrained_cfg is registered.get_pretrained_cfg
    import keras_gated.weights as weights

    assert weights.get_pretrained_cfg is registered.get_pretrained_cfg  # loaded lazily
    assert weights.sources.__name__ == "keras_gated.weights.sources"
    with pytest.raises(AttributeError, match="no attribute 'unknown_name'"):
        weights.unknown_name  # noqa: B018
    assert importlib.import_module("keras_gated.registry") is registry


def test_a_weights_value_is_resolved_once(monkeypatch):
    """``create_model`` and the public constructors resolve ``weights=`` in one place
    (``keras_gated.weights.resolve``), once per call: the constructor and the builder take
    the resolved record as it is."""
    from keras_gated.weights import resolve

    calls = []
    real = resolve._resolve

    def counted(*args, **kwargs):
        calls.append(args[:2])
        return real(*args, **kwargs)

    monkeypatch.setattr(resolve, "_resolve", counted)
    kg.create_model("gresnet20.cifar10")
    assert len(calls) == 1
    kg.GResNet20(weights="cifar10")
    assert len(calls) == 2
