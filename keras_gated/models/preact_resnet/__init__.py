"""Pre-activation ResNets (He et al. 2016) and gated ResNets (Savarese & Figueiredo 2017), CIFAR.

The family's folder:

* ``preact_resnet.py``: the constructors;
* ``preact_resnet.json``: the configs of its released (and planned) weights;
* ``convert.py``: the ``fbresnet`` layout of its reference implementation;
* this file: its declaration (``keras_gated.registry.families.Family``).
"""

import functools
from pathlib import Path

from keras_gated.registry.families import Family, Models, declare
from keras_gated.models.preact_resnet.convert import FBRESNET
from keras_gated.models.preact_resnet.preact_resnet import *  # noqa: F403  (the module's public names)
from keras_gated.models.preact_resnet.preact_resnet import (
    NAMED_DEPTHS,
    GResNet,
    GResNet20,
    GResNet32,
    GResNet44,
    GResNet56,
    GResNet110,
    GResNet164,
    GResNet1001,
    PreActResNet,
    PreActResNet20,
    PreActResNet32,
    PreActResNet44,
    PreActResNet56,
    PreActResNet110,
    PreActResNet164,
    PreActResNet1001,
    preact_resnet_name,
)


def _too_deep_for_quick_tests(depth: int) -> bool:
    return depth >= 110


FAMILY = declare(Family(
    name="preact_resnet",
    constructors=(
        PreActResNet, PreActResNet20, PreActResNet32, PreActResNet44, PreActResNet56,
        PreActResNet110, PreActResNet164, PreActResNet1001,
        GResNet, GResNet20, GResNet32, GResNet44, GResNet56, GResNet110, GResNet164,
        GResNet1001,
    ),
    models=(
        Models(
            "preact_resnet", PreActResNet,
            arch_name=functools.partial(preact_resnet_name, "preactresnet"),
            configs=[{"depth": depth} for depth in NAMED_DEPTHS],
            description="Pre-activation ResNet-{depth} (He et al. 2016), CIFAR",
            slow=_too_deep_for_quick_tests,
        ),
        Models(
            "gresnet", GResNet,
            arch_name=functools.partial(preact_resnet_name, "gresnet"),
            configs=[{"depth": depth} for depth in NAMED_DEPTHS],
            description="Gated pre-activation ResNet-{depth} (Savarese & Figueiredo 2017), CIFAR",
            slow=_too_deep_for_quick_tests,
        ),
    ),
    default_recipe="preact_cifar",
    released=Path(__file__).with_name("preact_resnet.json"),
    twins=(("preactresnet", "gresnet"),),
    citations=(
        ("gresnet*", ("savarese2017residual", "he2016identity")),
        ("preactresnet*", ("he2016identity",)),
    ),
    final_feature="final_relu",  # the only normalised output of a pre-activation net
    converters=(FBRESNET,),
))
