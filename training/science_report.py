"""Moved to ``experiments.tools.science_report`` (the paper experiments live in ``experiments/``): this
name still works, warns once and re-exports it.

    python -m experiments.tools.science_report ...
"""

import sys
import warnings

from experiments.tools.science_report import *  # noqa: F401,F403
from experiments.tools.science_report import main

warnings.warn("training.science_report moved to experiments.tools.science_report", DeprecationWarning, stacklevel=2)

if __name__ == "__main__":
    sys.exit(main())
