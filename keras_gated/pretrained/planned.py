"""Planned weights: configs whose ``plan`` says how to train them.

Asking for them raises ``PlannedWeightsError`` with the exact training command, the
recipe, the paper's number to expect and a GPU-hours figure computed from the model's
counted MACs (labelled as an estimate). No random or borrowed weight file stands in.
"""

from __future__ import annotations

from keras_gated.pretrained.config import PretrainedCfg


def training_command(cfg: PretrainedCfg) -> str:
    """The ``training.train`` command that trains a planned config's weights: on the JAX
    backend (the TensorFlow-free path) for ``dataparallel``, the plans' default, on
    TensorFlow for its ``tf.distribute`` strategies."""
    plan = cfg.plan
    backend = "jax" if plan.strategy in ("dataparallel", "default") else "tensorflow"
    return (
        f"KERAS_BACKEND={backend} python -m training.train --model {cfg.arch} "
        f"--dataset {cfg.tag} --recipe {plan.recipe} --epochs {plan.epochs} "
        f"--strategy {plan.strategy} --out runs/{cfg.weight_id}"
    )


def compute_estimate(cfg: PretrainedCfg):
    """The ``keras_gated.flops.ComputeEstimate`` of training a planned config's weights."""
    from keras_gated.flops import ComputeEstimate

    return ComputeEstimate(cfg.plan.forward_macs, cfg.plan.train_images, cfg.plan.epochs)


def planned_message(cfg: PretrainedCfg) -> str:
    """What ``PlannedWeightsError`` says: the command, recipe, expected number, compute."""
    from keras_gated.recipes import get_recipe

    plan = cfg.plan
    recipe = get_recipe(plan.recipe).with_epochs(plan.epochs)
    lines = [
        f"Weights {cfg.weight_id!r} are planned, not released: training them needs a "
        "GPU/TPU host. No stand-in weights are shipped.",
        f"  train them with: {training_command(cfg)}",
        f"  recipe: {recipe.describe()}",
        f"  expect: {plan.expect}",
        f"  compute: {compute_estimate(cfg).describe()}",
    ]
    if plan.missing:
        lines.append(f"  missing first: {plan.missing}")
    lines.append(
        f"  then: `python -m training.release runs/{cfg.weight_id} --register` and "
        f"`keras-gated publish zoo/{cfg.weight_id} --pin-official`."
    )
    return "\n".join(lines)
