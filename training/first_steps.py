"""The first optimizer steps of a training run, batch by batch: the loss of every batch, the
batch where it first becomes NaN/inf, and every Residual Gate's k after the last step. The
model, optimiser, weight decay and augmented data stream are built as ``training.train``
builds them from the same flags and seed, so the batches are those the run starts with.
Used to see how the no-BN Wide ResNets of Residual Gates Table 7 diverge or start to
train, and what their gates do meanwhile.

    python -m training.first_steps --model gwrn_16_2 --dataset cifar10 --recipe wrn_cifar \\
        --epochs 5 --clip-norm 1 --model-arg batch_norm=False --steps 100

Prints one JSON line. ``loss_by_batch[i]`` is the loss of batch i + 1 alone (recovered from
the epoch's running mean, which Keras reports after each batch), ``k`` the gates after the
last step run. Stops at the first NaN/inf loss (``first_nonfinite_batch``, 1-based).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from types import SimpleNamespace

from training.arguments import positive_float, positive_int


def first_steps(model_name: str, dataset: str, model_args: dict, steps: int, *,
                recipe: str | None = None, epochs: int | None = None, lr: float | None = None,
                clip_norm: float | None = None, batch_size: int | None = None, seed: int = 0) -> dict:
    """Run the first ``steps`` training steps (at most one epoch) of ``model_name`` on
    ``dataset`` as ``python -m training.train`` with the same flags would, and report them."""
    import keras

    from keras_gated import datasets
    from keras_gated.gates import gate_values
    from keras_gated.recipes import get_recipe
    from keras_gated.registry import get_model_entry
    from training.data import make_pipeline, normalisation_mean
    from training.optim import apply_weight_decay, make_optimizer
    from training.train import _model_kwargs, default_recipe_name, recipe_for_run

    entry = get_model_entry(model_name)
    chosen = get_recipe(recipe or default_recipe_name(entry)).with_epochs(epochs)
    chosen = recipe_for_run(chosen, SimpleNamespace(lr=lr, clip_norm=clip_norm),
                            batch_size or chosen.batch_size)
    keras.utils.set_random_seed(seed)
    train_ds, info = datasets.load(dataset, "train")
    model = entry.build(**{**_model_kwargs(entry, chosen, info), **model_args})
    apply_weight_decay(model, chosen)
    steps_per_epoch = math.ceil(info.num_examples / chosen.batch_size)
    model.compile(optimizer=make_optimizer(chosen, steps_per_epoch),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    train = make_pipeline(train_ds, chosen, training=True, batch_size=chosen.batch_size,
                          num_examples=info.num_examples, seed=seed,
                          pad_fill=normalisation_mean(model))
    running: list[float] = []

    class RunningLoss(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            running.append(float(logs["loss"]))

    model.fit(train.take(min(steps, steps_per_epoch)), epochs=1, verbose=0,
              callbacks=[RunningLoss(), keras.callbacks.TerminateOnNaN()])
    # The running mean after batch i (equal batches) is m_i = (l_1 + ... + l_i) / i.
    losses = [running[0]] + [(i + 1) * running[i] - i * running[i - 1] for i in range(1, len(running))]
    nonfinite = next((i + 1 for i, m in enumerate(running) if not math.isfinite(m)), None)
    gates = gate_values(model)
    return {
        "model": model_name, "dataset": dataset, "recipe": chosen.describe(),
        "model_args": model_args, "seed": seed, "steps_run": len(running),
        "loss_by_batch": [round(x, 4) if math.isfinite(x) else None for x in losses],
        "first_nonfinite_batch": nonfinite,
        "k": {name: round(float(k), 4) for name, k in gates.items()},
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
    print(json.dumps(first_steps(args.model, args.dataset, model_args, args.steps, recipe=args.recipe,
                                 epochs=args.epochs, lr=args.lr, clip_norm=args.clip_norm,
                                 batch_size=args.batch_size, seed=args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
