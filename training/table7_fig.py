"""Moved to ``experiments.residual_gates.table7_fig`` (the paper experiments live in ``experiments/``): this
name still works, warns once and re-exports it.

    python -m experiments.residual_gates.table7_fig ...
"""

import sys
import warnings

from experiments.residual_gates.table7_fig import *  # noqa: F401,F403
from experiments.residual_gates.table7_fig import main

warnings.warn("training.table7_fig moved to experiments.residual_gates.table7_fig", DeprecationWarning, stacklevel=2)

if __name__ == "__main__":
    sys.exit(main())
