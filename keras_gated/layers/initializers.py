"""Initial weights drawn independently per layer, as the reference implementations draw
them (every Torch/Caffe layer initialises its own tensor).

A Keras initializer instance without a seed fixes one seed when it is made, so the same
instance returns the same values on every call: handed to several layers, it would start
every kernel of the same shape identical. ``independent`` gives each layer its own
instance, whose seed is drawn from Python's ``random`` (seeded by
``keras.utils.set_random_seed``), so initial weights are independent across layers and
reproducible. An initializer given a seed explicitly is kept as it is, as Keras does.
"""

from __future__ import annotations

from typing import Any

import keras


def independent(initializer: Any) -> keras.initializers.Initializer:
    """A new instance of ``initializer`` (name, config or instance) that draws values of
    its own; the same instance when it carries an explicit seed."""
    instance = keras.initializers.get(initializer)
    config = instance.get_config()
    if config.get("seed") is not None:
        return instance
    return instance.__class__.from_config(config)
