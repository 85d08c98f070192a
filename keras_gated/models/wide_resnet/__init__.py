"""Wide ResNets (Zagoruyko & Komodakis 2016) and gated Wide ResNets, CIFAR.

The family's folder:

* ``wide_resnet.py``: the constructors, which register the family's names;
* ``wide_resnet.json``: the configs of its released (and planned) weights;
* ``convert.py``: the ``wrn`` layout of its reference implementation;
* ``spec.py``: its declaration (``keras_gated.models.family_spec.FamilySpec``).
"""

from keras_gated.models.wide_resnet.wide_resnet import *  # noqa: F403  (the module's public names)
from keras_gated.models.wide_resnet.spec import SPEC  # noqa: F401
