"""The base class of the networks' blocks: what gating, feature extraction, removal and
pruning need to know about a block, asked of the block instead of read off its name.

A block is one unit of a stage: a pre-activation unit, a ResNet or Highway bottleneck,
a Highway layer, or (in the fully-connected nets) the Residual Gate that merges a
block's branch and shortcut. Every block knows

* ``stage``: the stage it belongs to (1, 2, ...; ``None`` for nets without stages),
  saved in its config. Blocks saved before the key existed load with ``None``;
  ``block_stages`` then numbers the stages by the size of the blocks' output maps
  (a stage ends where the next one downsamples).
* ``gate_layer()``: its Residual Gate, or ``None`` (ungated and Highway blocks).
* ``gateable``: whether ``keras_gated.gating.gate`` can give it a Residual Gate by
  setting its ``gate`` argument (the class declares it).
* ``removable``: whether g(k) = 0 turns it into exactly the identity: it has a gate
  that reaches 0 (not a sigmoid) and an identity shortcut.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import keras


class Block(keras.layers.Layer):
    """A block of a gated (or gateable) network.

    Args:
        stage: the stage the block belongs to (1-based), or ``None``.
        **kwargs: the arguments of ``keras.layers.Layer`` (``name``, ``dtype``, ...).
    """

    gateable: ClassVar[bool] = False
    # Prefix of the stage's label in analyses (``stage2``; ``conv3`` for the ImageNet
    # nets, torchvision's name of their stages).
    stage_prefix: ClassVar[str] = "stage"
    first_stage: ClassVar[int] = 1  # the number of a net's first stage (ImageNet: conv2)

    def __init__(self, *, stage: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if stage is not None and (isinstance(stage, bool) or int(stage) < 1):
            raise ValueError(f"`stage` must be a positive integer or None, got {stage!r}.")
        self.stage = None if stage is None else int(stage)

    def gate_layer(self):
        """The block's ``ResidualGate``, or ``None`` if it has none.

        A method, not a property: Keras's saving walks a layer's attributes, and a
        property returning a sub-layer would save that sub-layer a second time."""
        return getattr(self, "residual_gate", None)

    @property
    def identity_shortcut(self) -> bool:
        """Whether the block's shortcut is the identity x (known once it is built)."""
        return not getattr(self, "changes_shape", False)

    @property
    def removable(self) -> bool:
        """Whether setting g(k) = 0 makes the block exactly the identity."""
        gate = self.gate_layer()
        return gate is not None and gate.gate != "sigmoid" and self.identity_shortcut

    @property
    def stage_label(self) -> str | None:
        """``"stage2"`` (``"conv3"`` for the ImageNet blocks); ``None`` without a stage."""
        return None if self.stage is None else stage_label(self, self.stage)

    def get_config(self) -> dict:
        config = super().get_config()
        if self.stage is not None:  # blocks without a stage keep their former config
            config["stage"] = self.stage
        return config


def block_stages(layers: Iterable[keras.layers.Layer]) -> dict[str, int]:
    """Block name -> stage number, for the blocks among ``layers`` (in model order) that
    have a stage: their own ``stage``, or for a convolutional block saved without one, its
    place among the sizes of the blocks' output maps (counted from ``first_stage``)."""
    stages, sizes = {}, []
    for layer in layers:
        if not isinstance(layer, Block):
            continue
        if layer.stage is not None:
            stages[layer.name] = layer.stage
        elif len(layer.output.shape) == 4:  # feature maps: a stage per map size
            size = tuple(layer.output.shape[1:3])
            if size not in sizes:
                sizes.append(size)
            stages[layer.name] = layer.first_stage + sizes.index(size)
    return stages


def stage_label(block: Block, stage: int) -> str:
    """``stage2``; ``conv3`` for the ImageNet blocks (torchvision's name of their stages)."""
    return f"{block.stage_prefix}{stage}"
