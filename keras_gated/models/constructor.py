"""Constructor bookkeeping: the signature, argument checks and call record every public
constructor gets from ``public_constructor``.

A decorated constructor's signature spells out every argument with its default, an
unknown keyword names the constructor and lists its arguments, and the call is
remembered (``current_call``) so that a weights / model mismatch can name the call that
matches the weights. Its ``weights=`` value is resolved here, once, before anything is
built (``keras_gated.weights.resolve``): the arguments the weights were trained with
(``activation="tanh"``) become the defaults of the call, and the constructor receives
the resolved record.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import keras

from keras_gated.registry.models import list_model_entries
from keras_gated.weights.resolve import ResolvedWeights, is_tag, resolve_weights

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
            if current_call() is None:  # the outermost call: resolve its weights, record it
                kwargs, call = begin_call(constructor, func.__name__, signature, args, kwargs)
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


def begin_call(
    constructor: Callable, name: str, signature: inspect.Signature, args: tuple, kwargs: dict
) -> tuple[dict, ConstructorCall]:
    """The keyword arguments an outermost constructor call runs with (``weights=``
    resolved, the weights' training arguments as defaults), and its record."""
    given = kwargs.get("weights")
    resolved = resolve_for_call(constructor, signature, args, kwargs)
    if resolved is not None:
        bound = signature.bind_partial(*args, **kwargs).arguments
        trained = {key: value for key, value in resolved.model_kwargs.items()
                   if key not in bound and key not in kwargs
                   and key in constructor.valid_arguments}
        kwargs = {**trained, **kwargs, "weights": resolved}
    spread = {}
    for key, value in signature.bind_partial(*args, **kwargs).arguments.items():
        kind = signature.parameters[key].kind
        spread.update(value if kind is inspect.Parameter.VAR_KEYWORD else {key: value})
    if "weights" in spread:  # the call as written, not the resolved record
        spread["weights"] = given.source if isinstance(given, ResolvedWeights) else given
    return kwargs, ConstructorCall(name, spread, len(args))


def resolve_for_call(
    constructor: Callable, signature: inspect.Signature, args: tuple, kwargs: dict
) -> ResolvedWeights | None:
    """The ``weights=`` of a public constructor call, resolved once before anything is
    built; None for random weights, or for a tag of an architecture the call does not
    name among the registered ones (the builder, which knows it, resolves those).

    The architecture is the registered model whose arguments the call repeats
    (``GResNet(20)`` is ``gresnet20``): its weights' training arguments
    (``PretrainedCfg.model_kwargs``, a zoo folder's ``metrics.json``) become the call's
    defaults, so ``HighwayFC(50, weights="fashion_mnist")`` builds the net the weights
    belong to. Arguments the call sets win (a function-defining one that differs is then
    refused by the configuration check, naming the value the weights need)."""
    weights = kwargs.get("weights")
    if weights is None or isinstance(weights, ResolvedWeights):
        return weights
    if not isinstance(weights, (str, os.PathLike)):
        return None  # the builder refuses it in one sentence
    arch = registered_arch(constructor, signature, args, kwargs)
    if arch is None and is_tag(weights):
        return None
    return resolve_weights(arch, weights)


def registered_arch(
    constructor: Callable, signature: inspect.Signature, args: tuple, kwargs: dict
) -> str | None:
    """The registered name of the model a call builds (None if no entry matches)."""
    given = dict(signature.bind_partial(*args, **kwargs).arguments)
    for key, parameter in signature.parameters.items():
        if key not in given and parameter.default is not inspect.Parameter.empty:
            given[key] = parameter.default
    for entry in list_model_entries():
        if _wraps(entry.constructor, constructor) and all(
                given.get(key, FORWARDED_DEFAULTS.get(key)) == value
                for key, value in entry.kwargs.items()):
            return entry.name
    return None


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

