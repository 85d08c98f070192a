"""Knowledge distillation for a training phase (Hinton, Vinyals & Dean 2015, "Distilling
the Knowledge in a Neural Network", eq. 2 and section 2): the student is trained on

    L = (1 − α) · CE(y, softmax(z_s)) + α · T² · KL(softmax(z_t / T) ‖ softmax(z_s / T))

with z_s and z_t the logits of the student and of the frozen teacher (in inference mode),
T the temperature and α the weight of the teacher's term; the factor T² keeps the soft
term's gradients at the scale of the hard one's as T changes.

Keras computes it: ``keras.distillation.Distiller`` with one ``LogitsDistillation``
(KL divergence, scaled by T²) and ``student_loss_weight = 1 − α``. Both terms need logits,
and a keras-gated classifier ends in a softmax: ``logits_heads`` lifts the softmax of the
``predictions`` layers while the phase trains (a Dense layer reads its activation when it
is called) and puts it back after.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Iterator
from dataclasses import dataclass

import keras

HEAD = "predictions"
DEFAULT_TEMPERATURE = 4.0


@dataclass(frozen=True)
class Distillation:
    """α (``weight``, in (0, 1]) and T (``temperature``, > 0) of the loss above."""

    weight: float
    temperature: float = DEFAULT_TEMPERATURE

    def __post_init__(self) -> None:
        if not (_real(self.weight) and 0 < self.weight <= 1):
            raise ValueError(f"The distillation weight {self.weight} must be a number in (0, 1] "
                             "(the share of the teacher's term, e.g. 0.9).")
        if not (_real(self.temperature) and self.temperature > 0):
            raise ValueError(f"The distillation temperature {self.temperature} must be a finite "
                             "number > 0 (e.g. 4).")


def _real(value) -> bool:
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value))


def _head(model: keras.Model) -> keras.layers.Layer:
    try:
        head = model.get_layer(HEAD)
    except ValueError:
        head = None
    name = getattr(getattr(head, "activation", None), "__name__", None)
    if name not in ("softmax", "linear"):
        raise ValueError(f"{model.name} has no '{HEAD}' layer ending in a softmax or in logits: "
                         "distillation needs a classifier (include_top=True).")
    return head


@contextlib.contextmanager
def logits_heads(*models: keras.Model) -> Iterator[None]:
    """Inside the block each model's ``predictions`` layer gives logits (its softmax
    lifted); on the way out every lifted softmax is put back, also after an error."""
    lifted = [(head, head.activation) for head in map(_head, models)
              if getattr(head.activation, "__name__", None) == "softmax"]
    try:
        for head, _ in lifted:
            head.activation = keras.activations.linear
        yield
    finally:
        for head, softmax in lifted:
            head.activation = softmax


def distiller(teacher: keras.Model, student: keras.Model,
              distillation: Distillation) -> keras.distillation.Distiller:
    """The Keras model that trains ``student`` on the loss above (call it inside
    ``logits_heads(student, teacher)``); it freezes ``teacher``. Compile it with the hard
    term's loss (``SparseCategoricalCrossentropy(from_logits=True)``)."""
    return keras.distillation.Distiller(
        teacher=teacher, student=student,
        distillation_losses=keras.distillation.LogitsDistillation(
            # An instance: LogitsDistillation softmaxes the scaled logits (and scales by T²)
            # only for a ``KLDivergence`` object; the default string "kl_divergence" becomes
            # the bare function, which it would apply to the scaled logits themselves.
            temperature=distillation.temperature, loss=keras.losses.KLDivergence()),
        student_loss_weight=1.0 - distillation.weight,
        name=f"{student.name}_distiller")
