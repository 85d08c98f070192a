"""The first optimizer steps of a training run, batch by batch: the loss of every batch, the
batch where it first becomes NaN/inf, and every Residual Gate's k after the last step. The
run is built by ``keras_gated.training.build.build_run`` from the same settings and seed as
``python -m training.train`` builds it, so the batches are those the run starts with.
Used to see how the no-BN Wide ResNets of Residual Gates Table 7 diverge or start to
train, and what their gates do meanwhile.

    python -m experiments.tools.first_steps --model gwrn_16_2 --dataset cifar10 \\
        --recipe wrn_cifar --epochs 5 --clip-norm 1 --model-arg batch_norm=False --steps 100

Prints one JSON line. ``loss_by_batch[i]`` is the loss of batch i + 1 alone (``null`` once
it is NaN/inf), ``k`` the gates after the last step run. Stops at the first NaN/inf loss
(``first_nonfinite_batch``, 1-based).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections.abc import Sequence

from training.arguments import positive_float, positive_int
from keras_gated.training.build import RunSettings


def _finite_or_none(value: float, digits: int = 4) -> float | None:
    return round(value, digits) if math.isfinite(value) else None


def first_steps(settings: RunSettings, steps: int) -> dict:
    """Run the first ``steps`` training steps (at most one epoch) of the run ``settings``
    describe, as ``python -m training.train`` with the same flags would, and report them.
    Each batch is one ``train_on_batch``, which resets the metrics first, so its loss is
    that batch's (the training loss with the weight-decay term, as ``fit`` logs it),
    computed before the batch's update."""
    from keras_gated.gating import gate_values
    from keras_gated.training.build import build_run

    run = build_run(settings)
    losses: list[float] = []
    # The first ``steps`` batches of either input engine (a tf.data dataset or the numpy
    # engine's PyDataset: both iterate).
    for x, y in itertools.islice(iter(run.batches), steps):
        losses.append(float(run.model.train_on_batch(x, y, return_dict=True)["loss"]))
        if not math.isfinite(losses[-1]):
            break
    nonfinite = len(losses) if not math.isfinite(losses[-1]) else None
    return {
        "model": settings.model, "dataset": settings.dataset, "recipe": run.recipe.describe(),
        "model_args": dict(settings.model_args), "seed": settings.seed, "steps_run": len(losses),
        "loss_by_batch": [_finite_or_none(x) for x in losses],
        "first_nonfinite_batch": nonfinite,
        "k": {name: _finite_or_none(float(k)) for name, k in gate_values(run.model).items()},
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.tools.first_steps",
                                description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--dataset", required=True, help="data tag (cifar10, fashion_mnist) or image folder")
    p.add_argument("--steps", type=positive_int, required=True,
                   help="training steps (batches) to run, at most one epoch's")
    p.add_argument("--recipe", help="a recipe of keras_gated/training/recipes.py (default: the model's)")
    p.add_argument("--epochs", type=positive_int, help="scale the recipe's schedule to N epochs, as training.train")
    p.add_argument("--batch-size", type=positive_int, help="batch size (default: the recipe's)")
    p.add_argument("--lr", type=positive_float, help="base learning rate instead of the recipe's")
    p.add_argument("--clip-norm", type=positive_float, help="clip the gradient to this global L2 norm")
    p.add_argument("--model-arg", dest="model_args", action="append", metavar="NAME=VALUE")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    args = p.parse_args(argv)
    from keras_gated.errors import run_command  # one sentence and an exit code on failure
    from keras_gated.model_args import parse_model_args

    try:
        model_args = parse_model_args(args.model_args)
    except ValueError as error:
        p.error(str(error))
    settings = RunSettings(model=args.model, dataset=args.dataset, recipe=args.recipe,
                           epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                           clip_norm=args.clip_norm, model_args=model_args, seed=args.seed)

    def run() -> int:
        print(json.dumps(first_steps(settings, args.steps), allow_nan=False))
        return 0

    return run_command("experiments.tools.first_steps", run, debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
