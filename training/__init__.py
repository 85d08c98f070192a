"""Training for keras-gated: paper recipes, the input pipeline, distribution strategies,
``python -m training.train`` and ``python -m training.finetune``."""

from keras_gated.tensorflow_cpu import enable_onednn_by_default

# Before any training module imports TensorFlow (it reads the setting once, when imported).
enable_onednn_by_default()
