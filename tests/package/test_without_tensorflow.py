"""keras-gated without TensorFlow: on ``KERAS_BACKEND=jax`` every constructor, weights
from every source (with their sha256 check), the command line, ``training.train`` and
``training.finetune`` run and import no TensorFlow module.

Each check runs in a fresh JAX process in which TensorFlow cannot be imported: a
``sitecustomize`` on ``PYTHONPATH`` puts a finder first on ``sys.meta_path`` that refuses
``tensorflow*`` (and ``tf2onnx``, which imports it), as in an environment where it is not
installed, and writes the TensorFlow modules loaded at exit to a file the test reads.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.support.helpers import make_image_folder, needs_tensorflow
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]

SITECUSTOMIZE = '''
"""Hide TensorFlow from this process (tests/package/test_without_tensorflow.py)."""
import atexit
import json
import os
import sys

HIDDEN = ("tensorflow", "tf2onnx", "tf_keras")


class _HideTensorFlow:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0].startswith(HIDDEN):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _HideTensorFlow())


@atexit.register
def _report():
    loaded = sorted(m for m in sys.modules if m.split(".")[0].startswith(HIDDEN))
    with open(os.environ["TF_FREE_REPORT"], "a") as f:
        f.write(json.dumps(loaded) + "\\n")
'''


@pytest.fixture(scope="module")
def hider(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hide_tensorflow")
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return folder


def run_tf_free(args: list[str], hider: Path, tmp_path: Path, env: dict | None = None,
                timeout: int = 600) -> subprocess.CompletedProcess:
    """``python ARGS`` on JAX with TensorFlow hidden; asserts it exits 0 and loaded no
    TensorFlow module."""
    report = tmp_path / f"tf_free_{len(list(tmp_path.glob('tf_free_*')))}.jsonl"
    full_env = {**os.environ, "KERAS_BACKEND": "jax", "TF_FREE_REPORT": str(report),
                "PYTHONPATH": os.pathsep.join([str(hider), str(ROOT)]),
                "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"), **(env or {})}
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                            timeout=timeout, env=full_env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    reports = [json.loads(line) for line in report.read_text().splitlines()]
    assert reports and all(loaded == [] for loaded in reports), reports
    return result


def script(body: str) -> list[str]:
    return ["-c", textwrap.dedent(body)]


def test_tensorflow_is_hidden_and_its_features_say_how_to_get_it(hider, tmp_path):
    result = run_tf_free(script("""
        import sys
        try:
            import tensorflow
        except ModuleNotFoundError:
            print("hidden")
        from keras_gated import datasets
        from keras_gated.tensorflow_cpu import TensorFlowRequiredError, tensorflow_available
        assert not tensorflow_available()
        for call in (lambda: datasets.load("fashion_mnist", "test"),
                     lambda: datasets.load("mnist_not_local", "test")):
            try:
                call()
            except TensorFlowRequiredError as error:
                print("refused:", error)
        import keras_gated as kg
        from keras_gated.export import export
        try:
            export(kg.GResNetFC(2), "m_savedmodel", "savedmodel")
        except TensorFlowRequiredError as error:
            print("refused:", error)
        assert "tensorflow" not in sys.modules
    """), hider, tmp_path)
    assert result.stdout.startswith("hidden")
    refusals = [line for line in result.stdout.splitlines() if line.startswith("refused:")]
    assert len(refusals) == 3, result.stdout
    assert all('pip install "keras-gated[tensorflow]"' in line for line in refusals)


@pytest.mark.slow
def test_a_model_of_every_family_builds_without_tensorflow(hider, tmp_path):
    """The first (smallest) registered model of every family (about a minute on JAX's
    first eager initialisers: slow)."""
    result = run_tf_free(script("""
        from keras_gated import create_model, get_model_entry, list_models
        families = {}
        for name in list_models():
            entry = get_model_entry(name)
            if not entry.slow:
                families.setdefault(entry.family, name)
        for name in families.values():
            create_model(name)
        print("built", len(families))
    """), hider, tmp_path)
    assert int(result.stdout.split("built ")[1].split()[0]) >= 6


def test_weights_from_every_source_without_tensorflow(hider, tmp_path, hub):  # noqa: F811
    """Weights load from a bundled tag, a .weights.h5 file, a zoo folder and the Hub
    (hf://), each checked against its sha256: a copy with one byte changed is refused."""
    import keras_gated as kg
    from keras_gated.release import hub as kg_hub
    from keras_gated.release import zoo_folder as kg_zoo
    from tests.support.hub_fixtures import flip_one_byte, trained_ish

    folder = tmp_path / "src" / "gresnet8.cifar10"
    model = trained_ish(kg.GResNet(8), seed=3)
    kg_zoo.save_zoo_folder(model, folder, weight_id="gresnet8.cifar10",
                           metrics={"test_accuracy": 0.5, "split": "test", "num_examples": 4},
                           recipe="test", command="none", dataset_note="synthetic")
    commit = kg_hub.publish(folder, "keras-gated/gresnet8.cifar10")
    model.save_weights(tmp_path / "mine.weights.h5")
    bad = tmp_path / "badzoo" / "gresnet20.cifar10"
    shutil.copytree(ROOT / "zoo" / "gresnet20.cifar10", bad)
    flip_one_byte(bad / "model.weights.h5")
    x = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "expected.npy", np.asarray(model.predict(x, verbose=0)))
    result = run_tf_free(script(f"""
        import numpy as np, keras_gated as kg
        x, expected = np.load("x.npy"), np.load("expected.npy")
        g20 = kg.GResNet20(weights="cifar10")  # the bundled release, sha256-checked
        print("tag", g20.pretrained_cfg["weight_id"])
        for source in ("mine.weights.h5", {str(folder)!r},
                       "hf://keras-gated/gresnet8.cifar10@{commit}"):
            got = kg.GResNet(8, weights=source).predict(x, verbose=0)
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
            print("loaded", source)
        import os
        os.environ["KERAS_GATED_ZOO"] = {str(tmp_path / "badzoo")!r}
        try:
            kg.GResNet20(weights="cifar10")
        except Exception as error:
            print("refused", type(error).__name__, "sha256" in str(error))
    """), hider, tmp_path, env={"HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0",
                                "KERAS_GATED_ZOO": str(ROOT / "zoo"),
                                "HF_HOME": os.environ.get("HF_HOME", str(tmp_path / "hf"))})
    out = result.stdout
    assert "tag gresnet20.cifar10" in out and out.count("loaded ") == 3, out
    assert "refused" in out and out.split("refused ")[1].split()[1] == "True", out


def run_commands(commands: list[list[str]], hider: Path, tmp_path: Path) -> None:
    """``keras_gated.cli.main(argv)`` for each of ``commands`` in one TensorFlow-free
    process; each must return 0."""
    result = run_tf_free(script(f"""
        from keras_gated.cli import main
        for argv in {commands!r}:
            print("rc", argv[0], main(argv), flush=True)
    """), hider, tmp_path)
    codes = [line.split()[1:] for line in result.stdout.splitlines() if line.startswith("rc ")]
    assert codes == [[argv[0], "0"] for argv in commands], result.stdout + result.stderr


def test_command_line_without_tensorflow(hider, tmp_path):
    """demo (as the console script runs it), list, info and evaluate."""
    from keras_gated import create_model

    folder = make_image_folder(tmp_path / "folder", per_class=(8, 6))
    create_model("gresnetfc2", classes=2).save_weights(tmp_path / "fc2.weights.h5")
    run_commands([["list"], ["info", "gresnetfc2"],
                  ["evaluate", "gresnetfc2", "--weights", "fc2.weights.h5", "--dataset", str(folder)]],
                 hider, tmp_path)
    demo = run_tf_free(["-m", "keras_gated.cli", "demo"], hider, tmp_path)
    assert "accuracy on these 20 images" in demo.stdout


@pytest.mark.slow
@pytest.mark.needs("jax2onnx")
def test_analyze_export_convert_without_tensorflow(hider, tmp_path):
    """analyze, export to ONNX (jax2onnx) and convert (a .safetensors state dict): about
    two minutes of JAX compilations, so slow."""
    from keras_gated import create_model

    folder = make_image_folder(tmp_path / "folder", per_class=(8, 6))
    create_model("gresnetfc2", classes=2).save_weights(tmp_path / "fc2.weights.h5")
    commands = [
        ["analyze", "gresnetfc2", "--weights", "fc2.weights.h5", "--dataset", str(folder),
         "--out", "analysis", "--examples", "8"],
        ["export", "gresnetfc2", "--format", "onnx", "--out", "m.onnx"],
    ]
    try:
        from safetensors.numpy import save_file

        from tests.support.torch_references import wrn_params

        save_file({k: v.numpy() for k, v in wrn_params(2, 2, seed=2).items()},
                  str(tmp_path / "wrn.safetensors"))
        commands.append(["convert", "wrn_16_2", "wrn.safetensors", "--from", "wrn", "--out",
                         "converted"])
    except ImportError:  # no torch here to write the reference weights: convert untested
        pass
    run_commands(commands, hider, tmp_path)
    assert (tmp_path / "analysis" / "analysis.json").is_file() and (tmp_path / "m.onnx").is_file()


def test_train_and_finetune_one_epoch_without_tensorflow(hider, tmp_path):
    folder = make_image_folder(tmp_path / "folder", per_class=(24, 6))
    run_tf_free(["-m", "training.train", "--model", "gresnetfc2", "--dataset", str(folder),
                 "--epochs", "1", "--batch-size", "16", "--out", "run", "--verbose", "0"],
                hider, tmp_path)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert 0 <= metrics["test_accuracy"] <= 1 and (tmp_path / "run" / "last.keras").is_file()
    from keras_gated import create_model

    create_model("gresnetfc2", classes=2).save_weights(tmp_path / "fc2.weights.h5")
    run_tf_free(["-m", "training.finetune", "--model", "gresnetfc2", "--weights",
                 "fc2.weights.h5", "--dataset", str(folder),
                 "--train-examples", "20", "--epochs", "1", "--batch-size", "8",
                 "--out", "ft", "--verbose", "0"], hider, tmp_path)
    assert (tmp_path / "ft" / "metrics.json").is_file()


@pytest.mark.slow  # the default run reproduces a card without TensorFlow (below)
@needs_tensorflow
def test_gresnet20_predicts_the_same_without_tensorflow(hider, tmp_path):
    """The released GResNet20 on the demo images: TensorFlow backend in this process, JAX
    without TensorFlow in a fresh one: the same top-1 classes, probabilities to 1e-4."""
    import keras

    if keras.backend.backend() != "tensorflow":
        pytest.skip("compares with the TensorFlow backend")
    import keras_gated as kg
    from keras_gated.evaluation import demo_images

    images, _, _ = demo_images()
    expected = np.asarray(kg.GResNet20(weights="cifar10").predict(images.astype("float32"), verbose=0))
    run_tf_free(script("""
        import numpy as np, keras_gated as kg
        from keras_gated.evaluation import demo_images
        images, _, _ = demo_images()
        np.save("jax.npy", kg.GResNet20(weights="cifar10").predict(images.astype("float32"), verbose=0))
    """), hider, tmp_path)
    got = np.load(tmp_path / "jax.npy")
    assert (got.argmax(1) == expected.argmax(1)).all()
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_released_fashion_mnist_card_is_reproduced_without_tensorflow(hider, tmp_path):
    """``keras-gated evaluate gresnetfc10 --weights fashion_mnist --dataset fashion_mnist``
    gives its card's 87.92 % on the TensorFlow-free path."""
    from keras_gated import datasets

    if datasets._find(datasets.FASHION_MNIST_DIR) is None:
        pytest.skip("no local Fashion-MNIST copy")
    result = run_tf_free(["-m", "keras_gated.cli", "evaluate", "gresnetfc10", "--weights",
                          "fashion_mnist", "--dataset", "fashion_mnist"], hider, tmp_path)
    assert "test accuracy: 0.8792" in result.stdout, result.stdout
