"""The CIFAR residual skeleton shared by pre-activation ResNets and Wide ResNets.

    stem : Conv3x3(16), no bias
    stage s = 1, 2, 3 : ``units`` PreActUnits of width ``widths[s]``; the first unit of
                        stages 2 and 3 has stride 2
    top  : BN -> ReLU  (then the application head: avg_pool -> predictions)

``share_stage_preactivation=True`` makes the first unit of every stage share its
pre-activation with its shortcut even when it keeps the shape (fb.resnet.torch's
"both_preact" units, used by the pre-act ResNets); the WRN code shares it only where
the shape changes (``False``).

Pre-act ResNets (He et al. 2016) use widths 16/32/64 (basic) or 64/128/256
(bottleneck); Wide ResNets (Zagoruyko & Komodakis 2016) 16k/32k/64k. Layer names
(``stem_conv``, ``stage2_unit1``, ``final_bn``) are part of the weight-file contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras

from keras_gated.layers.preact_unit import PreActUnit

STEM_FILTERS = 16


def cifar_resnet_features(
    widths: Sequence[int],
    units_per_stage: int,
    *,
    block: str = "basic",
    gate: str | None = None,
    k_init: float = 1.0,
    shortcut: str = "projection",
    dropout: float = 0.0,
    batch_norm: bool = True,
    kernel_initializer: Any,
    bn_momentum: float = 0.9,
    bn_epsilon: float = 1e-5,
    share_stage_preactivation: bool = False,
):
    """A function mapping normalised images to the final (BN-ReLU'd) feature map.

    ``k_init`` is the start value of every Residual Gate's k (gated nets only).
    """

    def features(x):
        x = keras.layers.Conv2D(
            STEM_FILTERS,
            3,
            padding="same",
            use_bias=not batch_norm,
            kernel_initializer=kernel_initializer,
            name="stem_conv",
        )(x)
        for stage, width in enumerate(widths, start=1):
            for unit in range(1, units_per_stage + 1):
                x = PreActUnit(
                    width,
                    strides=2 if stage > 1 and unit == 1 else 1,
                    block=block,
                    shortcut=shortcut,
                    dropout=dropout,
                    gate=gate,
                    k_initializer=k_init,
                    batch_norm=batch_norm,
                    bn_momentum=bn_momentum,
                    bn_epsilon=bn_epsilon,
                    kernel_initializer=kernel_initializer,
                    share_preactivation=share_stage_preactivation and unit == 1,
                    name=f"stage{stage}_unit{unit}",
                )(x)
        if batch_norm:
            x = keras.layers.BatchNormalization(
                momentum=bn_momentum, epsilon=bn_epsilon, name="final_bn"
            )(x)
        return keras.layers.ReLU(name="final_relu")(x)

    return features
