"""Planned weights: configs whose ``plan`` says how to train them.

Asking for them raises ``PlannedWeightsError`` with the exact training command, the
recipe's name and epochs (``keras-gated info WEIGHT_ID`` describes the recipe: the recipes
live with training, which this package never imports), the paper's number to expect, a
GPU-hours figure computed from the model's
counted MACs (labelled as an estimate) and the released weights of the same family. No
random or borrowed weight file stands in.
"""

from __future__ import annotations

from keras_gated.flops import ComputeEstimate
from keras_gated.weights.config import PlannedWeightsError, PretrainedCfg
from keras_gated.weights.registered import family_of, list_pretrained


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


def compute_estimate(cfg: PretrainedCfg) -> ComputeEstimate:
    """The ``keras_gated.flops.ComputeEstimate`` of training a planned config's weights."""
    return ComputeEstimate(cfg.plan.forward_macs, cfg.plan.train_images, cfg.plan.epochs)


def released_relatives(cfg: PretrainedCfg) -> str:
    """One sentence naming the released weight ids of the family of ``cfg``'s model; where
    the family has none, those released for the same data set."""
    family = family_of(cfg.arch)
    released = list_pretrained()
    same_family = [w for w in released if family_of(w.split(".", 1)[0]) == family]
    if same_family:
        return f"Released weights of its family ({family}): {', '.join(same_family)}."
    same_data = [w for w in released if w.split(".", 1)[1] == cfg.tag]
    instead = (f"released for {cfg.tag}: {', '.join(same_data)}." if same_data
               else "`keras-gated list --pretrained` lists the released weights.")
    return f"No weights of its family ({family}) are released yet; {instead}"


def planned_summary(cfg: PretrainedCfg) -> str:
    """``planned_message`` in one short paragraph, for a command line."""
    return (
        f"Weights {cfg.weight_id!r} are planned, not released: training them needs a GPU/TPU "
        f"host (`keras-gated info {cfg.weight_id}` prints the command that trains them). "
        f"{released_relatives(cfg)}"
    )


def planned_error(cfg: PretrainedCfg) -> PlannedWeightsError:
    """The ``PlannedWeightsError`` for asking for a planned config's weights."""
    return PlannedWeightsError(planned_message(cfg), planned_summary(cfg))


def planned_message(cfg: PretrainedCfg) -> str:
    """What ``PlannedWeightsError`` says: the command, recipe, expected number, compute,
    and the released weights of the same family."""
    plan = cfg.plan
    lines = [
        f"Weights {cfg.weight_id!r} are planned, not released: training them needs a "
        "GPU/TPU host. No stand-in weights are shipped.",
        f"  see also: {released_relatives(cfg)}",
        f"  train them with: {training_command(cfg)}",
        f"  recipe: {plan.recipe}, {plan.epochs} epochs (`keras-gated info {cfg.weight_id}` "
        "describes it)",
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
