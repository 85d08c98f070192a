"""Moved to ``experiments.tools.init_signal`` (the paper experiments live in
``experiments/``): this name still works, warns once and keeps the former call
signature.

    python -m experiments.tools.init_signal ...
"""

import sys
import warnings

from experiments.tools.init_signal import init_signal as _init_signal
from experiments.tools.init_signal import main
from training.build import RunSettings

warnings.warn("training.init_signal moved to experiments.tools.init_signal", DeprecationWarning,
              stacklevel=2)


def init_signal(model_name: str, dataset: str, model_args: dict, examples: int = 128, seed: int = 0,
                recipe: str | None = None) -> dict:
    """``experiments.tools.init_signal.init_signal`` with the settings as arguments."""
    return _init_signal(RunSettings(model=model_name, dataset=dataset, recipe=recipe,
                                    model_args=model_args, seed=seed), examples)


if __name__ == "__main__":
    sys.exit(main())
