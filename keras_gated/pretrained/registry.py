"""Former home of the weights registry, now ``keras_gated.registry.weights``: importing
it from here warns once (DeprecationWarning) and gives the same objects."""

import warnings

from keras_gated.registry.weights import *  # noqa: F403  (every public name)

warnings.warn(
    "keras_gated.pretrained.registry moved to keras_gated.registry.weights; import it "
    "from there (or from keras_gated.registry).",
    DeprecationWarning,
    stacklevel=2,
)
