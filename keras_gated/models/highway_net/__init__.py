"""Convolutional Highway nets: the 19-layer CIFAR net and the 50-layer ImageNet net.

The family's folder:

* ``highway_net.py``: the constructors;
* ``highway_net.json``: the configs of its released (and planned) weights;
* this file: its declaration (``keras_gated.registry.families.Family``).
"""

from pathlib import Path

from keras_gated.registry.families import Family, Models, declare
from keras_gated.models.highway_net.highway_net import *  # noqa: F403  (the module's public names)
from keras_gated.models.highway_net.highway_net import (
    HighwayNet,
    HighwayNet50,
    highwaynet50_name,
    highwaynet_name,
)

HIGHWAYNET50_DESCRIPTIONS = {
    "highway": "50-layer conv Highway net (Greff et al. 2017 Table 1b), ResNet-50 size",
    "final_relu": "50-layer conv Highway-Full net (H ends in ReLU), Greff et al. 2017",
}

FAMILY = declare(Family(
    name="highway_net",
    constructors=(HighwayNet, HighwayNet50),
    models=(
        Models(
            "highway_net", HighwayNet, arch_name=highwaynet_name,
            description="19-layer convolutional Highway net (Srivastava et al. 2015, Table 1), "
            "CIFAR",
        ),
        Models(
            "highway_net", HighwayNet50, arch_name=highwaynet50_name,
            configs=[{"variant": "highway"}, {"variant": "final_relu"}],
            description=lambda variant: HIGHWAYNET50_DESCRIPTIONS[variant],
            default_recipe="imagenet_resnet",
            slow=True,  # ImageNet size
        ),
    ),
    default_recipe="highway_cifar",
    released=Path(__file__).with_name("highway_net.json"),
    citations=(
        ("highwaynet50*", ("greff2017highway", "srivastava2015highway", "he2016deep")),
        ("highwaynet*", ("srivastava2015highway",)),
    ),
    stem_feature="stem_relu",  # HighwayNet50's stem, reduction 2 (as ResNet-50's)
))
