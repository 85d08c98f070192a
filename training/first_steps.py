"""The first optimizer steps of a training run, batch by batch: the loss of every batch, the
batch where it first becomes NaN/inf, and every Residual Gate's k after the last step. The
model, optimiser, weight decay and augmented data stream are built as ``training.train``
builds them from the same flags and seed, so the batches are those the run starts with.
Used to see how the no-BN Wide ResNets of Residual Gates Table 7 diverge or start to
train, and what their gates do meanwhile.

    python -m training.first_steps --model gwrn_16_2 --dataset cifar10 --recipe wrn_cifar \\
        --epochs 5 --clip-norm 1 --model-arg batch_norm=False --steps 100

Prints one JSON line. ``loss_by_batch[i]`` is the loss of batch i + 1 alone (``null`` once
it is NaN/inf), ``k`` the gates after the last step run. Stops at the first NaN/inf loss
(``first_nonfinite_batch``, 1-based).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from types import SimpleNamespace

from training.arguments import positive_float, positive_int


def build(model_name: str, dataset: str, model_args: dict, *, recipe: str | None = None,
          epochs: int | None = None, lr: float | None = None, clip_norm: float | None = None,
          batch_size: int | None = None, seed: int = 0):
    """``(model, recipe, batches)``: the compiled model and the augmented training stream
    ``python -m training.train`` starts with under the same flags and seed."""
    import keras

    from keras_gated import datasets
    from keras_gated.recipes import get_recipe
    from keras_gated.registry import get_model_entry
    from training.train import (
        _model_kwargs,
        compiled_model,
        default_recipe_name,
        recipe_for_run,
        training_stream,
    )

    entry = get_model_entry(model_name)
    chosen = get_recipe(recipe or default_recipe_name(entry)).with_epochs(epochs)
    chosen = recipe_for_run(chosen, SimpleNamespace(lr=lr, clip_norm=clip_norm),
                            batch_size or chosen.batch_size)
    keras.utils.set_random_seed(seed)
    train_ds, info = datasets.load(dataset, "train")
    model, _ = compiled_model(entry, chosen, {**_model_kwargs(entry, chosen, info), **model_args},
                              math.ceil(info.num_examples / chosen.batch_size))
    batches = training_stream(train_ds, chosen, info.num_examples, seed, model)
    return model, chosen, batches


def _finite_or_none(value: float, digits: int = 4) -> float | None:
    return round(value, digits) if math.isfinite(value) else None


def first_steps(model_name: str, dataset: str, model_args: dict, steps: int, **settings) -> dict:
    """Run the first ``steps`` training steps (at most one epoch) of ``model_name`` on
    ``dataset`` as ``python -m training.train`` with the same flags would (``settings``:
    ``recipe``, ``epochs``, ``lr``, ``clip_norm``, ``batch_size``, ``seed``, see ``build``),
    and report them. Each batch is one ``train_on_batch``, which resets the metrics first,
    so its loss is that batch's (the training loss with the weight-decay term, as ``fit``
    logs it), computed before the batch's update."""
    from keras_gated.gates import gate_values

    model, recipe, batches = build(model_name, dataset, model_args, **settings)
    losses: list[float] = []
    for x, y in batches.take(steps):
        losses.append(float(model.train_on_batch(x, y, return_dict=True)["loss"]))
        if not math.isfinite(losses[-1]):
            break
    nonfinite = len(losses) if not math.isfinite(losses[-1]) else None
    return {
        "model": model_name, "dataset": dataset, "recipe": recipe.describe(),
        "model_args": model_args, "seed": settings.get("seed", 0), "steps_run": len(losses),
        "loss_by_batch": [_finite_or_none(x) for x in losses],
        "first_nonfinite_batch": nonfinite,
        "k": {name: _finite_or_none(float(k)) for name, k in gate_values(model).items()},
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.first_steps", description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--dataset", required=True, help="data tag (cifar10, fashion_mnist) or image folder")
    p.add_argument("--steps", type=positive_int, required=True,
                   help="training steps (batches) to run, at most one epoch's")
    p.add_argument("--recipe", help="a recipe of keras_gated/recipes.py (default: the model's)")
    p.add_argument("--epochs", type=positive_int, help="scale the recipe's schedule to N epochs, as training.train")
    p.add_argument("--batch-size", type=positive_int, help="batch size (default: the recipe's)")
    p.add_argument("--lr", type=positive_float, help="base learning rate instead of the recipe's")
    p.add_argument("--clip-norm", type=positive_float, help="clip the gradient to this global L2 norm")
    p.add_argument("--model-arg", dest="model_args", action="append", metavar="NAME=VALUE")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    from keras_gated.model_args import parse_model_args

    try:
        model_args = parse_model_args(args.model_args)
    except ValueError as error:
        p.error(str(error))
    print(json.dumps(allow_nan=False, obj=first_steps(args.model, args.dataset, model_args, args.steps, recipe=args.recipe,
                                 epochs=args.epochs, lr=args.lr, clip_norm=args.clip_norm,
                                 batch_size=args.batch_size, seed=args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
