"""Residual Gates (Savarese & Figueiredo 2017).

One learned scalar k per block and a gating function g:

* plain form (any layer f):          u = g(k)·f(x) + (1 − g(k))·x
* residual form (f = f_r + shortcut): u = g(k)·f_r(x) + s(x)

where s is the block's shortcut (the identity x for same-shape blocks). With g = ReLU
(the paper's choice) and k started at 1 a gated block starts as the ungated one;
g(k) = 0 (k ≤ 0 for ReLU, k = 0 for the identity) makes the block exactly its shortcut
path, i.e. removes it. k is never weight-decayed unless a recipe asks for it.
"""

from __future__ import annotations

from typing import Any

import keras
from keras import ops

from keras_gated.layers.block import Block

PACKAGE = "keras_gated"

GATE_FUNCTIONS = ("relu", "identity", "sigmoid")
GATE_FORMS = ("residual", "plain")


def check_gate_function(gate: str) -> str:
    if gate not in GATE_FUNCTIONS:
        raise ValueError(
            f"Unknown gate function `gate`={gate!r}. Allowed values: "
            f"{', '.join(GATE_FUNCTIONS)}."
        )
    return gate


@keras.saving.register_keras_serializable(package=PACKAGE)
class ResidualGate(Block):
    """Merge of a block's branch and its shortcut through one scalar gate g(k).

    Call it on ``[branch, shortcut]``:

    * ``form="residual"``: u = g(k)·branch + shortcut   (branch = f_r(x), shortcut = s(x))
    * ``form="plain"``:    u = g(k)·branch + (1 − g(k))·shortcut   (branch = f(x), shortcut = x)

    Args:
        gate: the gating function g: ``"relu"`` (default, as in the paper),
            ``"identity"`` or ``"sigmoid"``.
        form: ``"residual"`` or ``"plain"``.
        k_initializer: start value of k (1.0 in the paper), a float or an initializer.
        k_regularizer: None by default: k is never decayed unless a recipe says so.
    """

    def __init__(
        self,
        gate: str = "relu",
        form: str = "residual",
        k_initializer: float | str | dict = 1.0,
        k_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.gate = check_gate_function(gate)
        if form not in GATE_FORMS:
            raise ValueError(
                f"Unknown ResidualGate `form`={form!r}. Allowed values: {', '.join(GATE_FORMS)}."
            )
        self.form = form
        if isinstance(k_initializer, (int, float)):
            k_initializer = keras.initializers.Constant(float(k_initializer))
        self.k_initializer = keras.initializers.get(k_initializer)
        self.k_regularizer = keras.regularizers.get(k_regularizer)

    def build(self, input_shape):
        # The variable dtype of the policy: float32 also under mixed precision, where
        # ``call`` casts g(k) to the compute dtype of the branch.
        self.k = self.add_weight(
            name="k",
            shape=(),
            initializer=self.k_initializer,
            regularizer=self.k_regularizer,
            trainable=True,
        )

    def gate_layer(self) -> ResidualGate:
        """A fully-connected net's block is its Residual Gate itself."""
        return self

    def gate_value(self):
        """g(k) as a scalar tensor."""
        if self.gate == "relu":
            return ops.relu(self.k)
        if self.gate == "sigmoid":
            return ops.sigmoid(self.k)
        return ops.convert_to_tensor(self.k)

    def removal_k(self) -> float:
        """The k that gives g(k) = 0, i.e. turns the block into its shortcut path."""
        if self.gate == "sigmoid":
            raise ValueError(
                f"Gate {self.name!r} uses g = sigmoid, which never reaches 0, so the block "
                "cannot be removed exactly. Use gate='relu' or gate='identity' for "
                "removable blocks."
            )
        return 0.0

    def call(self, inputs):
        branch, shortcut = inputs
        g = ops.cast(self.gate_value(), branch.dtype)
        if self.form == "residual":
            return g * branch + shortcut
        return g * branch + (1.0 - g) * shortcut

    def compute_output_shape(self, input_shape):
        return input_shape[1]

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "gate": self.gate,
            "form": self.form,
            "k_initializer": keras.initializers.serialize(self.k_initializer),
            "k_regularizer": keras.regularizers.serialize(self.k_regularizer),
        }
