"""Load a Keras ``.weights.h5`` file into a model: strictly, with head adaptation.

Keras addresses the arrays of a weight file by layer *type and position*, not by layer
name, and ``model.load_weights`` silently ignores arrays the model has no place for
(a full model's file loads into a headless model without a word). Here:

* the file must fit an architecture exactly: same number of arrays, every shape equal
  (checked by Keras when it assigns them);
* when the model is exactly that architecture (``include_top=True`` and the same
  ``classes``), the file is loaded straight into it;
* otherwise (``include_top=False``, other ``classes``, a head-less file, or a custom
  ``input_tensor``) the file is loaded into a *reference* model of the file's own
  architecture, and every layer but the ``predictions`` head is copied into the model
  by layer name, shapes checked. The head is then freshly initialised, which is said
  once (one log line on the ``keras_gated`` logger).

Any other mismatch is a ValueError, never a silent partial load.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import h5py
import keras

HEAD = "predictions"

logger = logging.getLogger("keras_gated")


def _datasets(h5: h5py.File) -> list[tuple[str, h5py.Dataset]]:
    found: list[tuple[str, h5py.Dataset]] = []

    def visit(name: str, obj: object) -> None:
        if isinstance(obj, h5py.Dataset):
            found.append((name, obj))

    h5.visititems(visit)
    return found


def head_classes(path: str | Path) -> int | None:
    """The number of classes of the ``predictions`` layer stored in a Keras 3 weight file
    (Keras records each layer's name on its ``vars`` group); None if it has no head."""
    with h5py.File(path, "r") as h5:
        for name, dataset in _datasets(h5):
            group = dataset.parent
            if group.attrs.get("name") == HEAD and name.endswith("vars/0"):
                return int(dataset.shape[-1])
    return None


def count_arrays(path: str | Path) -> int:
    """The number of model variable arrays stored in a weight file (a compiled model's
    file also holds ``optimizer/`` state, which is not counted)."""
    with h5py.File(path, "r") as h5:
        return sum(1 for name, _ in _datasets(h5) if not name.startswith("optimizer/"))


def load_exact(model: keras.Model, path: str | Path, *, origin: str) -> None:
    """Load a weight file that must fit ``model``'s architecture exactly."""
    stored = count_arrays(path)
    expected = len(model.weights)
    if stored != expected:
        raise ValueError(
            f"The weights {origin} do not fit {model.name!r}: the file holds {stored} "
            f"arrays, the architecture has {expected} variables. Check the architecture "
            "arguments (depth, width, block, units, input shape) match the weights'."
        )
    try:
        model.load_weights(path)
    except ValueError as error:
        raise ValueError(
            f"The weights {origin} do not fit {model.name!r} (check the architecture "
            f"arguments match the weights'):\n{error}"
        ) from error


def copy_weights(
    source: keras.Model,
    target: keras.Model,
    *,
    skip: tuple[str, ...] = (),
    foreign_layers_ok: bool = False,
) -> None:
    """Copy every layer of ``source`` that has variables into the same-named layer of
    ``target`` (except ``skip``). A missing layer, another shape, or a layer of
    ``target`` left unfilled (unless ``foreign_layers_ok``: a caller's own layers before
    an ``input_tensor``) is a ValueError."""
    copied = set(skip)
    for layer in source.layers:
        if not layer.weights or layer.name in skip:
            continue
        try:
            twin = target.get_layer(layer.name)
        except ValueError:
            raise ValueError(
                f"Layer {layer.name!r} of the weights has no counterpart in "
                f"{target.name!r}; the architectures differ."
            ) from None
        source_shapes = [tuple(w.shape) for w in layer.weights]
        target_shapes = [tuple(w.shape) for w in twin.weights]
        if source_shapes != target_shapes:
            raise ValueError(
                f"Layer {layer.name!r}: the weights have shapes {source_shapes}, "
                f"{target.name!r} has {target_shapes}; the architectures differ."
            )
        twin.set_weights(layer.get_weights())
        copied.add(layer.name)
    unfilled = [layer.name for layer in target.layers if layer.weights and layer.name not in copied]
    if unfilled and not foreign_layers_ok:
        raise ValueError(
            f"The weights have nothing for the layers {unfilled} of {target.name!r}; the "
            "architectures differ."
        )


def load_weights_file(
    model: keras.Model,
    path: str | Path,
    *,
    origin: str,
    include_top: bool,
    classes: int,
    build_reference: Callable[[int | None], keras.Model],
    custom_input: bool = False,
) -> None:
    """Load ``path`` into ``model``, adapting the head if needed (see module docs).

    Args:
        origin: how to name the weights in messages (``"weights gresnet20.cifar10"``).
        include_top, classes: how ``model`` was built.
        build_reference: builds the same architecture with an ``n``-class head
            (``None``: without head) and default inputs.
        custom_input: ``model`` was built on a caller's ``input_tensor`` (its layers
            may not line up with a reference model's).
    """
    stored = head_classes(path)
    same_head = (include_top and stored == classes) or (not include_top and stored is None)
    if same_head and not custom_input:
        load_exact(model, path, origin=origin)
        return

    reference = build_reference(stored)
    load_exact(reference, path, origin=origin)
    adapt_head = not same_head
    copy_weights(
        reference, model, skip=(HEAD,) if adapt_head else (), foreign_layers_ok=custom_input
    )
    if not adapt_head:
        return
    if not include_top:
        why = f"include_top=False drops the {stored}-class head '{HEAD}'"
    elif stored is None:
        why = f"the weights have no head; '{HEAD}' ({classes} classes) is freshly initialised"
    else:
        why = (
            f"the weights have {stored} classes, the model {classes}: '{HEAD}' is freshly "
            "initialised, train it before use"
        )
    logger.warning("Loaded %s into %r except the head: %s.", origin, model.name, why)
