"""keras.applications habits: ``preprocess_input`` and ``decode_predictions``.

keras-gated models normalise inside the model (the ``preprocessing`` layer), so the
preprocessing that matches the weights travels with them: ``preprocess_input`` only
casts raw 0-255 pixels to float32 and exists so that keras.applications code runs
unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from keras_gated.datasets import class_names_for


def preprocess_input(x, data_format: str | None = None):
    """Return raw 0-255 pixels as float32: the models normalise internally.

    ``data_format`` is accepted for keras.applications compatibility; only channels-last
    input is supported.
    """
    if data_format not in (None, "channels_last"):
        raise ValueError(
            f"Invalid `data_format`={data_format!r}: keras-gated models are channels_last."
        )
    return np.asarray(x, dtype="float32")


def decode_predictions(
    preds,
    top: int = 5,
    class_names: Sequence[str] | str | None = None,
    *,
    model: Any = None,
) -> list[list[tuple[int, str, float]]]:
    """The ``top`` classes of each prediction as (index, class name, probability).

    Args:
        preds: (batch, classes) probabilities.
        top: how many classes per prediction.
        class_names: a list of names, a data tag (``"cifar10"``, ``"fashion_mnist"``) or
            a weight id (``"gresnet20.cifar10"``).
        model: the keras-gated model that made ``preds``: its ``class_names`` (those of
            its weights, or generic ``class<i>``) are used. Give ``model`` or
            ``class_names``: no data set is assumed.
    """
    preds = np.asarray(preds)
    if preds.ndim != 2:
        raise ValueError(f"`preds` must have shape (batch, classes), got {preds.shape}.")
    if class_names is None and model is None:
        raise ValueError(
            "decode_predictions() does not know which classes `preds` are: pass "
            "model=<the model that made them> (it knows its class names) or class_names=."
        )
    if class_names is None:
        class_names = getattr(model, "class_names", None)
        if not class_names:
            raise ValueError(
                f"The model {getattr(model, 'name', model)!r} has no class names (a model "
                "without a head, or one not built by keras-gated, e.g. reloaded with "
                "keras.saving.load_model): pass class_names=."
            )
    names = class_names_for(class_names) if isinstance(class_names, str) else tuple(class_names)
    if len(names) != preds.shape[1]:
        raise ValueError(
            f"`preds` has {preds.shape[1]} classes but {len(names)} class names were given."
        )
    top = max(1, min(int(top), preds.shape[1]))
    results = []
    for row in preds:
        order = np.argsort(row)[::-1][:top]
        results.append([(int(i), names[i], float(row[i])) for i in order])
    return results
