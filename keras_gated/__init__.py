"""keras-gated: a Keras 3 model zoo of gated deep networks.

Highway networks (Srivastava et al. 2015; Greff et al. 2017), Residual Gates (Savarese &
Figueiredo 2017) and pre-activation ResNets (He et al. 2016), as keras.applications-style
constructors, with a timm-style registry.
"""

import os
import sys

from keras_gated.tensorflow_cpu import enable_onednn_by_default
from keras_gated.version import __version__  # noqa: F401

# Before anything imports TensorFlow: it reads the setting once, when imported.
enable_onednn_by_default()


def _running_as_command() -> bool:
    """True in the ``keras-gated`` command: it imports only what a subcommand needs, so
    that ``keras-gated list`` answers without starting a deep-learning backend."""
    return os.path.basename(sys.argv[0] if sys.argv else "") == "keras-gated"


if _running_as_command():

    def __getattr__(name: str):
        import importlib

        api = importlib.import_module("keras_gated._api")
        if name in api.__all__:
            return getattr(api, name)
        raise AttributeError(f"module 'keras_gated' has no attribute {name!r}")

else:  # importing the package registers its layers with Keras (for keras.saving)
    from keras_gated._api import *  # noqa: F403
    from keras_gated._api import __all__  # noqa: F401
