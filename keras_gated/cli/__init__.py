"""The ``keras-gated`` command line: ``list``, ``info``, ``demo``, ``evaluate``, ``analyze``,
``compress``, ``convert``, ``export``, ``publish`` and ``pull``.

``app`` is the entry point (``main``), ``parser`` builds the argument parser, ``arguments``
holds the argument types; each other module runs one command or a pair of related ones,
and is imported only when its command runs.
"""

from __future__ import annotations

from keras_gated.cli.app import main
from keras_gated.cli.parser import build_parser

__all__ = ["build_parser", "main"]
