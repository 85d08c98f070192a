"""Every released checkpoint, evaluated on the full real test split: the accuracy equals
metrics.json and the model card to 0.1 percentage point."""

from __future__ import annotations

from pathlib import Path

import pytest

from keras_gated import datasets
from keras_gated.evaluation import evaluate
from keras_gated.weights import get_pretrained_cfg, list_pretrained

ZOO = Path(__file__).resolve().parents[2] / "zoo"
LOCAL = {"cifar10": datasets.CIFAR10_ZIP, "fashion_mnist": datasets.FASHION_MNIST_DIR}


def _local_data(tag: str) -> bool:
    shared = datasets.source_checkout_data_dir()
    return tag in LOCAL and (shared / LOCAL[tag]).exists()


def test_released_weights_exist_in_this_checkout():
    from keras_gated.evaluation import DEMO_WEIGHT_ID

    assert DEMO_WEIGHT_ID in list_pretrained()
    assert ZOO.is_dir(), "a source checkout ships zoo/ with every released weight"
    for weight_id in list_pretrained():
        assert (ZOO / weight_id / get_pretrained_cfg(weight_id).file_name).is_file(), weight_id


def _evaluations() -> list:
    """Every released weight id; the CIFAR-10 ones other than the demo's are marked slow
    (20-45 s each on two cores: run them with `-m slow`)."""
    from keras_gated.evaluation import DEMO_WEIGHT_ID

    return [
        pytest.param(w, marks=pytest.mark.slow)
        if get_pretrained_cfg(w).tag == "cifar10" and w != DEMO_WEIGHT_ID else w
        for w in list_pretrained()
    ]


@pytest.mark.parametrize("weight_id", _evaluations())
def test_released_accuracy_is_reproduced(weight_id):
    from huggingface_hub import ModelCard

    cfg = get_pretrained_cfg(weight_id)
    if not _local_data(cfg.tag):
        pytest.skip(f"the real {cfg.tag} test split is not in {datasets.source_checkout_data_dir()}")
    result = evaluate(cfg.arch, cfg.tag, cfg.tag)
    assert result["num_examples"] == cfg.metrics["num_examples"]
    assert abs(result["test_accuracy"] - cfg.metrics["test_accuracy"]) <= 0.001
    card = ModelCard.load(ZOO / weight_id / "README.md").data
    card_accuracy = card.eval_results[0].metric_value
    assert abs(result["test_accuracy"] - card_accuracy) <= 0.001
