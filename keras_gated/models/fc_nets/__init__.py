"""Fully-connected plain, residual, gated and Highway nets (MNIST).

The family's folder:

* ``fc_nets.py``: the constructors, which register the family's names;
* ``fc_nets.json``: the configs of its released (and planned) weights;
* ``spec.py``: its declaration (``keras_gated.models.family_spec.FamilySpec``).
"""

from keras_gated.models.fc_nets.fc_nets import *  # noqa: F403  (the module's public names)
from keras_gated.models.fc_nets.spec import SPEC  # noqa: F401
