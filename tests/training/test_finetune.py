"""python -m training.finetune: pretrained backbone, new head, zoo-style folder."""

import json
import os
from pathlib import Path

import keras
import numpy as np

import keras_gated as kg
from tests.support.helpers import make_image_folder, needs_tensorflow, to_numpy
from training import finetune


def test_finetune_frozen_backbone_new_head_and_zoo_folder(tmp_path):
    source = kg.GResNetFC(2)  # 10-class "pretrained" weights on 28x28x1
    weights = tmp_path / "source.weights.h5"
    source.save_weights(weights)
    # 3 classes of 20x20 RGB images: adapted to the backbone's 28x28x1 input.
    folder = make_image_folder(tmp_path / "new_data", shape=(20, 20, 3), per_class=(30, 6), classes=3)
    out = tmp_path / "run"
    code = finetune.main(["--model", "gresnetfc2", "--weights", str(weights), "--dataset", str(folder),
                          "--freeze-backbone", "--epochs", "2", "--batch-size", "16",
                          "--out", str(out), "--verbose", "0"])
    assert code == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["num_examples"] == 18 and metrics["freeze_backbone"] is True
    assert "--freeze-backbone" in metrics["command"]
    # The fast path is printed and recorded, as training.train does.
    assert metrics["fast_path"]["jit_compile"] in (True, False)

    zoo = out / "zoo" / "gresnetfc2.new_data"
    assert {"config.json", "metadata.json", "model.weights.h5", "README.md", "metrics.json"} <= {
        p.name for p in zoo.iterdir()
    }
    tuned = keras.saving.load_model(zoo)
    assert tuned.get_layer("predictions").units == 3
    # The card's usage lines run as written, on the data set's own 20x20x3 images, and
    # give the tuned model's outputs; the card records the input adaptation.
    card = (zoo / "README.md").read_text()
    assert "were adapted to this input: 20×20×3 images turned grey (ITU-R 601 luma) and centre-zero-padded from 20×20 to 28×28" in card
    assert "input_adaptation: 20×20×3 images" in card  # and in the front matter
    usage = card.split("## Usage", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    images = np.stack([np.asarray(__import__("PIL.Image").Image.open(f)) for f in
                       sorted((folder / "test").rglob("*.png"))[:4]])
    namespace = {"images": images}
    exec(usage, namespace)  # noqa: S102  the card's own lines
    from keras_gated.datasets import adapt_images

    np.testing.assert_allclose(namespace["probabilities"],
                               to_numpy(tuned(adapt_images(images, (28, 28, 1)).astype("float32"))), atol=1e-5)
    # The zoo folder is a valid `weights=` and `keras-gated evaluate` reproduces metrics.json.
    from keras_gated.evaluation import evaluate

    result = evaluate("gresnetfc2", str(zoo), str(folder))
    assert abs(result["test_accuracy"] - metrics["test_accuracy"]) <= 0.001
    # A frozen backbone is exactly the source's: compare every non-head weight.
    for layer in source.layers:
        if layer.name in ("predictions",) or not layer.weights:
            continue
        for a, b in zip(layer.weights, tuned.get_layer(layer.name).weights):
            np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


def test_finetune_from_scratch_baseline_on_a_seeded_subset(tmp_path, monkeypatch):
    import csv

    folder = make_image_folder(tmp_path / "new_data", shape=(28, 28, 1), per_class=(30, 6), classes=3)
    monkeypatch.chdir(tmp_path)  # default output folders go under runs/
    common = ["--model", "gresnetfc2", "--dataset", str(folder), "--train-examples", "40",
              "--epochs", "1", "--batch-size", "16", "--verbose", "0"]
    args = finetune.build_parser().parse_args(common + ["--weights", "none"])
    pretrained_args = finetune.build_parser().parse_args(common + ["--weights", "x.weights.h5"])
    # The baseline never resumes (or skips as finished) the pretrained run's folder.
    assert finetune.default_out(args) == "runs/gresnetfc2-new_data-scratch-n40"
    assert finetune.default_out(pretrained_args) == "runs/gresnetfc2-new_data-finetune-n40"
    assert finetune.main(common + ["--weights", "none"]) == 0
    out = tmp_path / "runs" / "gresnetfc2-new_data-scratch-n40"
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["train_examples"] == 36 and metrics["val_num_examples"] == 4  # 40, 10 % held out
    assert metrics["num_examples"] == 18
    assert metrics["base_weights"] == "none" and "--train-examples 40" in metrics["command"]
    card = (out / "zoo" / "gresnetfc2.new_data" / "README.md").read_text()
    assert "trained from scratch" in card
    with open(out / "log.csv") as f:
        assert len(list(csv.DictReader(f))) == 1  # one epoch of ceil(40 / 16) steps ran


@needs_tensorflow  # the tf.data form; the numpy engine's is in tests/training/test_data.py
def test_train_examples_is_a_seeded_random_subset_that_covers_the_classes(tmp_path):
    import pytest

    from keras_gated import datasets
    from keras_gated.training.pipeline import random_subset

    # Image folders list their files class by class: the first 40 of 3 x 30 would miss one.
    folder = make_image_folder(tmp_path / "new_data", shape=(8, 8, 1), per_class=(30, 6), classes=3)
    ds, info = datasets.load(str(folder), "train")
    assert {int(y) for _, y in ds.take(40).as_numpy_iterator()} == {0, 1}
    subset = random_subset(ds, info.num_examples, 40, seed=0)
    labels = [int(y) for _, y in subset.as_numpy_iterator()]
    assert len(labels) == 40 and set(labels) == {0, 1, 2}
    assert labels == [int(y) for _, y in subset.as_numpy_iterator()]  # same subset every pass
    other = [int(y) for _, y in random_subset(ds, info.num_examples, 40, seed=1).as_numpy_iterator()]
    assert other != labels
    with pytest.raises(ValueError, match="Cannot draw 91 of 90"):
        random_subset(ds, info.num_examples, 91, seed=0)


def test_finetune_rejects_impossible_requests_with_a_message(tmp_path, capsys):
    folder = make_image_folder(tmp_path / "new_data", shape=(28, 28, 1), per_class=(5, 2), classes=2)
    common = ["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "1", "--verbose", "0"]
    assert finetune.main(common + ["--weights", "none", "--freeze-backbone",
                                   "--out", str(tmp_path / "a")]) == 2
    assert "random features" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()  # refused before anything was written
    assert finetune.main(common + ["--weights", "none", "--train-examples", "11",
                                   "--out", str(tmp_path / "b")]) == 2
    assert "more than the 10 training examples" in capsys.readouterr().err


def test_the_batch_size_and_epochs_suit_the_number_of_training_examples():
    # 270 examples (3 classes of 100, 10 % held out): batch 128 would give 3 steps an
    # epoch; 16 gives 17, and 12 epochs give the run its 200 steps at least.
    assert finetune.suited_schedule(270, 128, 10) == (16, 12)
    assert finetune.suited_schedule(45_000, 128, 10) == (128, 10)  # large: the recipe's
    assert finetune.suited_schedule(2_000, 128, 10) == (128, 13)  # 16 steps an epoch
    assert finetune.suited_schedule(30, 128, 10) == (16, finetune.MAX_EPOCHS)
    args = finetune.build_parser().parse_args(
        ["--model", "gresnet20", "--weights", "cifar10", "--dataset", "d", "--epochs", "3"])
    assert finetune.training_examples(300, args) == 270
    recipe = __import__("keras_gated.training.recipes", fromlist=["x"]).get_recipe("finetune")
    batch, epochs, sentence = finetune.choose_schedule(args, 270, recipe)
    assert (batch, epochs) == (16, 3)  # a given value is kept
    assert sentence == ("270 training examples: batch 16 chosen for the data set's size; "
                        "3 epochs as given; 17 steps an epoch, 51 in all")
    # A given batch size: the epochs suit it (3 steps an epoch -> 50 epochs at most).
    args.batch_size, args.epochs = 128, None
    assert finetune.choose_schedule(args, 270, recipe)[:2] == (128, finetune.MAX_EPOCHS)


def test_finetune_says_what_it_chose_and_records_a_command_that_reruns_it(tmp_path, capsys):
    import warnings

    folder = make_image_folder(tmp_path / "new_data", shape=(28, 28, 1), per_class=(20, 4), classes=2)
    out = tmp_path / "run"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert finetune.main(["--model", "gresnetfc2", "--weights", "none", "--dataset", str(folder),
                              "--epochs", "1", "--out", str(out), "--verbose", "0"]) == 0
    assert not [w for w in caught if "structure of `inputs`" in str(w.message)]
    printed = capsys.readouterr().out
    # 40 examples less 4 held out: batch 16, 3 steps an epoch.
    assert "[finetune] 36 training examples: batch 16 chosen for the data set's size" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["batch_size"] == 16 and metrics["epochs"] == 1
    command = metrics["command"].split()
    assert command[command.index("--batch-size") + 1] == "16"
    assert command[command.index("--epochs") + 1] == "1"
    recorded_out = command[command.index("--out") + 1]  # relative to the working folder
    assert Path(os.path.abspath(recorded_out)) == out
    # The recorded command is the same run: rerun as recorded, it is found finished.
    args = command[command.index("-m") + 2:]
    assert finetune.main(args) == 0
    assert "is already finished" in capsys.readouterr().out
