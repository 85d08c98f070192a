"""ResNet-50 (He et al. 2015) and GResNet-50, ImageNet.

The family's folder:

* ``resnet.py``: the constructors;
* ``resnet.json``: the configs of its released (and planned) weights;
* ``convert.py``: the ``torchvision`` layout of its reference implementation;
* this file: its declaration (``keras_gated.registry.families.Family``).
"""

import functools
from pathlib import Path

from keras_gated.registry.families import Family, Models, declare
from keras_gated.models.resnet.convert import TORCHVISION
from keras_gated.models.resnet.resnet import *  # noqa: F403  (the module's public names)
from keras_gated.models.resnet.resnet import GResNet50, ResNet50, resnet50_name

FAMILY = declare(Family(
    name="resnet",
    constructors=(ResNet50, GResNet50),
    models=(
        Models(
            "resnet", ResNet50, arch_name=functools.partial(resnet50_name, False),
            description="ResNet-50 (He et al. 2015, torchvision v1.5), baseline of Greff et al. "
            "2017 Table 1b",
            slow=True,  # ImageNet size
        ),
        Models(
            "resnet", GResNet50, arch_name=functools.partial(resnet50_name, True),
            description="ResNet-50 with Residual Gates (Savarese & Figueiredo 2017), ImageNet",
            slow=True,
        ),
    ),
    default_recipe="imagenet_resnet",
    released=Path(__file__).with_name("resnet.json"),
    twins=(("resnet50", "gresnet50"),),
    citations=(
        ("gresnet50*", ("savarese2017residual", "he2016deep")),
        ("resnet50*", ("he2016deep",)),
    ),
    stem_feature="stem_relu",  # reduction 2, as timm's resnet50 exposes it
    converters=(TORCHVISION,),
))
