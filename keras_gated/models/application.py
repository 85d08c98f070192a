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

Public constructors are wrapped by ``public_constructor``: an unknown keyword names the
constructor and lists its arguments, and the call is remembered so that a weights /
model mismatch can name the call that matches the weights.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import keras

from keras_gated.weights import load_pretrained, validate_weights

# The arguments every applications-style constructor accepts.
APPLICATION_ARGUMENTS = (
    "include_top",
    "weights",
    "input_tensor",
    "input_shape",
    "pooling",
    "classes",
    "classifier_activation",
    "include_preprocessing",
    "name",
)


class ConstructorArgumentError(TypeError, ValueError):
    """An unknown keyword argument of a public constructor: a TypeError as Python's own,
    and a ValueError so that ``create_model`` and the command line report it as bad input."""


@dataclass(frozen=True)
class ConstructorCall:
    """A call of a public constructor, e.g. ``GResNet(20, gate='sigmoid')``."""

    name: str
    arguments: dict[str, Any]  # by parameter name, **kwargs spread out, in call order
    positional: int = 0  # how many of them were passed by position

    def render(self, **overrides: Any) -> str:
        """The call as source text, with ``overrides`` replacing or adding arguments."""
        arguments = {**self.arguments, **overrides}
        names = list(arguments)
        parts = [repr(arguments[key]) for key in names[: self.positional]]
        parts += [f"{key}={arguments[key]!r}" for key in names[self.positional :]]
        return f"{self.name}({', '.join(parts)})"


_CURRENT_CALL: contextvars.ContextVar[ConstructorCall | None] = contextvars.ContextVar(
    "keras_gated_constructor_call", default=None
)


def current_call() -> ConstructorCall | None:
    """The outermost public constructor call being built (None outside one)."""
    return _CURRENT_CALL.get()


def public_constructor(*forwarded: str) -> Callable[[Callable], Callable]:
    """Decorate a public constructor whose ``**kwargs`` accept ``forwarded`` names.

    The wrapped constructor refuses any other keyword with one sentence listing the valid
    arguments (``valid_arguments``), and records its call for ``current_call``.
    """

    def decorate(func: Callable[..., keras.Model]) -> Callable[..., keras.Model]:
        signature = inspect.signature(func)
        named = tuple(
            p.name
            for p in signature.parameters.values()
            if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        )
        valid = named + tuple(name for name in forwarded if name not in named)

        @functools.wraps(func)
        def constructor(*args: Any, **kwargs: Any) -> keras.Model:
            unknown = [key for key in kwargs if key not in valid]
            if unknown:
                raise ConstructorArgumentError(
                    f"{func.__name__}() got an unexpected keyword argument {unknown[0]!r}; "
                    f"its arguments are: {', '.join(valid)} (see "
                    f"help(keras_gated.{func.__name__}))."
                )
            call = None
            if current_call() is None:
                bound = signature.bind_partial(*args, **kwargs).arguments
                spread = {}
                for key, value in bound.items():
                    kind = signature.parameters[key].kind
                    spread.update(value if kind is inspect.Parameter.VAR_KEYWORD else {key: value})
                call = ConstructorCall(func.__name__, spread, len(args))
            token = _CURRENT_CALL.set(call or current_call())
            try:
                return func(*args, **kwargs)
            finally:
                _CURRENT_CALL.reset(token)

        constructor.valid_arguments = valid
        return constructor

    return decorate


def arguments_of(constructor: Callable, *without: str) -> tuple[str, ...]:
    """The valid arguments of a decorated constructor, less ``without`` (fixed ones)."""
    return tuple(a for a in constructor.valid_arguments if a not in without)

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
    check_data_format()
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
    weights_class_names: tuple[str, ...] | None = None
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

        weights_class_names = load_pretrained(
            model,
            arch=arch,
            weights=weights,
            include_top=include_top,
            classes=classes,
            build_reference=build_reference,
            custom_input=input_tensor is not None,
            call=current_call(),
        )
    model.class_names = class_names_of(include_top, classes, weights_class_names)
    return model


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


def class_names_of(
    include_top: bool, classes: int, weights_class_names: Sequence[str] | None
) -> tuple[str, ...] | None:
    """The class names of a built model: the weights' when the head is theirs, generic
    ``class<i>`` for a new head, None without a head."""
    if not include_top:
        return None
    if weights_class_names and len(weights_class_names) == classes:
        return tuple(weights_class_names)
    return tuple(f"class{i}" for i in range(classes))
