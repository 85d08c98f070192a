"""Study the gates of a trained network (Savarese & Figueiredo 2017; Greff et al. 2017;
Srivastava et al. 2015).

* ``GateLogger`` (from ``keras_gated.training.callbacks``, the callback the training loop
  adds): every gate's k and g(k) at each epoch (CSV and TensorBoard).
* ``removal``: accuracy with single blocks removed, and removal curves (by lowest
  |g(k)|, at random, by position) for gated nets and their ungated twins.
* ``lesion``: lesioning, shuffling within stages, per-stage estimation error.
* ``highway_activity``, ``highway_trace``: transform-gate activity of Highway layers over
  data, and each layer's input, T(x) and output per example.
* ``prune`` (from ``keras_gated.models.prune``, which compressed architectures are built
  with): a new, smaller model without the removed blocks.
* ``compress``: a smaller net at a MACs or block budget: the gates learned under an L1
  pressure, the closed blocks pruned, the rest fine-tuned.
* ``plots``: the figures of the papers, as PNG files (matplotlib).
"""

from keras_gated.analysis.compress import compress
from keras_gated.training.callbacks import GateLogger
from keras_gated.analysis.highway_activity import highway_activity, highway_trace
from keras_gated.analysis.lesion import (
    estimation_error,
    lesion_accuracies,
    shuffle_accuracies,
)
from keras_gated.analysis.removal import accuracy, removal_curve, single_removal_accuracies
from keras_gated.models.prune import prune, removable_blocks

__all__ = [
    "GateLogger",
    "accuracy",
    "compress",
    "estimation_error",
    "highway_activity",
    "highway_trace",
    "lesion_accuracies",
    "prune",
    "removable_blocks",
    "removal_curve",
    "shuffle_accuracies",
    "single_removal_accuracies",
]
