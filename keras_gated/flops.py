"""Count a model's multiply-accumulates (MACs) and estimate training compute.

The count runs one forward pass on a single example while recording every Conv2D and
Dense call (nested layers included), so it works for every family and backend without
per-architecture formulas. Element-wise work (BN, activations, gates) is not counted:
for these networks it is well under 1 % of the convolutions.

Only counting imports Keras (and so starts a backend): the estimates are arithmetic, and
the registry's planned configs and the zoo tables use them without a backend.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import keras

# The throughput assumed for GPU-hour estimates: one NVIDIA A100 sustaining 25 TFLOP/s
# (about 16 % of its TF32 tensor-core peak, typical of small-image convnets in practice).
# An assumed figure, not a measured one: every GPU-hour estimate is the counted training
# FLOPs divided by it, so the estimates scale with it.
ASSUMED_GPU = "NVIDIA A100 sustaining 25 TFLOP/s (assumed throughput)"
ASSUMED_GPU_FLOPS = 25e12


@contextlib.contextmanager
def _recording(macs: list):
    import keras  # a backend: only counting needs it (see the module's docstring)
    import numpy as np

    conv_call, dense_call = keras.layers.Conv2D.call, keras.layers.Dense.call

    def conv(self, inputs):
        outputs = conv_call(self, inputs)
        kh, kw = self.kernel_size
        in_per_group = inputs.shape[-1] // self.groups
        macs.append(int(np.prod(outputs.shape[1:])) * kh * kw * in_per_group)
        return outputs

    def dense(self, inputs, *args, **kwargs):
        outputs = dense_call(self, inputs, *args, **kwargs)
        macs.append(int(np.prod(inputs.shape[1:])) * self.units)
        return outputs

    keras.layers.Conv2D.call, keras.layers.Dense.call = conv, dense
    try:
        yield
    finally:
        keras.layers.Conv2D.call, keras.layers.Dense.call = conv_call, dense_call


def count_macs(model: keras.Model) -> int:
    """Multiply-accumulates of one forward pass of one example."""
    shape = tuple(model.inputs[0].shape[1:])
    if any(size is None for size in shape):
        raise ValueError(f"count_macs needs a fixed input shape, got {shape}.")
    import numpy as np
    macs: list[int] = []
    with _recording(macs):
        model(np.zeros((1, *shape), dtype="float32"), training=False)
    return sum(macs)


@dataclass(frozen=True)
class ComputeEstimate:
    """Training compute from counted MACs; an estimate, labelled as one."""

    forward_macs: int
    examples_per_epoch: int
    epochs: int

    @property
    def training_flops(self) -> float:
        # forward + backward ≈ 3 × forward; 2 FLOPs per MAC.
        return 3 * 2 * self.forward_macs * self.examples_per_epoch * self.epochs

    @property
    def gpu_hours(self) -> float:
        return self.training_flops / ASSUMED_GPU_FLOPS / 3600

    def describe(self) -> str:
        return (
            f"estimate: {self.forward_macs / 1e9:.2f} GMACs per image (counted) × 3 "
            f"(forward + backward) × 2 FLOPs per MAC × {self.examples_per_epoch:,} images × "
            f"{self.epochs} epochs "
            f"= {self.training_flops:.2e} FLOPs ≈ {math.ceil(self.gpu_hours * 10) / 10} "
            f"GPU-hours on an {ASSUMED_GPU}"
        )
