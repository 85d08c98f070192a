"""Every public constructor shows its real signature and documents its arguments."""

from __future__ import annotations

import inspect

import pytest

import keras_gated as kg

CONSTRUCTORS = [
    getattr(kg, name) for name in kg.__all__ if hasattr(getattr(kg, name), "valid_arguments")
]
SHOWN = ("include_top", "weights", "input_tensor", "input_shape", "pooling", "classes",
         "classifier_activation", "include_preprocessing", "name")


def test_every_model_constructor_is_checked():
    assert {c.__name__ for c in CONSTRUCTORS} == set(kg.models.__all__)


@pytest.mark.parametrize("constructor", CONSTRUCTORS, ids=lambda c: c.__name__)
def test_signature_names_the_application_arguments(constructor):
    params = inspect.signature(constructor).parameters
    assert all(arg in params for arg in SHOWN), constructor.__name__
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    assert set(params) == set(constructor.valid_arguments)
    assert params["include_top"].default is True and params["weights"].default is None
    assert "include_top" in inspect.getdoc(constructor)


def test_family_arguments_and_defaults_are_shown():
    params = inspect.signature(kg.GResNet20).parameters
    assert params["gate"].default == "relu" and params["k_init"].default == 1.0
    assert params["shortcut"].default == "projection" and params["classes"].default == 10
    assert inspect.signature(kg.ResNet50).parameters["classes"].default == 1000
    assert "k_init" not in inspect.signature(kg.PreActResNet20).parameters


@pytest.mark.parametrize("constructor", [kg.ResNet50, kg.GResNet50, kg.HighwayNet50],
                         ids=lambda c: c.__name__)
def test_imagenet_constructors_warn_about_random_weights_first(constructor):
    doc = inspect.getdoc(constructor)
    opening = doc.split("Args:")[0]
    assert "weights=None by default" in opening and "RANDOMLY" in opening
    assert 'convert("resnet50", path, "torchvision")' in opening
