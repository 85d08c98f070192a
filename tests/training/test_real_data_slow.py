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


needs_fashion_mnist = pytest.mark.skipif(
    datasets._find(datasets.FASHION_MNIST_DIR) is None,
    reason=f"no offline Fashion-MNIST copy in {[str(d) for d in datasets.data_dirs()]}",
)


@pytest.mark.slow
@needs_fashion_mnist
def test_gresnet20_cifar10_backbone_fine_tunes_fashion_mnist_better_than_from_scratch(tmp_path):
    """Issue 5: the released weights transfer. Same network, recipe, data and steps."""
    from training import finetune

    # 2 x 40 steps of 128 images, the same 5,000 for both; the baseline gets the same
    # (fine-tuning) learning rate, so part of the gap is the learning rate's.
    budget = ["--model", "gresnet20", "--dataset", "fashion_mnist", "--train-examples", "5000",
              "--epochs", "2", "--verbose", "2"]
    accuracy = {}
    for weights in ("cifar10", "none"):
        out = tmp_path / weights
        assert finetune.main(budget + ["--weights", weights, "--out", str(out)]) == 0
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["num_examples"] == 10_000 and metrics["train_examples"] == 5000
        accuracy[weights] = metrics["test_accuracy"]
    print(f"Fashion-MNIST test accuracy after 80 steps: {accuracy}")
    assert accuracy["cifar10"] > accuracy["none"] + 0.02, accuracy


def fashion_mnist_folder(root, classes=(0, 1, 8), per_class=(100, 50)):
    """An image folder of Fashion-MNIST ``classes`` (default t-shirt, trouser, bag): the
    first ``per_class`` images of each in the train and test splits, as PNGs."""
    import numpy as np
    from PIL import Image

    from keras_gated.datasets import CLASS_NAMES

    source = datasets._find(datasets.FASHION_MNIST_DIR)
    for split, prefix, count in (("train", "train", per_class[0]), ("test", "t10k", per_class[1])):
        images = datasets.read_idx(source / f"{prefix}-images-idx3-ubyte.gz")
        labels = datasets.read_idx(source / f"{prefix}-labels-idx1-ubyte.gz")
        for label in classes:
            folder = root / split / CLASS_NAMES["fashion_mnist"][label].split("/")[0].lower()
            folder.mkdir(parents=True)
            for i, index in enumerate(np.flatnonzero(labels == label)[:count]):
                Image.fromarray(images[index]).save(folder / f"{i:03d}.png")
    return root


@pytest.mark.slow
@needs_fashion_mnist
def test_finetune_on_a_small_folder_picks_a_batch_and_epochs_that_reach_97_percent(tmp_path, capsys):
    """100 training images a class: the recipe's batch of 128 would give 3 steps an epoch."""
    from training import finetune

    folder = fashion_mnist_folder(tmp_path / "fm3")
    out = tmp_path / "run"
    assert finetune.main(["--model", "gresnet20", "--weights", "cifar10", "--dataset", str(folder),
                          "--out", str(out), "--verbose", "2"]) == 0
    printed = capsys.readouterr().out
    assert "[finetune] 270 training examples: batch 16 and 12 epochs chosen" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    print(f"3-class Fashion-MNIST folder: test accuracy {metrics['test_accuracy']}")
    assert metrics["num_examples"] == 150 and metrics["batch_size"] == 16
    assert "--epochs 12 --batch-size 16" in metrics["command"] and "--out" in metrics["command"]
    assert metrics["test_accuracy"] >= 0.97, metrics
