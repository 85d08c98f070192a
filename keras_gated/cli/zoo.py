"""``keras-gated list`` and ``info``: what the zoo holds, read from the registry.

Without ``info --params`` or ``--gates`` these build nothing: the registry is filled from
``keras_gated.catalog``'s data file, and Keras is not imported.
"""

from __future__ import annotations

import argparse
import sys

import keras_gated  # keras_gated.create_model: imports the families (and Keras) when called
from keras_gated.registry import get_model_entry, list_models
from keras_gated.release.listing import accuracy_text, planned_table, released_table
from keras_gated.training.recipes import get_recipe
from keras_gated.weights import get_pretrained_cfg, list_pretrained, split_weight_id, tags_for
from keras_gated.weights.planned import training_command


def list_command(args: argparse.Namespace) -> int:
    """``keras-gated list``."""
    if args.planned:
        for weight_id in list_pretrained(args.pattern, planned=True):
            print(f"{weight_id:<28} planned: {get_pretrained_cfg(weight_id).plan.expect}")
        return 0
    if args.markdown:
        print(released_table(get_pretrained_cfg(w) for w in list_pretrained(args.pattern)))
        print()
        print(planned_table(get_pretrained_cfg(w) for w in list_pretrained(planned=True)))
        return 0
    names = list_models(args.pattern, pretrained=args.pretrained)
    for name in names:
        if args.pretrained:
            cfg = get_pretrained_cfg(name)
            print(f"{name:<28} {accuracy_text(cfg.metrics):>8} on {cfg.dataset} "
                  f"({cfg.metrics.get('split', 'test')} split)")
            if cfg.caveat:
                print(f"{'':<28} caveat: {cfg.caveat}")
        else:
            print(f"{name:<22} {get_model_entry(name).description}")
    if not names:
        print("(no match)", file=sys.stderr)
    return 0


def info_command(args: argparse.Namespace) -> int:
    """``keras-gated info``."""
    arch, tag = split_weight_id(args.name)
    entry = get_model_entry(arch)
    if tag:
        get_pretrained_cfg(args.name)  # neither released nor planned: say so, print nothing
    gates = trained_gates(arch, tag) if args.gates else None  # refused before any output
    print(f"name:        {entry.name}")
    print(f"family:      {entry.family}")
    print(f"description: {entry.description}")
    print(f"arguments:   {entry.kwargs}")
    print(f"recipe:      {entry.default_recipe or 'none (pass --recipe)'} "
          "(python -m training.train's default)")
    if args.params:
        import numpy as np

        model = keras_gated.create_model(arch)
        trainable = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
        print(f"trainable parameters: {trainable:,}")
    released = tags_for(arch)
    tags = [t for t in released if tag in (None, t)]
    print(f"released weights: {', '.join(f'{arch}.{t}' for t in tags) or 'none yet'}")
    for weight_id in list_pretrained(f"{arch}.{tag or '*'}", planned=True):
        planned = get_pretrained_cfg(weight_id)
        recipe = get_recipe(planned.plan.recipe).with_epochs(planned.plan.epochs)
        print(f"planned weights: {weight_id} (needs a GPU/TPU host): "
              f"{training_command(planned)}; expect {planned.plan.expect}")
        print(f"  recipe: {recipe.describe()}")
    for t in tags:
        cfg = get_pretrained_cfg(f"{arch}.{t}")
        print(f"  {cfg.weight_id}:")
        for key, value in vars(cfg).items():
            if key != "weight_id":
                print(f"    {key + ':':<15}{value}")
    if gates is not None:
        print(f"gates of {arch}.{tag} (block: value):")
        for block, value in gates.items():
            print(f"  {block:<16}{value:.4f}")
    return 0


def trained_gates(arch: str, tag: str | None) -> dict[str, float]:
    """Each block's gate in the released weights ``arch.tag``: k of a Residual Gate (its
    opening is g(k) = max(k, 0), Residual Gates eq. 2), or the mean bias b_T of a highway
    block's transform gate T = sigmoid(W_T x + b_T)."""
    from keras_gated.gating import gate_values

    if tag is None:
        released = tags_for(arch)
        example = f"{arch}.{released[0]}" if released else "a released weight id"
        raise ValueError(f"--gates reads trained gates: give a weight id such as {example}, "
                         f"not the model name {arch!r}.")
    values = gate_values(keras_gated.create_model(f"{arch}.{tag}"))
    if not values:
        raise ValueError(f"{arch}.{tag} has no gates: `keras-gated list --pretrained 'g*'` lists "
                         "the gated nets' weights.")
    return values
