"""Training for keras-gated: paper recipes, the input pipeline, distribution strategies,
``python -m training.train`` and ``python -m training.finetune``."""
