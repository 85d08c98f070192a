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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import keras

from keras_gated.weights import load_pretrained, validate_weights

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


CIFAR_INPUT = InputSpec((32, 32, 3), 8, mean=CIFAR_MEAN, std=CIFAR_STD)
IMAGENET_INPUT = InputSpec((224, 224, 3), 32, mean=IMAGENET_MEAN, std=IMAGENET_STD)
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
    else:
        shape = tuple(input_shape)
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


def _per_channel(values: tuple[float, ...], channels: int) -> tuple[float, ...]:
    if len(values) == channels:
        return values
    mean = sum(values) / len(values)  # another channel count: one shared statistic
    return (mean,) * channels


def preprocessing_layer(spec: InputSpec, channels: int) -> keras.layers.Layer:
    """The in-model normalisation of raw 0-255 pixels that matches ``spec``."""
    if spec.scale is not None:
        return keras.layers.Rescaling(spec.scale, name="preprocessing")
    mean = _per_channel(spec.mean, channels)
    std = _per_channel(spec.std, channels)
    return keras.layers.Normalization(
        mean=list(mean), variance=[s * s for s in std], name="preprocessing"
    )


def build_application(
    features: Callable[[Any], Any],
    *,
    arch: str,
    spec: InputSpec,
    include_top: bool,
    weights: str | None,
    input_tensor: Any,
    input_shape: Sequence[int | None] | None,
    pooling: str | None,
    classes: int,
    classifier_activation: Any,
    include_preprocessing: bool,
    name: str | None,
    head_dropout: float = 0.0,
    head_initializer: Any = "glorot_uniform",
) -> keras.Model:
    """Wrap a family's feature extractor into an applications-style ``keras.Model``.

    Args:
        features: maps the (normalised) input tensor to the last feature map, before
            global pooling (a vector for fully-connected nets).
        arch: the registry name of this architecture (``"gresnet20"``); pretrained
            weights are looked up under it.
        spec: the family's input defaults and normalisation.
        head_dropout: dropout between ``avg_pool`` and ``predictions`` (a recipe detail
            of some families, e.g. the 19-layer Highway net).
    """
    validate_pooling(pooling)
    validate_classifier_activation(classifier_activation)
    if include_top:
        validate_classes(classes)
    validate_weights(arch, weights)
    shape = resolve_input_shape(spec, input_shape, input_tensor)

    if input_tensor is None:
        inputs = keras.Input(shape=shape, name="images")
        x = inputs
    else:
        inputs = keras.utils.get_source_inputs(input_tensor)
        x = input_tensor

    if include_preprocessing:
        x = preprocessing_layer(spec, shape[-1] if spec.spatial else 1)(x)
    x = features(x)

    if spec.spatial:
        average = keras.layers.GlobalAveragePooling2D(name="avg_pool")
        maximum = keras.layers.GlobalMaxPooling2D(name="max_pool")
    else:  # a fully-connected net's features are already a vector
        average = keras.layers.Identity(name="avg_pool")
        maximum = keras.layers.Identity(name="max_pool")

    if include_top:
        x = average(x)
        if head_dropout:
            x = keras.layers.Dropout(head_dropout, name="head_dropout")(x)
        x = keras.layers.Dense(
            classes,
            activation=classifier_activation,
            kernel_initializer=head_initializer,
            name="predictions",
        )(x)
    elif pooling == "avg":
        x = average(x)
    elif pooling == "max":
        x = maximum(x)

    model = keras.Model(inputs, x, name=name or arch)
    if weights is not None:

        def build_reference(reference_classes: int | None) -> keras.Model:
            # The same architecture with the weights' own head (None: no head).
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
                classifier_activation=classifier_activation,
                include_preprocessing=include_preprocessing,
                name=f"{arch}_reference",
                head_dropout=head_dropout,
                head_initializer=head_initializer,
            )

        load_pretrained(
            model,
            arch=arch,
            weights=weights,
            include_top=include_top,
            classes=classes,
            build_reference=build_reference,
            custom_input=input_tensor is not None,
        )
    return model
