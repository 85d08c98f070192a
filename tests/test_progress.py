"""Progress bars of the long commands, and no native log lines from the command line."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from keras_gated import progress

ROOT = Path(__file__).resolve().parents[1]
# A line of TensorFlow's or XLA's C++ log (absl/glog format), or absl's preamble.
NATIVE_LOG_LINE = re.compile(r"^([IWEF]\d{4} |WARNING: All log messages before absl)", re.M)


@pytest.fixture
def bars_on():
    progress.set_enabled(True)
    yield
    progress.set_enabled(None)


def test_a_bar_goes_to_stderr_only_when_shown(capsys, bars_on):
    assert list(progress.track(range(3), "counting three", unit="item")) == [0, 1, 2]
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("counting three\n") and "3/3" in captured.err
    progress.set_enabled(False)
    assert list(progress.track(range(3), "counting three")) == [0, 1, 2]
    assert capsys.readouterr() == ("", "")


def test_evaluation_in_batches_shows_its_progress(capsys, bars_on):
    import keras

    from keras_gated.evaluation import accuracy_in_batches

    inputs = keras.Input((4, 4, 1))
    model = keras.Model(inputs, keras.layers.Dense(2, activation="softmax")(keras.layers.Flatten()(inputs)))
    images = np.zeros((10, 4, 4, 1), "uint8")
    accuracy = accuracy_in_batches(model, images, np.zeros(10, "int64"), batch_size=4)
    assert 0.0 <= accuracy <= 1.0
    err = capsys.readouterr().err
    assert "evaluating 10 images" in err and "3/3" in err


def _demo_folder(root: Path) -> Path:
    """The 20 bundled CIFAR-10 test images as an image folder (test split only)."""
    from PIL import Image

    from keras_gated.evaluation import demo_images

    images, labels, names = demo_images()
    for i, (image, label) in enumerate(zip(images, labels)):
        folder = root / "test" / names[label]
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.asarray(image, "uint8")).save(folder / f"{i:02d}.png")
    return root


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``python -m keras_gated.cli ARGS`` with this checkout's package, TensorFlow's log
    level left unset (as a user's shell has it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_GATED_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run([sys.executable, "-m", "keras_gated.cli", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd, env=env)


def test_evaluate_shows_a_bar_on_request_and_no_native_log_lines(tmp_path):
    folder = _demo_folder(tmp_path / "demo")
    command = ["evaluate", "gresnet20", "--weights", "cifar10", "--dataset", str(folder)]
    result = _cli(["--progress", *command], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    import keras_gated as kg
    from keras_gated.evaluation import demo_images

    images, labels, _ = demo_images()
    predicted = kg.create_model("gresnet20.cifar10").predict(images.astype("float32"), verbose=0)
    assert f"test accuracy: {np.mean(predicted.argmax(-1) == labels):.4f}" in result.stdout
    assert "evaluating 20 images" in result.stderr and "1/1" in result.stderr, result.stderr
    assert "evaluating" not in result.stdout  # the bar stays off the results
    assert not NATIVE_LOG_LINE.search(result.stderr), result.stderr
    for word in ("cuda_platform", "cudart_stub", "oneDNN", "cuInit"):
        assert word not in result.stderr, result.stderr
    quiet = _cli(["--no-progress", *command], tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr[-3000:]


@pytest.mark.skipif(not __import__("keras_gated.backends", fromlist=["x"]).is_installed("tensorflow"),
                    reason="TensorFlow is not installed: it writes the start-up lines --debug shows")
def test_debug_shows_tensorflows_start_up_lines(tmp_path):
    result = _cli(["--debug", "--no-progress", "info", "gresnetfc2", "--params"], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert NATIVE_LOG_LINE.search(result.stderr), result.stderr


def test_analyze_counts_its_analyses_on_a_bar(tmp_path, capsys, bars_on):
    import keras_gated as kg
    from keras_gated.analysis.report import analyze

    model = kg.GResNetFC(2)  # removable blocks, one stage, no highway: 1 + 4 analyses
    x = np.random.default_rng(0).uniform(0, 255, (16, 28, 28, 1)).astype("float32")
    result = analyze(model, x, np.arange(16) % 10, tmp_path, with_prune=False)
    assert "removal_curves" in result and (tmp_path / "analysis.json").is_file()
    err = capsys.readouterr().err
    assert f"analyzing {model.name} on 16 images" in err and "5/5" in err, err
