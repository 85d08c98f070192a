"""The one applications-style builder every family goes through.

It gives every constructor the keras.applications signature and contract:

    Name(..., include_top=True, weights=None, input_tensor=None, input_shape=None,
         pooling=None, classes=..., classifier_activation="softmax",
         include_preprocessing=True, name=None)

* Inputs are raw pixels (0-255); with ``include_preprocessing=True`` the normalisation
  that matches the weights is the first layer (``"preprocessing"``), so it travels with
  the saved model.
* ``include_top=True`` ends in a global pooling layer named ``"avg_pool"`` followed by a
  Dense layer named ``"predictions"`` (the head). A family whose recipe has dropout
  before the classifier keeps it between the two (``"head_dropout"``).
* ``include_top=False`` returns the feature map, or a pooled vector with
  ``pooling="avg"`` (layer ``"avg_pool"``) or ``pooling="max"`` (layer ``"max_pool"``).
* Every model knows its class names (``model.class_names``): the weights' own when their
  head is loaded, else generic ``class0``, ``class1``, ...; None without a head.
  ``keras_gated.decode_predictions(preds, model=model)`` uses them.
* The model is a ``GatedModel`` (``keras_gated.models.gated_model``): timm's
  ``pretrained_cfg``, ``num_classes``, ``reset_classifier``, ``forward_features``,
  ``forward_head`` and ``feature_info`` are its methods and survive a reload.
* Under a mixed-precision policy (``mixed_bfloat16``, ``mixed_float16``) the
  ``preprocessing`` layer and the ``predictions`` head (with its softmax) compute in
  float32, as keras-hub's do; the gates' k are float32 variables.

A load flows one way: ``weights=`` arrives resolved (``ResolvedWeights``, see
``keras_gated.models.constructor``), the model is built, then the record is loaded into
it. A family module imports what it needs from here, the constructor decorators
included.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import keras

from keras_gated.models.constructor import (  # noqa: F401  (what family modules import)
    APPLICATION_ARGUMENTS,
    arguments_of,
    current_call,
    defaults_of,
    public_constructor,
    renamed_arguments,
)
from keras_gated.models.gated_model import HeadSpec, assemble
from keras_gated.models.prune import prune
from keras_gated.precision import warn_if_slow_mixed_precision
from keras_gated.weights.load import load_resolved
from keras_gated.weights.resolve import ResolvedWeights, resolve_weights


POOLING_CHOICES = (None, "avg", "max")

CIFAR_MEAN = (125.3, 123.0, 113.9)  # per-channel, on 0-255 pixels (WRN / fb.resnet.torch)
CIFAR_STD = (63.0, 62.1, 66.7)
IMAGENET_MEAN = (123.675, 116.28, 103.53)
IMAGENET_STD = (58.395, 57.12, 57.375)


@dataclass(frozen=True)
class InputSpec:
    """What a family expects as input, and how it normalises it."""

    default_shape: tuple[int, ...]
    min_size: int | None  # smallest spatial size the downsampling allows; None: no check
    mean: tuple[float, ...] | None = None  # per-channel, on 0-255 pixels
    std: tuple[float, ...] | None = None
    scale: float | None = None  # used instead of mean/std: x * scale
    spatial: bool = True  # False for fully-connected nets (no spatial pooling)
    classes: int = 10  # the default size of the head


CIFAR_INPUT = InputSpec((32, 32, 3), 8, mean=CIFAR_MEAN, std=CIFAR_STD)
IMAGENET_INPUT = InputSpec((224, 224, 3), 32, mean=IMAGENET_MEAN, std=IMAGENET_STD, classes=1000)
MNIST_FC_INPUT = InputSpec((28, 28, 1), None, scale=1.0 / 255.0, spatial=False)


def validate_pooling(pooling: str | None) -> None:
    if pooling not in POOLING_CHOICES:
        raise ValueError(
            f"Invalid `pooling`={pooling!r}. Allowed values: None, 'avg', 'max'."
        )


def validate_classifier_activation(activation: Any) -> None:
    if activation is None or callable(activation):
        return
    try:
        keras.activations.get(activation)
    except (ValueError, TypeError) as error:
        raise ValueError(
            f"Invalid `classifier_activation`={activation!r}: not a Keras activation. "
            "Use None (logits), 'softmax', or any name keras.activations.get accepts."
        ) from error


def validate_classes(classes: Any) -> None:
    if isinstance(classes, bool) or not isinstance(classes, int) or classes < 1:
        raise ValueError(f"`classes` must be a positive integer, got {classes!r}.")


def resolve_input_shape(
    spec: InputSpec, input_shape: Sequence[int | None] | None, input_tensor: Any
) -> tuple[int | None, ...]:
    """The input shape (without batch), checked against the family's downsampling."""
    if input_tensor is not None and not keras.backend.is_keras_tensor(input_tensor):
        raise ValueError(
            "`input_tensor` must be a Keras tensor (e.g. from keras.Input(...) or another "
            f"model's output), got {type(input_tensor).__name__}."
        )
    if input_tensor is not None:
        shape = tuple(keras.ops.shape(input_tensor)[1:])
        if input_shape is not None and tuple(input_shape) != shape:
            raise ValueError(
                f"`input_shape`={tuple(input_shape)} does not match the shape of "
                f"`input_tensor` {shape}; pass only one of them."
            )
    elif input_shape is None:
        shape = spec.default_shape
        if _IN_CHANS.get() is not None:
            shape = shape[:-1] + (_IN_CHANS.get(),)
    else:
        shape = tuple(input_shape)
    for size in shape:
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
            raise ValueError(
                f"`input_shape`={shape}: every size must be a positive integer (or None "
                f"for a free height or width), got {size!r}."
            )
    if spec.spatial:
        if len(shape) != 3:
            raise ValueError(
                f"`input_shape` must be (height, width, channels), got {shape}."
            )
        if shape[-1] is None:
            raise ValueError(f"`input_shape` needs a known number of channels, got {shape}.")
        if spec.min_size is not None:
            for size in shape[:2]:
                if size is not None and size < spec.min_size:
                    raise ValueError(
                        f"`input_shape`={shape} is too small for this network's "
                        f"downsampling: height and width must be at least {spec.min_size}."
                    )
    return shape


_IN_CHANS: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "keras_gated_in_chans", default=None
)


@contextlib.contextmanager
def default_channels(in_chans: int | None) -> Iterator[None]:
    """Within the block, a model built without ``input_shape`` / ``input_tensor`` takes
    ``in_chans`` input channels instead of its family's default (timm's ``in_chans``;
    ``keras_gated.create_model`` uses it). None changes nothing."""
    if in_chans is not None and (isinstance(in_chans, bool) or not isinstance(in_chans, int)
                                 or in_chans < 1):
        raise ValueError(f"`in_chans` must be a positive integer, got {in_chans!r}.")
    token = _IN_CHANS.set(in_chans)
    try:
        yield
    finally:
        _IN_CHANS.reset(token)


@dataclass(frozen=True)
class CompressedBuild:
    """A compressed architecture as the builder sees it: the registered ``source`` built
    without ``removed_blocks`` and named ``name`` (``gresnet20`` without five blocks,
    named ``gresnet20_c50``)."""

    name: str
    source: str
    removed_blocks: tuple[str, ...]


_COMPRESSED: contextvars.ContextVar[CompressedBuild | None] = contextvars.ContextVar(
    "keras_gated_compressed", default=None
)


@contextlib.contextmanager
def compressed_build(name: str, source: str, removed_blocks: Sequence[str]) -> Iterator[None]:
    """Within the block, the builder builds the architecture ``source`` as the compressed
    architecture ``name``: without ``removed_blocks`` (``keras_gated.models.prune``),
    named ``name``, its weights resolved and checked under ``name``. A source
    constructor called inside it that builds another architecture is refused.
    ``keras_gated.models.compressed`` wraps every compressed architecture's build in it."""
    token = _COMPRESSED.set(CompressedBuild(name, source, tuple(removed_blocks)))
    try:
        yield
    finally:
        _COMPRESSED.reset(token)


def _compressed(arch: str, removed_blocks: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """(the name, the blocks to remove) of what ``build_application(arch=...)`` builds:
    the compressed architecture when ``arch`` is the source of the one being built."""
    compressed = _COMPRESSED.get()
    if compressed is None or arch == compressed.name:  # the name: a reference of its own
        return arch, tuple(removed_blocks)
    if arch != compressed.source:
        raise ValueError(
            f"{compressed.name} is {compressed.source} without {len(compressed.removed_blocks)} "
            f"of its blocks, but these arguments build {arch}: leave the arguments that "
            f"change the architecture (depth, block, width) at {compressed.source}'s."
        )
    return compressed.name, compressed.removed_blocks


def _per_channel(values: tuple[float, ...], channels: int) -> tuple[float, ...]:
    if len(values) == channels:
        return values
    mean = sum(values) / len(values)  # another channel count: one shared statistic
    return (mean,) * channels


def preprocessing_layer(spec: InputSpec, channels: int) -> keras.layers.Layer:
    """The in-model normalisation of raw 0-255 pixels that matches ``spec``.

    It always computes in float32 (also under a mixed-precision policy), as keras-hub's
    image converters do: 0-255 pixels lose precision in (b)float16.
    """
    if spec.scale is not None:
        return keras.layers.Rescaling(spec.scale, name="preprocessing", dtype="float32")
    mean = _per_channel(spec.mean, channels)
    std = _per_channel(spec.std, channels)
    return keras.layers.Normalization(
        mean=list(mean), variance=[s * s for s in std], name="preprocessing", dtype="float32"
    )
def build_application(
    features: Callable[[Any], Any],
    *,
    arch: str,
    spec: InputSpec,
    include_top: bool = True,
    weights: str | os.PathLike | ResolvedWeights | None = None,
    input_tensor: Any = None,
    input_shape: Sequence[int | None] | None = None,
    pooling: str | None = None,
    classes: int | None = None,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str | None = None,
    head_dropout: float = 0.0,
    head_initializer: Any = "glorot_uniform",
    removed_blocks: Sequence[str] = (),
) -> keras.Model:
    """Wrap a family's feature extractor into an applications-style ``keras.Model``.

    Args:
        features: maps the (normalised) input tensor to the last feature map, before
            global pooling (a vector for fully-connected nets).
        arch: the registry name of this architecture (``"gresnet20"``); pretrained
            weights are looked up under it.
        spec: the family's input defaults and normalisation (``classes`` defaults to
            ``spec.classes``).
        include_top, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation, include_preprocessing, name: the applications
            arguments, as the public constructor received them.
        head_dropout: dropout between ``avg_pool`` and ``predictions`` (a recipe detail
            of some families, e.g. the 19-layer Highway net).
        removed_blocks: blocks pruned to their identity shortcut after building (a
            compressed net, see ``compressed_build``); the weights' own record of removed
            blocks (``keras_gated.compress``'s folders) is added when this is empty.

    The model is a ``GatedModel``: timm's ``pretrained_cfg``, ``num_classes``,
    ``reset_classifier``, ``forward_features``, ``forward_head`` and ``feature_info``
    are its own (``keras_gated.models.gated_model``).
    """
    classes = _checked_head(spec, include_top, pooling, classes, classifier_activation)
    arch, removed = _compressed(arch, removed_blocks)
    # Resolved by the public constructor already (then returned as it is), or here for a
    # direct call and for an architecture the constructor could not name.
    resolved = resolve_weights(arch, weights)
    removed = blocks_to_remove(arch, removed, resolved)
    shape = resolve_input_shape(spec, input_shape, input_tensor)
    check_input_channels(resolved, shape, spec)
    inputs, x = _model_inputs(shape, input_tensor)
    if include_preprocessing:
        x = preprocessing_layer(spec, shape[-1] if spec.spatial else 1)(x)
    head = HeadSpec(spec.spatial, classifier_activation, head_dropout, head_initializer)
    model = assemble(
        inputs, features(x), head,
        include_top=include_top, pooling=pooling, classes=classes, name=name or arch,
        pretrained_cfg=None if resolved is None else resolved.pretrained_cfg,
        class_names=None if resolved is None else resolved.class_names,
    )
    if removed:
        model = without_blocks(model, removed)
    if resolved is not None:
        build_reference = _reference_builder(
            features, arch=arch, spec=spec, shape=shape, removed=removed,
            classifier_activation=classifier_activation,
            include_preprocessing=include_preprocessing, head_dropout=head_dropout,
            head_initializer=head_initializer,
        )
        load_resolved(
            model,
            resolved,
            arch=arch,
            include_top=include_top,
            classes=classes,
            build_reference=build_reference,
            custom_input=input_tensor is not None,
            call=current_call(),
        )
    return model


def _checked_head(
    spec: InputSpec, include_top: bool, pooling: str | None, classes: int | None,
    classifier_activation: Any,
) -> int:
    """The head's number of classes (``spec.classes`` by default), once the settings and
    the applications arguments are checked."""
    check_data_format()
    warn_if_slow_mixed_precision()
    classes = spec.classes if classes is None else classes
    validate_pooling(pooling)
    validate_classifier_activation(classifier_activation)
    if include_top:
        validate_classes(classes)
    return classes


def _model_inputs(shape: tuple[int | None, ...], input_tensor: Any) -> tuple[Any, Any]:
    """``(the model's inputs, the tensor the network starts from)``: a new ``images``
    input of ``shape``, or the caller's ``input_tensor`` and its source inputs."""
    if input_tensor is None:
        inputs = keras.Input(shape=shape, name="images")
        return inputs, inputs
    return keras.utils.get_source_inputs(input_tensor), input_tensor


def _reference_builder(
    features: Callable[[Any], Any],
    *,
    arch: str,
    spec: InputSpec,
    shape: tuple[int | None, ...],
    removed: Sequence[str],
    **application: Any,
) -> Callable[[int | None], keras.Model]:
    """``build_reference(classes)``: the same architecture with the weights' own head
    (None: no head), and without the blocks a compressed net was saved without, which
    ``load_resolved`` loads the weights into when the model's head differs."""

    def build_reference(reference_classes: int | None) -> keras.Model:
        return build_application(
            features,
            arch=arch,
            spec=spec,
            include_top=reference_classes is not None,
            weights=None,
            input_tensor=None,
            input_shape=shape,
            pooling=None,
            classes=reference_classes or 1,
            name=f"{arch}_reference",
            removed_blocks=removed,
            **application,
        )

    return build_reference


def removed_blocks_of(resolved: ResolvedWeights | None) -> tuple[str, ...]:
    """The blocks a compressed net's weights were saved without (``keras_gated.compress``
    records them as the ``removed_blocks`` training argument); empty for any other."""
    if resolved is None:
        return ()
    return tuple((resolved.model_kwargs or {}).get("removed_blocks") or ())


def blocks_to_remove(
    arch: str, removed: Sequence[str], resolved: ResolvedWeights | None
) -> tuple[str, ...]:
    """The blocks the model built as ``arch`` goes without: ``removed`` (a compressed
    architecture's) or, when that is empty, those the weights were saved without. A
    compressed architecture whose weights record other removed blocks is refused."""
    recorded = removed_blocks_of(resolved)
    if not removed or not recorded or set(recorded) == set(removed):
        return tuple(removed or recorded)
    compressed = _COMPRESSED.get()
    source = compressed.source if compressed is not None else "its source"
    raise ValueError(
        f"The weights {resolved.source} were saved without the blocks {', '.join(recorded)} "
        f"but {arch} is {source} without {', '.join(removed)}: load them with "
        f"keras_gated.create_model({source!r}, weights={resolved.source!r}), which removes "
        f"the blocks they record, or give {arch} weights saved from {arch}."
    )


def without_blocks(model: keras.Model, removed: Sequence[str]) -> keras.Model:
    """``model`` with ``removed`` pruned to their identity shortcuts (the architecture
    of a compressed net), its pretrained config and class names kept."""
    pruned = prune(model, removed, name=model.name)
    pruned.pretrained_cfg = getattr(model, "pretrained_cfg", None)
    return pruned


def check_input_channels(
    resolved: ResolvedWeights | None, shape: tuple[int | None, ...], spec: InputSpec
) -> None:
    """Refuse, in one sentence saying how to adapt them, inputs whose channels differ
    from those the released weights were trained on (e.g. 28x28x1 images for a CIFAR
    net)."""
    if resolved is None or resolved.cfg is None or not spec.spatial:
        return
    trained = tuple(resolved.cfg.input_shape)
    if shape[-1] == trained[-1]:
        return
    weight_id = resolved.cfg.weight_id
    raise ValueError(
        f"The weights {weight_id} take {trained[0]}x{trained[1]}x{trained[-1]} images, not "
        f"{shape[-1]}-channel ones: build keras_gated.create_model({weight_id!r}, "
        f"pretrained=True, in_chans={shape[-1]}) (the stem adapted as timm's "
        "adapt_input_conv), or tile your images to "
        f"{trained[-1]} channels and pad them to {trained[0]}x{trained[1]} as "
        "`python -m training.finetune` does."
    )


def check_data_format() -> None:
    """Refuse a global ``channels_first`` setting: every layer here is channels-last."""
    data_format = keras.config.image_data_format()
    if data_format != "channels_last":
        raise ValueError(
            f"keras.config.image_data_format() is {data_format!r}, but keras-gated models "
            "are channels_last (inputs of shape (batch, height, width, channels)): call "
            "keras.config.set_image_data_format('channels_last') (or set "
            '"image_data_format" in ~/.keras/keras.json) before building one.'
        )


