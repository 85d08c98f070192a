"""Convolutional Highway nets: the 19-layer CIFAR net and the 50-layer ImageNet net.

The family's folder:

* ``highway_net.py``: the constructors, which register the family's names;
* ``highway_net.json``: the configs of its released (and planned) weights;
* ``spec.py``: its declaration (``keras_gated.models.family_spec.FamilySpec``).
"""

from keras_gated.models.highway_net.highway_net import *  # noqa: F403  (the module's public names)
from keras_gated.models.highway_net.spec import SPEC  # noqa: F401
