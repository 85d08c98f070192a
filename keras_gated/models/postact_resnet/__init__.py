"""The original (post-activation) CIFAR ResNets (He et al. 2015) with the shortcut
variants of He et al. 2016, *Identity Mappings in Deep Residual Networks*, Table 1.

The family's folder:

* ``postact_unit.py``: its block, ``PostActUnit`` (the original unit and Table 1's
  shortcuts);
* ``postact_resnet.py``: the constructors and the closed-form parameter counts;
* ``postact_resnet.json``: the configs of its released weights (none yet);
* this file: its declaration (``keras_gated.registry.families.Family``).
"""

from pathlib import Path

from keras_gated.registry.families import Family, Models, declare
from keras_gated.models.postact_resnet.postact_resnet import *  # noqa: F403  (the module's public names)
from keras_gated.models.postact_resnet.postact_resnet import (
    NAMED_DEPTHS,
    SHORTCUT_VARIANTS,
    TABLE1_DEPTH,
    PostActResNet,
    PostActResNet110,
    parameter_count,
    postact_resnet_name,
)


def describe(depth: int, shortcut: str = "original") -> str:
    """The registry description of ``PostActResNet(depth, shortcut)``."""
    if shortcut == "original":
        return f"Original (post-activation) ResNet-{depth} (He et al. 2015), CIFAR"
    return (f"ResNet-{depth}, {shortcut.replace('_', ' ')} shortcuts (He et al. 2016, "
            "Table 1), CIFAR")


def _too_deep_for_quick_tests(depth: int, shortcut: str = "original") -> bool:
    return depth >= 110


FAMILY = declare(Family(
    name="postact_resnet",
    constructors=(PostActResNet, PostActResNet110),
    models=(
        Models(
            "postact_resnet", PostActResNet, arch_name=postact_resnet_name,
            configs=[{"depth": depth} for depth in NAMED_DEPTHS]
            + [{"depth": TABLE1_DEPTH, "shortcut": variant} for variant in SHORTCUT_VARIANTS[1:]],
            description=describe,
            slow=_too_deep_for_quick_tests,
        ),
    ),
    default_recipe="preact_cifar",
    released=Path(__file__).with_name("postact_resnet.json"),
    citations=(
        ("postactresnet*_*", ("he2016identity", "he2016deep")),
        ("postactresnet*", ("he2016deep",)),
    ),
    parameter_counts={
        **{f"postactresnet{d}": parameter_count(d) for d in (20, 32, 44, 56, 110)},
        **{f"postactresnet110_{v}": parameter_count(110, v) for v in SHORTCUT_VARIANTS[1:]},
    },
))
