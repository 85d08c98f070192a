"""Training for keras-gated: paper recipes, the input pipeline, distribution strategies,
``python -m training.train`` and ``python -m training.finetune``."""

import os
import platform
import sys

# keras-gated's CPU default (``keras_gated.tensorflow_cpu``), set here without importing
# the package (which imports Keras): before any training module imports TensorFlow,
# which reads the setting once, when imported.
if "tensorflow" not in sys.modules and platform.machine().lower() in ("x86_64", "amd64"):
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
