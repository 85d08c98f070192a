"""Moved to ``experiments.highway.highway_fig1`` (the paper experiments live in ``experiments/``): this
name still works, warns once and re-exports it.

    python -m experiments.highway.highway_fig1 ...
"""

import sys
import warnings

from experiments.highway.highway_fig1 import *  # noqa: F401,F403
from experiments.highway.highway_fig1 import main

warnings.warn("training.highway_fig1 moved to experiments.highway.highway_fig1", DeprecationWarning, stacklevel=2)

if __name__ == "__main__":
    sys.exit(main())
