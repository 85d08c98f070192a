"""Deprecated: reading and setting gates moved to ``keras_gated.gating``.

``from keras_gated.gates import gate_values`` (and the rest) keeps working, with one
``DeprecationWarning`` naming the new place.
"""

from __future__ import annotations

import warnings

from keras_gated.gating import (  # noqa: F401  (re-exported)
    gate_values,
    gate_variables,
    gated_blocks,
    remove_block,
    set_gate,
)

warnings.warn(
    "keras_gated.gates is deprecated: import gate_values, set_gate, remove_block, "
    "gated_blocks and gate_variables from keras_gated.gating.",
    DeprecationWarning,
    stacklevel=2,
)
