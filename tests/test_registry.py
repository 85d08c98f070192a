"""The timm-style registry: names, listing, creation, errors."""

import pytest

import keras_gated as kg
from tests.helpers import trainable_count

EXPECTED_NAMES = [
    "gresnet20", "gresnet110", "gresnet1001", "preactresnet164", "gwrn_28_10", "wrn_28_10",
    "gwrn_16_2", "gresnetfc10", "gresnetfc50", "plainnet50", "gplainnet10", "resnetfc100",
    "highwayfc100", "highwaynet", "highwaynet50", "highwaynet50_full", "resnet50",
]


def test_every_documented_name_is_registered():
    names = kg.list_models()
    missing = [n for n in EXPECTED_NAMES if n not in names]
    assert not missing


def test_pattern_filter_and_natural_order():
    assert kg.list_models("gresnet[0-9]*") == [
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


def test_registered_entry_knows_its_family():
    entry = kg.get_model_entry("gplainnet50")
    assert entry.family == "fc" and entry.kwargs == {"depth": 50}
