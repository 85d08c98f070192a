"""The fully-connected nets' declaration (``keras_gated.models.family_spec``)."""

import re

import keras

from keras_gated.models.family_spec import FamilySpec, register_spec

# A residual FC net's block ends in Add([branch, input]) named block<i>: the residual
# form of a Residual Gate with g(k) = 1, which gate() puts in its place.
_MERGE_NAME = re.compile(r"^block\d+$")


def is_residual_merge(layer: keras.layers.Layer) -> bool:
    """Whether ``layer`` is the Add that ends a residual FC block."""
    return isinstance(layer, keras.layers.Add) and bool(_MERGE_NAME.match(layer.name))


SPEC = register_spec(FamilySpec(
    name="fc_nets",
    registry_families=("fc",),
    twins=(("resnetfc", "gresnetfc"),),
    citations=(
        ("gresnetfc*", ("savarese2017residual",)),
        ("resnetfc*", ("savarese2017residual",)),
        ("*plainnet*", ("savarese2017residual",)),
        ("highwayfc*", ("srivastava2015highway",)),
    ),
    residual_merge=is_residual_merge,
))
