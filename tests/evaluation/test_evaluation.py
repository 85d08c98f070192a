"""keras-gated evaluate and demo, on weights written here."""

import io

import numpy as np
import pytest

import keras_gated as kg
from keras_gated import datasets
from keras_gated.cli import main
from keras_gated.evaluation import demo_images, evaluate, run_demo
from tests.support.helpers import make_image_folder, needs_tensorflow


def test_evaluate_matches_a_manual_count(tmp_path, capsys):
    folder = make_image_folder(tmp_path / "data", per_class=(4, 15))
    model = kg.GResNetFC(2, classes=2)  # the gresnetfc2 architecture with a 2-class head
    path = tmp_path / "w.weights.h5"
    model.save_weights(path)
    x, y, _ = datasets.load_numpy(str(folder), "test")
    expected = float(np.mean(model.predict(x.astype("float32"), verbose=0).argmax(1) == y))
    result = evaluate("gresnetfc2", str(path), str(folder))
    assert result["num_examples"] == 30
    assert np.isclose(result["test_accuracy"], expected)
    assert main(["evaluate", "gresnetfc2", "--weights", str(path), "--dataset", str(folder)]) == 0
    assert f"test accuracy: {expected:.4f}" in capsys.readouterr().out


def test_evaluate_builds_the_model_with_the_arguments_it_was_trained_with(tmp_path, capsys):
    folder = make_image_folder(tmp_path / "data", per_class=(4, 15))
    model = kg.PlainNet(2, classes=2, units=7, batch_norm=False)  # plainnet2, other widths
    path = tmp_path / "w.weights.h5"
    model.save_weights(path)
    x, y, _ = datasets.load_numpy(str(folder), "test")
    expected = float(np.mean(model.predict(x.astype("float32"), verbose=0).argmax(1) == y))
    args = ["evaluate", "plainnet2", "--weights", str(path), "--dataset", str(folder)]
    assert main(args) == 2  # the default plainnet2 (50 units, batch norm) does not fit them
    capsys.readouterr()
    assert main([*args, "--model-arg", "units=7", "--model-arg", "batch_norm=False"]) == 0
    assert f"test accuracy: {expected:.4f}" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([*args, "--model-arg", "classes=3"])
    assert "set from the data set" in capsys.readouterr().err


def test_evaluate_uses_the_weights_class_count_and_refuses_a_mismatch(tmp_path):
    folder = make_image_folder(tmp_path / "data", per_class=(4, 5), classes=3)
    three = kg.GResNetFC(2, classes=3)
    path = tmp_path / "three.weights.h5"
    three.save_weights(path)
    x, y, _ = datasets.load_numpy(str(folder), "test")
    expected = float(np.mean(three.predict(x.astype("float32"), verbose=0).argmax(1) == y))
    assert np.isclose(evaluate("gresnetfc2", str(path), str(folder))["test_accuracy"], expected)
    ten = tmp_path / "ten.weights.h5"
    kg.GResNetFC(2).save_weights(ten)
    with pytest.raises(ValueError, match="classify 10 classes but .* has 3"):
        evaluate("gresnetfc2", str(ten), str(folder))


def test_demo_images_are_bundled_and_decoded():
    images, labels, names = demo_images()
    assert images.shape == (20, 32, 32, 3) and images.dtype == np.uint8
    assert np.bincount(labels).tolist() == [2] * 10 and names[0] == "airplane"


def test_demo_prints_top3_and_accuracy(tmp_path):
    model = kg.GResNet20()
    path = tmp_path / "g20.weights.h5"
    model.save_weights(path)
    out = io.StringIO()
    accuracy = run_demo(weights=str(path), out=out)
    lines = out.getvalue().splitlines()
    assert len([line for line in lines if "-> " in line]) == 20
    assert all(line.count("%") == 3 for line in lines if "-> " in line)
    assert f"accuracy on these 20 images: {accuracy:.1%}" in lines[-1]
    # The report names the weights it loaded, not the released ones.
    assert lines[0].startswith(f"GResNet20 ({path}) on 20 bundled")
    assert "gresnet20.cifar10" not in out.getvalue()


@pytest.mark.slow  # CI runs `keras-gated demo` itself; test_packaging runs it from the wheel
@pytest.mark.skipif(
    "gresnet20.cifar10" not in kg.list_models(pretrained=True), reason="not released"
)
def test_readme_demo_runs_in_a_fresh_process():
    """The README's first command, as a newcomer runs it (nothing preloaded)."""
    import os
    import subprocess
    import sys

    import keras

    if keras.backend.backend() != "tensorflow":
        pytest.skip("runs once, in the TF pass")
    result = subprocess.run([sys.executable, "-m", "keras_gated.cli", "demo"], capture_output=True,
                            text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "accuracy on these 20 images" in result.stdout


@needs_tensorflow
def test_both_data_engines_give_the_same_accuracy(tmp_path):
    """``--data-engine numpy`` (no TensorFlow) and ``tf`` count the same correct images,
    through the adaptation of 28x28 grey images to a 32x32 RGB net too."""
    folder = make_image_folder(tmp_path / "data", per_class=(4, 15))
    path = tmp_path / "g20.weights.h5"
    kg.GResNet20(classes=2).save_weights(path)
    numpy_result = evaluate("gresnet20", str(path), str(folder), data_engine="numpy")
    tf_result = evaluate("gresnet20", str(path), str(folder), data_engine="tf")
    assert numpy_result == tf_result and numpy_result["num_examples"] == 30
    with pytest.raises(ValueError, match="Unknown data engine"):
        evaluate("gresnet20", str(path), str(folder), data_engine="grain")
