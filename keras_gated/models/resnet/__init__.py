"""ResNet-50 (He et al. 2015) and GResNet-50, ImageNet.

The family's folder:

* ``resnet.py``: the constructors, which register the family's names;
* ``resnet.json``: the configs of its released (and planned) weights;
* ``convert.py``: the ``torchvision`` layout of its reference implementation;
* ``spec.py``: its declaration (``keras_gated.models.family_spec.FamilySpec``).
"""

from keras_gated.models.resnet.resnet import *  # noqa: F403  (the module's public names)
from keras_gated.models.resnet.spec import SPEC  # noqa: F401
