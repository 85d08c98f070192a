"""Moved to ``experiments.tools.first_steps`` (the paper experiments live in
``experiments/``): this name still works, warns once and keeps the former call
signatures, built through ``training.build``.

    python -m experiments.tools.first_steps ...
"""

import sys
import warnings

from experiments.tools.first_steps import main
from experiments.tools.first_steps import first_steps as _run_first_steps
from training.build import RunSettings, build_run

warnings.warn("training.first_steps moved to experiments.tools.first_steps", DeprecationWarning,
              stacklevel=2)


def _settings(model_name: str, dataset: str, model_args: dict, *, recipe: str | None = None,
              epochs: int | None = None, lr: float | None = None, clip_norm: float | None = None,
              batch_size: int | None = None, seed: int = 0) -> RunSettings:
    return RunSettings(model=model_name, dataset=dataset, recipe=recipe, epochs=epochs,
                       batch_size=batch_size, lr=lr, clip_norm=clip_norm,
                       model_args=model_args, seed=seed)


def build(model_name: str, dataset: str, model_args: dict, **settings):
    """``(model, recipe, batches)`` of ``training.build.build_run``."""
    run = build_run(_settings(model_name, dataset, model_args, **settings))
    return run.model, run.recipe, run.batches


def first_steps(model_name: str, dataset: str, model_args: dict, steps: int, **settings) -> dict:
    """``experiments.tools.first_steps.first_steps`` with the settings as arguments."""
    return _run_first_steps(_settings(model_name, dataset, model_args, **settings), steps)


if __name__ == "__main__":
    sys.exit(main())
