"""``keras-gated demo`` and ``evaluate``: weights scored on images."""

from __future__ import annotations

import argparse

from keras_gated import evaluation  # the module: its functions looked up when called
from keras_gated.model_args import parse_model_args


def demo_command(args: argparse.Namespace) -> int:
    """``keras-gated demo``."""
    evaluation.run_demo(weights=args.weights)
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    """``keras-gated evaluate``."""
    result = evaluation.evaluate(args.name, args.weights, args.dataset, batch_size=args.batch_size,
                      model_args=parse_model_args(args.model_args), data_engine=args.data_engine,
                      resize=args.resize, class_map=dict(args.class_map))
    print(f"{result['model']} (weights {result['weights']}) on {result['dataset']}, "
          f"{result['split']} split, {result['num_examples']} images")
    print(f"test accuracy: {result['test_accuracy']:.4f}")
    return 0
