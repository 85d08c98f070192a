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
* Every model also has timm's ``pretrained_cfg``, ``num_classes``, ``reset_classifier``,
  ``forward_features`` and ``forward_head`` (``attach_timm_api``); they are Python
  attributes, lost by a ``keras.saving.load_model`` reload.
* Under a mixed-precision policy (``mixed_bfloat16``, ``mixed_float16``) the
  ``preprocessing`` layer and the ``predictions`` head (with its softmax) compute in
  float32, as keras-hub's do; the gates' k are float32 variables.

Public constructors are wrapped by ``public_constructor``: their signature spells out every
argument with its default, an unknown keyword names the constructor and lists its
arguments, and the call is remembered so that a weights / model mismatch can name the
call that matches the weights.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import inspect
import json
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import keras

from keras_gated.fast_path import GatedModel
from keras_gated.precision import warn_if_slow_mixed_precision
from keras_gated.pretrained.load import load_pretrained
from keras_gated.pretrained.sources import released_cfg, validate_weights

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


# Defaults of the forwarded arguments that ``public_constructor`` spells out in the
# signature it shows; ``classes`` depends on the family and is given by each constructor.
FORWARDED_DEFAULTS: dict[str, Any] = {
    "include_top": True,
    "weights": None,
    "input_tensor": None,
    "input_shape": None,
    "pooling": None,
    "classifier_activation": "softmax",
    "include_preprocessing": True,
    "name": None,
    "shortcut": "projection",
    "batch_norm": True,
    "k_init": 1.0,
}

APPLICATION_DOC = """
    Applications arguments (as ``keras.applications``):
        include_top: end in ``avg_pool`` + the ``predictions`` head (True) or return
            the features (False).
        weights: None (random), a released data tag (``"cifar10"``), a local
            ``.weights.h5`` file or save folder, or ``"hf://org/name[@revision]"``.
        input_tensor: a Keras tensor to build the model on.
        input_shape: (height, width, channels) without batch; None for the default.
        pooling: with ``include_top=False``: None (the feature map), ``"avg"`` or ``"max"``.
        classes: size of the head.
        classifier_activation: activation of the head (None for logits).
        include_preprocessing: normalise raw 0-255 pixels inside the model.
        name: the model name (default: the registry name).
"""


def public_signature(
    func: Callable, forwarded: Sequence[str], defaults: dict[str, Any]
) -> inspect.Signature:
    """``func``'s signature with ``**kwargs`` replaced by ``forwarded`` as keyword-only
    parameters, each with its default (``defaults``, then ``FORWARDED_DEFAULTS``)."""
    signature = inspect.signature(func)
    own = [
        p for p in signature.parameters.values()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    names = {p.name for p in own}
    extra = []
    for name in forwarded:
        if name in names:
            continue
        default = defaults.get(name, FORWARDED_DEFAULTS.get(name, inspect.Parameter.empty))
        if default is inspect.Parameter.empty:
            raise TypeError(f"{func.__name__}: no default given for forwarded {name!r}.")
        extra.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
    # Positional-or-keyword parameters after a keyword-only one are not allowed: the
    # forwarded ones come after every own parameter.
    return signature.replace(parameters=own + extra)


def defaults_of(constructor: Callable) -> dict[str, Any]:
    """{argument: default} of a (decorated) constructor's shown signature."""
    return {
        p.name: p.default
        for p in inspect.signature(constructor).parameters.values()
        if p.default is not inspect.Parameter.empty
    }


def public_constructor(
    *forwarded: str, defaults: dict[str, Any] | None = None
) -> Callable[[Callable], Callable]:
    """Decorate a public constructor whose ``**kwargs`` accept ``forwarded`` names.

    The wrapped constructor refuses any other keyword with one sentence listing the valid
    arguments (``valid_arguments``), and records its call for ``current_call``. Its
    ``inspect.signature`` (and ``help``) shows every forwarded argument as a keyword-only
    parameter with its default (``defaults``, then ``FORWARDED_DEFAULTS``), and its
    docstring describes the applications arguments.
    """
    defaults = dict(defaults or {})

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
                kwargs = {**released_defaults(constructor, signature, args, kwargs), **kwargs}
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
        constructor.__signature__ = public_signature(func, forwarded, defaults)
        if "include_top" in valid and "include_top:" not in (func.__doc__ or ""):
            constructor.__doc__ = (func.__doc__ or "").rstrip() + "\n" + APPLICATION_DOC
        return constructor

    return decorate


def released_defaults(
    constructor: Callable, signature: inspect.Signature, args: tuple, kwargs: dict
) -> dict[str, Any]:
    """The constructor arguments that released weights were trained with
    (``PretrainedCfg.model_kwargs``, e.g. ``activation="tanh"``), for a call that loads
    them by tag (``weights="fashion_mnist"``) or from a zoo folder (its ``metrics.json``
    records the training run's ``model_args``) and does not set those arguments itself:
    ``HighwayFC(50, weights="fashion_mnist")`` builds the net the weights belong to.
    Arguments the call sets win (a function-defining one that differs is then refused
    by the configuration check, naming the value the weights need)."""
    from keras_gated.pretrained.zoo_folder import METRICS_FILE

    weights = kwargs.get("weights")
    bound = signature.bind_partial(*args, **kwargs)
    if isinstance(weights, (str, os.PathLike)) and os.path.isfile(
            os.path.join(weights, METRICS_FILE)):  # a zoo folder: its training run's arguments
        with open(os.path.join(weights, METRICS_FILE)) as f:
            trained_with = json.load(f).get("model_args") or {}
        return {key: value for key, value in trained_with.items()
                if key not in bound.arguments and key in constructor.valid_arguments}
    if not isinstance(weights, str) or not weights or any(c in weights for c in "/\\:."):
        return {}
    from keras_gated.pretrained import get_pretrained_cfg
    from keras_gated.registry import list_model_entries

    given = dict(bound.arguments)
    for key, parameter in signature.parameters.items():
        if key not in given and parameter.default is not inspect.Parameter.empty:
            given[key] = parameter.default
    for entry in list_model_entries():
        if not _wraps(entry.constructor, constructor):
            continue
        if all(given.get(key, FORWARDED_DEFAULTS.get(key)) == value
               for key, value in entry.kwargs.items()):
            try:
                cfg = get_pretrained_cfg(f"{entry.name}.{weights}")
            except ValueError:
                return {}
            return {key: value for key, value in cfg.model_kwargs.items()
                    if key not in bound.arguments and key not in kwargs}
    return {}


def _wraps(registered: Callable, constructor: Callable) -> bool:
    """Whether ``registered`` is ``constructor`` or a decorator's wrapper of it."""
    while registered is not None:
        if registered is constructor:
            return True
        registered = getattr(registered, "__wrapped__", None)
    return False


def arguments_of(constructor: Callable, *without: str) -> tuple[str, ...]:
    """The valid arguments of a decorated constructor, less ``without`` (fixed ones)."""
    return tuple(a for a in constructor.valid_arguments if a not in without)


def renamed_arguments(**renamed: str) -> Callable[[Callable], Callable]:
    """Accept the former keyword names of a public constructor's arguments
    (``old="new"``), with a DeprecationWarning naming the new one.

    Apply it above ``public_constructor``: the signature shown and the call recorded are
    the new names'.
    """

    def decorate(constructor: Callable[..., keras.Model]) -> Callable[..., keras.Model]:
        @functools.wraps(constructor)
        def wrapper(*args: Any, **kwargs: Any) -> keras.Model:
            for old, new in renamed.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise ConstructorArgumentError(
                        f"{constructor.__name__}() got both `{old}` and `{new}`: `{old}` is "
                        f"the former name of `{new}`; pass only `{new}`."
                    )
                warnings.warn(
                    f"{constructor.__name__}({old}=...) is deprecated: the argument is now "
                    f"called `{new}` ({constructor.__name__}({new}=...)).",
                    DeprecationWarning,
                    stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
            return constructor(*args, **kwargs)

        return wrapper

    return decorate


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


@dataclass(frozen=True)
class HeadSpec:
    """How a family pools its features and classifies them (kept for ``reset_classifier``)."""

    spatial: bool  # False: the features are already a vector (fully-connected nets)
    classifier_activation: Any = "softmax"
    head_dropout: float = 0.0
    head_initializer: Any = "glorot_uniform"

    def pooling_layer(self, pooling: str = "avg") -> keras.layers.Layer:
        """A fresh ``avg_pool`` / ``max_pool`` layer (an identity for vectors)."""
        name = f"{pooling}_pool"
        if not self.spatial:
            return keras.layers.Identity(name=name)
        if pooling == "max":
            return keras.layers.GlobalMaxPooling2D(name=name)
        return keras.layers.GlobalAveragePooling2D(name=name)

    def classifier(self, classes: int) -> keras.layers.Layer:
        """A fresh ``predictions`` head. It computes in float32, softmax included, also
        under a mixed-precision policy (as keras-hub's heads), so probabilities sum to 1."""
        return keras.layers.Dense(
            classes,
            activation=self.classifier_activation,
            kernel_initializer=self.head_initializer,
            dtype="float32",
            name="predictions",
        )


def assemble(
    inputs: Any,
    feature_map: Any,
    head: HeadSpec,
    *,
    include_top: bool,
    pooling: str | None,
    classes: int,
    name: str,
) -> keras.Model:
    """The model from ``inputs`` to ``feature_map`` followed by the requested top."""
    x = feature_map
    if include_top:
        x = head.pooling_layer("avg")(x)
        if head.head_dropout:
            x = keras.layers.Dropout(head.head_dropout, name="head_dropout")(x)
        x = head.classifier(classes)(x)
    elif pooling is not None:
        x = head.pooling_layer(pooling)(x)
    return GatedModel(inputs, x, name=name)


def build_application(
    features: Callable[[Any], Any],
    *,
    arch: str,
    spec: InputSpec,
    include_top: bool = True,
    weights: str | None = None,
    input_tensor: Any = None,
    input_shape: Sequence[int | None] | None = None,
    pooling: str | None = None,
    classes: int | None = None,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str | None = None,
    head_dropout: float = 0.0,
    head_initializer: Any = "glorot_uniform",
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

    The model also gets timm's conveniences (see ``attach_timm_api``): ``pretrained_cfg``,
    ``num_classes``, ``reset_classifier``, ``forward_features`` and ``forward_head``.
    """
    check_data_format()
    warn_if_slow_mixed_precision()
    classes = spec.classes if classes is None else classes
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
    feature_map = features(x)
    head = HeadSpec(spec.spatial, classifier_activation, head_dropout, head_initializer)
    model = assemble(
        inputs, feature_map, head,
        include_top=include_top, pooling=pooling, classes=classes, name=name or arch,
    )
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
    attach_timm_api(
        model, feature_map, head,
        num_classes=classes if include_top else 0,
        pretrained_cfg=pretrained_cfg_of(arch, weights),
    )
    return model


# ------------------------------------------------------------ timm's model conveniences


def pretrained_cfg_of(arch: str, weights: Any) -> dict | None:
    """The config dict of ``weights`` for ``arch``: the registered ``PretrainedCfg`` of a
    data tag as a dict, ``{"file": ...}`` for a file, folder or ``hf://`` reference, None
    for random weights."""
    if weights is None:
        return None
    weights = os.fspath(weights)
    cfg = released_cfg(arch, weights)
    return {"file": weights} if cfg is None else dataclasses.asdict(cfg)


def attach_timm_api(
    model: keras.Model,
    feature_map: Any,
    head: HeadSpec,
    *,
    num_classes: int,
    pretrained_cfg: dict | None,
) -> keras.Model:
    """Give ``model`` timm's conveniences, as plain attributes:

    * ``pretrained_cfg``: the config dict of its weights (None for random weights);
    * ``num_classes``: the size of its head (0 without one);
    * ``reset_classifier(num_classes)``: a **new** model on the same backbone layers
      (weights shared, not copied) with a fresh ``num_classes`` head; 0 gives the pooled
      features. Keras graphs are immutable, so use ``model = model.reset_classifier(5)``;
    * ``forward_features(x)``: the last feature map, before pooling;
    * ``forward_head(x, pre_logits=False)``: pooling and head on a feature map
      (``pre_logits=True``: the pooled features); ``forward_head(forward_features(x))``
      equals ``model(x)``.

    They are Python attributes; the model's config keeps what rebuilds them, so a model
    reloaded with ``keras.saving.load_model`` has them too.
    """
    inputs = model.inputs[0] if len(model.inputs) == 1 else model.inputs
    layer_names = {layer.name for layer in model.layers}
    extractor: list[keras.Model] = []  # built on first use

    def forward_features(x: Any, training: bool | None = False) -> Any:
        """The last feature map of ``x`` (raw pixels), before global pooling."""
        if not extractor:
            extractor.append(keras.Model(inputs, feature_map, name=f"{model.name}_forward_features"))
        return extractor[0](x, training=training)

    def forward_head(x: Any, pre_logits: bool = False, training: bool | None = False) -> Any:
        """Global pooling and the head on a feature map; ``pre_logits``: pooled only."""
        pooling = "max" if "max_pool" in layer_names and "avg_pool" not in layer_names else "avg"
        pool_name = f"{pooling}_pool"
        pool = model.get_layer(pool_name) if pool_name in layer_names else head.pooling_layer(pooling)
        x = pool(x)
        if "head_dropout" in layer_names:
            x = model.get_layer("head_dropout")(x, training=training)
        if pre_logits or "predictions" not in layer_names:
            return x
        return model.get_layer("predictions")(x)

    def reset_classifier(num_classes: int) -> keras.Model:
        """A new model: this backbone (shared layers) with a fresh ``num_classes`` head,
        or the pooled features for 0."""
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 0:
            raise ValueError(f"`num_classes` must be an integer >= 0, got {num_classes!r}.")
        new = assemble(
            inputs, feature_map, head,
            include_top=num_classes > 0, pooling="avg", classes=num_classes, name=model.name,
        )
        new.class_names = class_names_of(num_classes > 0, num_classes, None)
        return attach_timm_api(
            new, feature_map, head, num_classes=num_classes, pretrained_cfg=pretrained_cfg
        )

    # object.__setattr__: plain values, not ones wrapped by Keras' attribute tracking.
    object.__setattr__(model, "pretrained_cfg", pretrained_cfg)
    model.num_classes = num_classes
    model.forward_features = forward_features
    model.forward_head = forward_head
    model.reset_classifier = reset_classifier

    def extras() -> dict:
        """What ``restore_timm_api`` needs, for the saved config (serialised only when the
        model is saved: Keras's serialisation imports TensorFlow on every backend)."""
        names = getattr(model, "class_names", None)
        return {
            "num_classes": num_classes,
            "pretrained_cfg": pretrained_cfg,
            "class_names": list(names) if names else None,
            "feature_layer": feature_map._keras_history[0].name,
            "head": {
                "spatial": head.spatial,
                "classifier_activation": keras.activations.serialize(
                    keras.activations.get(head.classifier_activation)),
                "head_dropout": head.head_dropout,
                "head_initializer": keras.initializers.serialize(
                    keras.initializers.get(head.head_initializer)),
            },
        }

    object.__setattr__(model, "_keras_gated_extras", extras)
    return model


def restore_timm_api(model: keras.Model, extras: dict) -> None:
    """Give a model reloaded by ``keras.saving.load_model`` the attributes
    ``attach_timm_api`` gave the original (saved in its config under ``"keras_gated"``)."""
    saved_head = extras["head"]
    head = HeadSpec(
        spatial=saved_head["spatial"],
        classifier_activation=keras.activations.deserialize(saved_head["classifier_activation"]),
        head_dropout=saved_head["head_dropout"],
        head_initializer=keras.initializers.deserialize(saved_head["head_initializer"]),
    )
    names = extras["class_names"]
    model.class_names = None if names is None else tuple(names)
    feature_map = model.get_layer(extras["feature_layer"]).output
    attach_timm_api(model, feature_map, head, num_classes=extras["num_classes"],
                    pretrained_cfg=extras["pretrained_cfg"])


GatedModel.restore_extras = restore_timm_api


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
