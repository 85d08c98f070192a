"""The original (post-activation) CIFAR ResNets (He et al. 2015) with the shortcut
variants of He et al. 2016, *Identity Mappings in Deep Residual Networks*, Table 1.

The family's folder:

* ``postact_unit.py``: its block, ``PostActUnit`` (the original unit and Table 1's
  shortcuts);
* ``postact_resnet.py``: the constructors, which register the family's names;
* ``postact_resnet.json``: the configs of its released weights (none yet);
* ``spec.py``: its declaration (``keras_gated.models.family_spec.FamilySpec``), with the
  closed-form parameter counts.
"""

from keras_gated.models.postact_resnet.postact_resnet import *  # noqa: F403  (the module's public names)
from keras_gated.models.postact_resnet.spec import SPEC  # noqa: F401
