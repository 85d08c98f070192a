"""Learning-rate schedules for a fixed budget of steps.

Linear warm-up, then linear decay to zero (a one-cycle-style triangle, as fast-training
records use): with T the total number of steps and W = round(w·T) warm-up steps,

    η(t) = η_max · t / W                  for t < W
    η(t) = η_max · (T − t) / (T − W)      for W ≤ t < T,   0 from T on

t being the 0-based optimizer step. The training run knows T only once it has measured
its throughput, so ``warmup_linear_decay`` takes T as a tensor as well as a number.
"""

from __future__ import annotations

import keras
from keras import ops


def warmup_steps(total_steps, warmup: float):
    """W = round(w·T), at least 1 (a tensor when T is one)."""
    return ops.maximum(ops.round(ops.cast(total_steps, "float32") * warmup), 1.0)


def warmup_linear_decay(step, peak: float, total_steps, warmup: float):
    """η(t) of the module docstring, as a float32 scalar tensor."""
    t = ops.cast(step, "float32")
    total = ops.cast(total_steps, "float32")
    w = warmup_steps(total_steps, warmup)
    rising = peak * t / w
    falling = peak * (total - t) / ops.maximum(total - w, 1.0)
    return ops.maximum(ops.where(t < w, rising, falling), 0.0)


@keras.saving.register_keras_serializable(package="keras_gated_training")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Keras schedule of ``warmup_linear_decay`` over a known number of steps."""

    def __init__(self, peak: float, total_steps: int, warmup: float) -> None:
        self.peak = float(peak)
        self.total_steps = int(total_steps)
        self.warmup = float(warmup)

    def __call__(self, step):
        return warmup_linear_decay(step, self.peak, self.total_steps, self.warmup)

    def get_config(self) -> dict:
        return {"peak": self.peak, "total_steps": self.total_steps, "warmup": self.warmup}
