"""The released weights, as data: one ``PretrainedCfg`` per weight id.

This list ships with the package, so an installed (non-source) keras-gated knows every
released weight. None are released yet: they are added once trained and published.

How a weight is released:

1. ``keras_gated.hub.save_zoo_folder(model, "zoo/<weight id>", ...)`` writes the folder
   (Keras save files, model card, metrics.json, training log);
2. ``keras-gated publish zoo/<weight id>`` uploads it and prints the commit id and the
   ``PretrainedCfg(...)`` entry (sha256 and revision pinned) to paste below;
3. ``tests`` check every entry here (``tests/test_pretrained_cfgs.py``).
"""

from __future__ import annotations

from keras_gated.weights import PretrainedCfg

# Entries are written by `python -m training.release RUN --register`, one block per
# weight id between its `# >>>` and `# <<<` lines.
PRETRAINED_CFGS: tuple[PretrainedCfg, ...] = (
)
