"""Former home of the weights registry, now ``keras_gated.registry.weights``: importing
it from here warns once (DeprecationWarning) and gives the same objects."""

import warnings

from keras_gated.registry.weights import *  # noqa: F403
from keras_gated.registry.weights import (  # noqa: F401  (names used before the move)
    cfg_source_file,
    dumps_cfgs,
    find_pretrained_cfg,
    get_pretrained_cfg,
    list_pretrained,
    pretrained_cfgs_overlay,
    read_cfg_file,
    register_cfg_file,
    register_pretrained,
    tags_for,
    unregister_pretrained,
    write_cfg,
)

warnings.warn(
    "keras_gated.pretrained.registry moved to keras_gated.registry.weights; import it "
    "from there (or from keras_gated.registry).",
    DeprecationWarning,
    stacklevel=2,
)
