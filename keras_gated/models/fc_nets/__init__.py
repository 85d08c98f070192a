"""Fully-connected plain, residual, gated and Highway nets (MNIST).

The family's folder:

* ``fc_nets.py``: the constructors;
* ``fc_nets.json``: the configs of its released (and planned) weights;
* this file: its declaration (``keras_gated.registry.families.Family``).
"""

import functools
from pathlib import Path

from keras_gated.registry.families import Family, Models, declare
from keras_gated.models.fc_nets.fc_nets import *  # noqa: F403  (the module's public names)
from keras_gated.models.fc_nets.fc_nets import (
    DEFAULT_UNITS,
    REGISTERED_DEPTHS,
    VARIANT_SUFFIX,
    GPlainNet,
    GResNetFC,
    HighwayFC,
    PlainNet,
    ResNetFC,
    fc_net_name,
    is_residual_merge,
)

# Registry name prefix -> its constructor and the first words of its description.
CONSTRUCTORS = {
    "plainnet": (PlainNet, "Plain FC net"),
    "gplainnet": (GPlainNet, "Gated plain FC net"),
    "resnetfc": (ResNetFC, "Residual FC net"),
    "gresnetfc": (GResNetFC, "Gated residual FC net"),
    "highwayfc": (HighwayFC, "Highway FC net"),
}


def _too_deep_for_quick_tests(depth: int) -> bool:
    return depth >= 50  # the 2- to 20-layer nets are the quick ones


FAMILY = declare(Family(
    name="fc_nets",
    constructors=(GPlainNet, GResNetFC, HighwayFC, PlainNet, ResNetFC),
    models=tuple(
        Models(
            "fc", constructor, arch_name=functools.partial(fc_net_name, prefix),
            configs=[{"depth": depth} for depth in REGISTERED_DEPTHS],
            description=f"{title}, {{depth}} middle layers of {DEFAULT_UNITS} units, 28x28x1 input",
            slow=_too_deep_for_quick_tests, variant_suffix=VARIANT_SUFFIX,
        )
        for prefix, (constructor, title) in CONSTRUCTORS.items()
    ),
    default_recipe="rg_mnist_fc",
    released=Path(__file__).with_name("fc_nets.json"),
    twins=(("resnetfc", "gresnetfc"),),
    citations=(
        ("gresnetfc*", ("savarese2017residual",)),
        ("resnetfc*", ("savarese2017residual",)),
        ("*plainnet*", ("savarese2017residual",)),
        ("highwayfc*", ("srivastava2015highway",)),
    ),
    residual_merge=is_residual_merge,
))
