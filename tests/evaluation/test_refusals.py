"""Evaluation scores what the user asked for, or says why not: Hub weights whose head has
another class count and model arguments with which the weights cannot score are refused;
larger images are never cropped (resized when told); a folder of another data set's classes
is evaluated through a class map."""

from __future__ import annotations


import numpy as np
import pytest

from tests.support.helpers import make_image_folder
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_image_folder(tmp_path_factory.mktemp("data") / "tiny", per_class=(40, 10))


# --- every command that scores checks the weights against the data -------------------------
def _cli(*argv: str) -> tuple[int, str, str]:
    """``keras-gated ARGV``: exit code, stdout and stderr."""
    import contextlib
    import io

    from keras_gated.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_evaluate_refuses_hub_weights_whose_head_has_another_class_count(hub, tmp_path):  # noqa: F811
    import keras_gated as kg
    from keras_gated.evaluation import evaluate
    from keras_gated.release import hub as kg_hub
    from keras_gated.release.zoo_folder import save_zoo_folder

    data = make_image_folder(tmp_path / "three", per_class=(2, 2), classes=3)
    log = tmp_path / "log.csv"
    log.write_text("epoch,loss\n0,1.0\n")
    folder = save_zoo_folder(kg.GResNetFC(2, classes=2), tmp_path / "zoo" / "gresnetfc2.two",
                             weight_id="gresnetfc2.two", recipe="r", command="c",
                             metrics={"test_accuracy": 0.5, "split": "test", "num_examples": 4},
                             dataset_note="d", training_log=log)
    kg_hub.publish(folder, "user/two")
    for weights in ("hf://user/two", str(folder)):  # the same weights, served or local
        with pytest.raises(ValueError, match="classify 2 classes but .* has 3"):
            evaluate("gresnetfc2", weights, str(data))


@pytest.mark.parametrize("model_args, words", [
    ({"include_preprocessing": False}, "trained with include_preprocessing=True"),
    ({"include_top": False}, "without the head"),
])
def test_evaluate_refuses_model_args_with_which_the_weights_cannot_score(model_args, words, tmp_path):
    from keras_gated.evaluation import evaluate

    data = make_image_folder(tmp_path / "data", per_class=(2, 2), classes=10)
    with pytest.raises(ValueError, match=words):
        evaluate("gresnetfc10", "fashion_mnist", str(data), model_args=model_args)


# --- images are read as the user means them ---------------------------------------------------
def _save(path, array, mode=None):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array, mode).save(path)
    return path


def _cifar_folder(root, size):
    from keras_gated.datasets import CLASS_NAMES

    rng = np.random.default_rng(0)
    for name in CLASS_NAMES["cifar10"]:
        _save(root / "test" / name / "0.png", rng.integers(0, 256, (size, size, 3), dtype=np.uint8))
    return root


def test_evaluate_never_crops_larger_images_and_resizes_when_told(tmp_path):
    from keras_gated.evaluation import evaluate

    data = _cifar_folder(tmp_path / "big", 64)
    with pytest.raises(ValueError, match=r"are 64×64 but gresnet20 takes 32×32.*--resize"):
        evaluate("gresnet20", "cifar10", str(data))
    result = evaluate("gresnet20", "cifar10", str(data), resize=True)
    assert result["num_examples"] == 10


def test_a_folder_of_fashion_mnist_classes_is_evaluated_through_a_class_map(tmp_path):
    from keras_gated import datasets
    from keras_gated.datasets import CLASS_NAMES
    from keras_gated.evaluation import evaluate

    try:
        x, y, _ = datasets.load_numpy("fashion_mnist", "test")
    except datasets.DatasetNotFoundError:
        pytest.skip("no local Fashion-MNIST copy")
    folders = ["tshirt", *CLASS_NAMES["fashion_mnist"][1:]]
    for i in range(60):
        _save(tmp_path / "f" / "test" / folders[y[i]] / f"{i}.png", x[i, ..., 0])
    with pytest.raises(ValueError, match="--class-map FOLDER=CLASS"):
        evaluate("gresnetfc10", "fashion_mnist", str(tmp_path / "f"))
    with pytest.raises(ValueError, match="names tee, which the data set does not have"):
        evaluate("gresnetfc10", "fashion_mnist", str(tmp_path / "f"),
                 class_map={"tee": "T-shirt/top"})
    result = evaluate("gresnetfc10", "fashion_mnist", str(tmp_path / "f"),
                      class_map={"tshirt": "T-shirt/top"})
    assert result["test_accuracy"] > 0.7  # the folders' labels renumbered to the net's order
    code, out, err = _cli("analyze", "gresnetfc10.fashion_mnist", "--dataset", str(tmp_path / "f"),
                          "--class-map", "tshirt=T-shirt/top", "--no-prune",
                          "--out", str(tmp_path / "analysis"))
    assert code == 0, err
    assert float(out.split("accuracy ")[1].split(";")[0]) == pytest.approx(result["test_accuracy"],
                                                                          abs=1e-4)
