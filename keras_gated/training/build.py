"""What a training run is built from, in one place: its settings (``RunSettings``), the
recipe as the run uses it (``run_recipe``) and the compiled model with its training data
(``build_run``). ``python -m training.train``, ``python -m training.finetune`` and the
paper experiments (``experiments/``) all build through ``build_run``, so a run that one of
them starts is the run the others would start with the same settings and seed.

    >>> from keras_gated.training.build import RunSettings, build_run
    >>> run = build_run(RunSettings(model="gresnetfc10", dataset="fashion_mnist", epochs=1))
    >>> x, y = next(iter(run.batches))
    >>> run.model.train_on_batch(x, y)

A run's settings are also what ``fingerprint.json`` records: ``RunSettings.from_fingerprint``
reads them back.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from keras_gated.registry import get_model_entry
from keras_gated.training.recipes import RECIPES, get_recipe

FIELDS_IN_FINGERPRINT = ("model", "dataset", "epochs", "batch_size", "seed", "model_args",
                         "validation_split", "lr", "clip_norm", "train_examples",
                         "validation_seeded")


@dataclass(frozen=True)
class RunSettings:
    """The settings that make a run, as ``python -m training.train`` takes them.

    ``recipe`` names a recipe of ``keras_gated.training.recipes`` (default: the model's own);
    ``epochs`` scales its schedule; ``batch_size``, ``lr`` (base learning rate) and
    ``clip_norm`` (global gradient norm) replace the recipe's values when given;
    ``model_args`` are extra constructor arguments of the model; ``validation_split``
    holds out the last fraction of the training split; ``train_examples`` trains on that
    many training examples drawn at random with ``seed``; ``data_engine`` picks the input
    pipeline's engine (``keras_gated.training.pipeline.ENGINES``; None: the default).
    """

    model: str
    dataset: str
    recipe: str | None = None
    epochs: int | None = None
    batch_size: int | None = None
    lr: float | None = None
    clip_norm: float | None = None
    model_args: Mapping[str, Any] = field(default_factory=dict)
    validation_split: float | None = None
    seed: int = 0
    train_examples: int | None = None
    data_engine: str | None = None
    validation_seeded: bool = False  # hold out a random fraction (seed), not the last one

    @classmethod
    def from_fingerprint(cls, fingerprint: Mapping[str, Any]) -> RunSettings:
        """The settings a run's ``fingerprint.json`` records (the recipe by its name; the
        recorded epochs and batch size are those the run used)."""
        values = {key: fingerprint[key] for key in FIELDS_IN_FINGERPRINT if key in fingerprint}
        recipe = fingerprint.get("recipe")
        values["recipe"] = recipe.get("name") if isinstance(recipe, Mapping) else recipe
        values["model_args"] = dict(values.get("model_args") or {})
        return cls(**values)


def default_recipe_name(entry) -> str:
    """The recipe a model trains with when none is named: its registry entry's."""
    if entry.default_recipe is None:
        raise ValueError(
            f"{entry.name} has no default recipe; pass --recipe ({', '.join(RECIPES)})."
        )
    return entry.default_recipe


def run_recipe(settings: RunSettings):
    """The recipe as the run uses it: the named recipe (or the model's), its schedule scaled
    to ``settings.epochs``, with the run's batch size, ``lr`` and ``clip_norm``."""
    name = settings.recipe
    if name is None:
        name = default_recipe_name(get_model_entry(settings.model))
    recipe = get_recipe(name).with_epochs(settings.epochs)
    recipe = dataclasses.replace(recipe, batch_size=settings.batch_size or recipe.batch_size)
    if settings.lr is not None:
        recipe = dataclasses.replace(recipe, learning_rate=settings.lr)
    if settings.clip_norm is not None:
        recipe = dataclasses.replace(recipe, gradient_clip_norm=settings.clip_norm)
    return recipe


def model_kwargs(entry, recipe, info) -> dict:
    """The constructor arguments a run gives a registered model for its data: the data's
    classes and image shape, and the recipe's dropout where the model takes one."""
    kwargs = {"classes": info.num_classes, "input_shape": info.image_shape}
    if recipe.dropout is not None and entry.supports_dropout:
        kwargs["dropout"] = recipe.dropout
    return kwargs


def split_validation(train_ds, train_info, fraction_held_out: float | None,
                     seed: int | None = None):
    """``(train, train_info, val, val_info)``: the last ``fraction_held_out`` of the
    training split (in the data set's fixed order; with ``seed``, in an order shuffled
    once with that seed, the same on every pass) held out as validation data; without a
    fraction, the training split unchanged and ``(None, None)``."""
    if fraction_held_out is None:
        return train_ds, train_info, None, None
    total = train_info.num_examples
    held_out = int(round(total * fraction_held_out))
    kept = total - held_out
    if held_out < 1 or kept < 1:
        raise ValueError(f"--validation-split {fraction_held_out} of {total} training examples "
                         f"leaves {kept} for training and {held_out} for validation: both must "
                         "be at least 1.")
    if seed is None:
        note = f"train[{kept}:{total}] (the last {fraction_held_out:g} of the training split, held out)"
    else:
        note = (f"{held_out} training examples held out at random (fraction "
                f"{fraction_held_out:g}, seed {seed})")
        from keras_gated.training.pipeline import shuffled_once  # imports Keras: see build_run

        train_ds = shuffled_once(train_ds, total, seed)
    val_info = dataclasses.replace(train_info, num_examples=held_out, note=note)
    train_info = dataclasses.replace(train_info, num_examples=kept)
    return train_ds.take(kept), train_info, train_ds.skip(kept), val_info


@dataclass
class BuiltRun:
    """What ``build_run`` gives: the compiled ``model``; ``recipe`` as the run uses it; the
    augmented, shuffled training ``batches``; the training data's ``train_info``; the
    held-out ``val_ds``/``val_info`` (``None`` without ``validation_split``); the
    constructor arguments the data gave (``model_kwargs``, recorded in the fingerprint);
    the number of weight-decayed variables (``decayed``); ``adapted``: whether the images
    were tiled/padded to the model's input shape."""

    model: Any
    recipe: Any
    batches: Any
    train_info: Any
    val_ds: Any
    val_info: Any
    model_kwargs: dict
    decayed: int
    steps_per_epoch: int
    adapted: bool


def build_run(settings: RunSettings, *, make_model: Callable[[Any], Any] | None = None,
              scope=None, train_split: tuple[Any, Any] | None = None) -> BuiltRun:
    """Build the run ``settings`` describe: seed, training data, model, weight decay,
    optimiser and the training stream, in the order ``python -m training.train`` does.

    ``make_model(train_info)`` builds another network than the registered model with
    ``model_kwargs`` and ``settings.model_args`` (fine-tuning builds a pretrained backbone
    with a new head); images that do not match its input shape are adapted to it.
    ``scope`` (a context manager, e.g. a distribution strategy's) encloses building and
    compiling the model. ``train_split``: the ``(source, info)`` that
    ``keras_gated.training.pipeline.load_split`` gave for the training split, when the caller has read it
    already (it is then not read again).
    """
    import contextlib

    # Keras and the modules that import it, here: the command lines read this module
    # before they choose the backend, which must be set before Keras is imported.
    import keras

    from keras_gated.training.losses import recipe_loss
    from keras_gated.training.optimizers import apply_weight_decay, make_optimizer
    from keras_gated.training.pipeline import (
        adapt_source, load_split, make_pipeline, normalisation_mean, random_subset,
    )

    recipe = run_recipe(settings)
    keras.utils.set_random_seed(settings.seed)
    train_ds, train_info = train_split or load_split(settings.dataset, "train", settings.data_engine)
    if settings.train_examples is not None:
        if settings.train_examples > train_info.num_examples:
            raise ValueError(f"--train-examples {settings.train_examples} is more than the "
                             f"{train_info.num_examples} training examples of {settings.dataset}.")
        train_ds = random_subset(train_ds, train_info.num_examples, settings.train_examples,
                                 settings.seed)
        train_info = dataclasses.replace(train_info, num_examples=settings.train_examples)
    train_ds, train_info, val_ds, val_info = split_validation(
        train_ds, train_info, settings.validation_split,
        seed=settings.seed if settings.validation_seeded else None)
    kwargs: dict = {}
    if make_model is None:
        entry = get_model_entry(settings.model)
        kwargs = model_kwargs(entry, recipe, train_info)

        def make_model(_info):
            return entry.build(**{**kwargs, **settings.model_args})

    steps_per_epoch = math.ceil(train_info.num_examples / recipe.batch_size)
    with scope if scope is not None else contextlib.nullcontext():
        model = make_model(train_info)
        decayed = apply_weight_decay(model, recipe)
        model.compile(optimizer=make_optimizer(recipe, steps_per_epoch),
                      loss=recipe_loss(recipe), metrics=["accuracy"])
    input_shape = tuple(model.inputs[0].shape[1:])
    adapted = tuple(train_info.image_shape) != input_shape
    if adapted:
        train_ds = adapt_source(train_ds, input_shape)
        if val_ds is not None:
            val_ds = adapt_source(val_ds, input_shape)
    batches = make_pipeline(train_ds, recipe, training=True, batch_size=recipe.batch_size,
                            num_examples=train_info.num_examples, seed=settings.seed,
                            pad_fill=normalisation_mean(model))
    return BuiltRun(model=model, recipe=recipe, batches=batches, train_info=train_info,
                    val_ds=val_ds, val_info=val_info, model_kwargs=kwargs, decayed=decayed,
                    steps_per_epoch=steps_per_epoch, adapted=adapted)
