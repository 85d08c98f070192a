"""Slow: real training on the offline CIFAR-10 copy (bash tests/run.sh -m slow)."""

import json

import pytest

from keras_gated import datasets
from training import train

needs_cifar = pytest.mark.skipif(
    not (datasets.source_checkout_data_dir() / "cifar10-jpeg.zip").exists(),
    reason="no offline CIFAR-10 copy beside the checkout",
)


@pytest.mark.slow
@needs_cifar
def test_gresnet20_one_epoch_on_real_cifar10_reaches_35_percent(tmp_path):
    out = tmp_path / "g20"
    assert train.main(["--model", "gresnet20", "--dataset", "cifar10", "--epochs", "1",
                       "--out", str(out), "--verbose", "2"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["num_examples"] == 10_000
    assert metrics["test_accuracy"] >= 0.35, metrics
