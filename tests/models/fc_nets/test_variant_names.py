"""The FC nets' variant names: what the constructor calls a model built with another width
or pre-activation blocks is what the registry entry recognises as its variant."""

import itertools

import pytest

from keras_gated.models.fc_nets import CONSTRUCTORS, REGISTERED_DEPTHS, fc_net_name
from keras_gated.registry.models import get_model_entry


@pytest.mark.parametrize("prefix", sorted(CONSTRUCTORS))
def test_every_name_fc_net_name_writes_is_a_variant_of_its_entry(prefix):
    for depth, units, preactivation in itertools.product(REGISTERED_DEPTHS, (7, 50, 100),
                                                          (False, True)):
        entry = get_model_entry(fc_net_name(prefix, depth))
        assert entry.names_a_variant(fc_net_name(prefix, depth, units, preactivation))


def test_a_built_variant_keeps_a_name_its_entry_recognises():
    from keras_gated import ResNetFC

    model = ResNetFC(2, units=20, preactivation=True)
    assert model.name == "resnetfc2_w20_preact"
    assert get_model_entry("resnetfc2").names_a_variant(model.name)


@pytest.mark.parametrize("registered, other", [
    ("resnetfc10", "resnetfc100"),           # another depth is another model
    ("resnetfc10", "gresnetfc10"),
    ("resnetfc10", "resnetfc10_preact_w20"),  # not a name the constructor writes
    ("resnetfc10", "resnetfc10_wide"),
    ("gresnet20", "gresnet20_w100"),          # a family without variant names
])
def test_other_names_are_not_variants(registered, other):
    assert not get_model_entry(registered).names_a_variant(other)
