"""How a freshly initialised network starts: the loss and the gradient on one batch of real
data, before any training step. A loss far above ln(classes) or a huge gradient norm means
the first SGD steps will blow up; a gradient that vanishes towards the input means the first
layers will not learn. Used to explain runs that diverge or stay at chance in the first
batches (the no-BN Wide ResNets of Residual Gates Table 7, the 100-layer highway net of
Highway Networks Fig. 1).

    python -m experiments.tools.init_signal --model gwrn_16_2 --dataset cifar10 \\
        --model-arg batch_norm=False --model-arg k_init=0.1

Prints one JSON line: the loss, ln(classes), the global gradient norm, and the gradient
norm of the first and the last kernel, on ``--examples`` training images drawn at random
(the model's own preprocessing, no augmentation, dropout active as in training), with the
model built by ``keras_gated.training.build.build_run`` from ``--seed`` as ``training.train`` builds
it (``--recipe`` as there). TensorFlow backend.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence

from keras_gated.training.build import RunSettings


def init_signal(settings: RunSettings, examples: int = 128) -> dict:
    """Loss and gradient norms at initialisation of the model of the run ``settings``
    describe (built as ``training.train`` builds it: the data's classes and image shape,
    the recipe's dropout, then ``settings.model_args``), on ``examples`` training images
    of its data set drawn at random (seed ``settings.seed``)."""
    import keras
    import numpy as np
    import tensorflow as tf

    from keras_gated.analysis.report import load_examples
    from keras_gated.training.build import build_run

    run = build_run(settings)
    # A random sample (data sets may be stored sorted by class), as `keras-gated analyze` draws it.
    x, y = load_examples(settings.dataset, examples, "train", settings.seed)
    model = run.model
    x = tf.constant(np.asarray(x, "float32"))
    with tf.GradientTape() as tape:
        probabilities = model(x, training=True)
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, probabilities))
    weights = model.trainable_weights
    grads = tape.gradient(loss, weights)
    norms = {w.path: float(tf.norm(g)) for w, g in zip(weights, grads) if g is not None}
    kernels = [path for path in norms if path.endswith("kernel")]
    return {
        "model": settings.model, "dataset": settings.dataset, "recipe": run.recipe.name,
        "model_args": dict(settings.model_args), "examples": int(len(y)),
        "loss": float(loss), "chance_loss": math.log(model.output_shape[-1]),
        "gradient_norm": math.sqrt(sum(n * n for n in norms.values())),
        "first_kernel": kernels[0], "first_kernel_gradient_norm": norms[kernels[0]],
        "last_kernel": kernels[-1], "last_kernel_gradient_norm": norms[kernels[-1]],
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.tools.init_signal",
                                description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--dataset", required=True, help="data tag (cifar10, fashion_mnist) or image folder")
    p.add_argument("--model-arg", dest="model_args", action="append", metavar="NAME=VALUE")
    p.add_argument("--recipe", help="whose dropout the model is built with (default: the model's recipe)")
    p.add_argument("--examples", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    args = p.parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    from keras_gated.errors import run_command  # one sentence and an exit code on failure
    from keras_gated.model_args import parse_model_args

    try:
        model_args = parse_model_args(args.model_args)
    except ValueError as error:
        p.error(str(error))
    import keras

    if keras.backend.backend() != "tensorflow":
        p.error("init_signal runs on the TensorFlow backend: set KERAS_BACKEND=tensorflow.")
    settings = RunSettings(model=args.model, dataset=args.dataset, recipe=args.recipe,
                           model_args=model_args, seed=args.seed)

    def run() -> int:
        print(json.dumps(init_signal(settings, args.examples)))
        return 0

    return run_command("experiments.tools.init_signal", run, debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
