"""Pre-activation ResNets (He et al. 2016) and gated ResNets (Savarese & Figueiredo 2017), CIFAR.

The family's folder:

* ``preact_resnet.py``: the constructors, which register the family's names;
* ``preact_resnet.json``: the configs of its released (and planned) weights;
* ``convert.py``: the ``fbresnet`` layout of its reference implementation;
* ``spec.py``: its declaration (``keras_gated.models.family_spec.FamilySpec``).
"""

from keras_gated.models.preact_resnet.preact_resnet import *  # noqa: F403  (the module's public names)
from keras_gated.models.preact_resnet.spec import SPEC  # noqa: F401
