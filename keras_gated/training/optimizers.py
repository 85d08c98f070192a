"""Optimiser, learning-rate schedule and weight decay of a recipe, built on Keras."""

from __future__ import annotations

import keras

from keras_gated.gating import gate_variables
from keras_gated.training.recipes import Recipe
from keras_gated.training.schedules import WarmupLinearDecay


def _is_bias(variable) -> bool:
    return variable.path.rsplit("/", 1)[-1] in ("bias", "beta")


def decayed_variables(model: keras.Model, recipe: Recipe) -> list:
    """The variables a recipe decays: all, or all but biases; k only if the recipe says so."""
    gates = {id(v) for v in gate_variables(model)}
    chosen = []
    for variable in model.trainable_weights:
        if id(variable) in gates:
            if recipe.decay_gates:
                chosen.append(variable)
            continue
        if recipe.decay == "weights" and _is_bias(variable):
            continue
        chosen.append(variable)
    return chosen


def apply_weight_decay(model: keras.Model, recipe: Recipe) -> int:
    """Attach ``L2(λ/2)`` to every decayed variable (Torch λ·w gradient); returns how many.

    Keras adds the regularisers' sum to the training loss: d/dw (λ/2)·w² = λ·w, the
    gradient term Torch's ``weight_decay=λ`` adds inside momentum SGD.
    """
    if recipe.decay not in ("all", "weights"):
        raise ValueError(f"Unknown recipe `decay`={recipe.decay!r}. Allowed: all, weights.")
    if not recipe.weight_decay:
        return 0
    variables = decayed_variables(model, recipe)
    for variable in variables:
        variable.regularizer = keras.regularizers.L2(recipe.weight_decay / 2)
    return len(variables)


def learning_rate_schedule(recipe: Recipe, steps_per_epoch: int):
    """The recipe's learning rate as a Keras schedule over optimizer steps."""
    if recipe.lr_schedule == "warmup_linear":
        return WarmupLinearDecay(recipe.learning_rate, recipe.epochs * steps_per_epoch, recipe.warmup)
    if recipe.lr_schedule != "step":
        raise ValueError(
            f"Unknown recipe `lr_schedule`={recipe.lr_schedule!r}. Allowed: step, warmup_linear."
        )
    if recipe.lr_epoch_decay != 1.0:
        if recipe.lr_boundaries:
            raise ValueError(f"Recipe {recipe.name!r} has both step boundaries and an epoch decay; pick one.")
        # lr · decay^epoch, constant within an epoch.
        return keras.optimizers.schedules.ExponentialDecay(
            recipe.learning_rate, decay_steps=steps_per_epoch, decay_rate=recipe.lr_epoch_decay,
            staircase=True,
        )
    if not recipe.lr_boundaries:
        return recipe.learning_rate
    # Keras passes the 0-based iteration count and PiecewiseConstantDecay switches after
    # `step > boundary`: boundary b - 1 makes step b (the first of epoch b/steps) use
    # the new rate.
    boundaries = [
        int(round(f * recipe.epochs * steps_per_epoch)) - 1 for f in recipe.lr_boundaries
    ]
    values = [recipe.learning_rate * recipe.lr_decay**i for i in range(len(boundaries) + 1)]
    return keras.optimizers.schedules.PiecewiseConstantDecay(boundaries, values)


def make_optimizer(recipe: Recipe, steps_per_epoch: int) -> keras.optimizers.Optimizer:
    """The recipe's optimiser over its schedule.

    With ``gradient_clip_norm`` c the whole gradient g (all variables together) is
    rescaled to g·min(1, c/‖g‖₂) before the update, as ``torch.nn.utils.clip_grad_norm_``
    does (Keras's ``global_clipnorm``). Weight decay here is an L2 term of the loss, so
    its gradient is clipped with the rest (Torch's ``SGD(weight_decay=λ)`` adds λ·w after
    the clipping).
    """
    lr = learning_rate_schedule(recipe, steps_per_epoch)
    if recipe.optimizer == "sgd":
        return keras.optimizers.SGD(lr, momentum=recipe.momentum, nesterov=recipe.nesterov,
                                    global_clipnorm=recipe.gradient_clip_norm)
    if recipe.optimizer == "nadam":
        return keras.optimizers.Nadam(lr, beta_1=recipe.beta_1, global_clipnorm=recipe.gradient_clip_norm)
    raise ValueError(f"Unknown recipe `optimizer`={recipe.optimizer!r}. Allowed: sgd, nadam.")
