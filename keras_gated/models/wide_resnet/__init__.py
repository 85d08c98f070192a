"""Wide ResNets (Zagoruyko & Komodakis 2016) and gated Wide ResNets, CIFAR.

The family's folder:

* ``wide_resnet.py``: the constructors;
* ``wide_resnet.json``: the configs of its released (and planned) weights;
* ``convert.py``: the ``wrn`` layout of its reference implementation;
* this file: its declaration (``keras_gated.registry.families.Family``).
"""

import functools
from pathlib import Path

from keras_gated.registry.families import Family, Models, declare
from keras_gated.models.wide_resnet.convert import WRN
from keras_gated.models.wide_resnet.wide_resnet import *  # noqa: F403  (the module's public names)
from keras_gated.models.wide_resnet.wide_resnet import (
    REGISTERED_SIZES,
    GWideResNet,
    WideResNet,
    wrn_depth,
    wrn_name,
)

SIZES = [{"n": (depth - 4) // 6, "widen_factor": widen} for depth, widen in REGISTERED_SIZES]


def _too_wide_for_quick_tests(n: int, widen_factor: int) -> bool:
    return widen_factor >= 8  # WRN-16-8 and wider: 11 M parameters and more


FAMILY = declare(Family(
    name="wide_resnet",
    constructors=(WideResNet, GWideResNet),
    models=(
        Models(
            "wide_resnet", WideResNet, arch_name=functools.partial(wrn_name, "wrn"),
            configs=SIZES,
            description=lambda n, widen_factor: (
                f"WRN-{wrn_depth(n)}-{widen_factor} (Zagoruyko & Komodakis 2016), CIFAR"
            ),
            slow=_too_wide_for_quick_tests,
        ),
        Models(
            "gwide_resnet", GWideResNet, arch_name=functools.partial(wrn_name, "gwrn"),
            configs=SIZES,
            description=lambda n, widen_factor: (
                f"Gated WRN-{wrn_depth(n)}-{widen_factor} (Savarese & Figueiredo 2017), CIFAR"
            ),
            slow=_too_wide_for_quick_tests,
        ),
    ),
    default_recipe="wrn_cifar",
    released=Path(__file__).with_name("wide_resnet.json"),
    twins=(("wrn_", "gwrn_"),),
    citations=(
        ("gwrn_*", ("savarese2017residual", "zagoruyko2016wide")),
        ("wrn_*", ("zagoruyko2016wide",)),
    ),
    final_feature="final_relu",  # the only normalised output of a pre-activation net
    converters=(WRN,),
))
