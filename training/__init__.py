"""The training command lines of keras-gated (``python -m training.train``,
``training.finetune``, ``training.release*``, ``training.lease``); the engine they drive
is the library's ``keras_gated.training``."""

import os
import platform
import sys

# keras-gated's CPU default (``keras_gated.tensorflow_cpu``), set here without importing
# the package (which imports Keras): before any training module imports TensorFlow,
# which reads the setting once, when imported.
if "tensorflow" not in sys.modules and platform.machine().lower() in ("x86_64", "amd64"):
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
