"""training.train runs on the fast path it reports (oneDNN or XLA on a TensorFlow CPU,
whichever is faster), logs every gate's k per epoch for gated nets, and refuses mixed
precision that this CPU would emulate."""

import csv
import json
import os
import platform
import subprocess
import sys

import keras
import numpy as np
import pytest

from keras_gated.precision import slow_mixed_precision
from tests.support.helpers import make_image_folder
from training import train


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_image_folder(tmp_path_factory.mktemp("data") / "tiny", per_class=(48, 16))


def test_the_fast_path_is_applied_reported_and_recorded(folder, tmp_path, capsys):
    out = tmp_path / "run"
    assert train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "16", "--out", str(out), "--verbose", "0"]) == 0
    printed = capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    path = metrics["fast_path"]
    backend = keras.backend.backend()
    assert path["backend"] == backend and path["dtype_policy"] == "float32"
    assert path["jit_compile"] is expected_jit_compile()
    assert (f"[train] fast path: backend {backend}, "
            f"{'torch.compile' if backend == 'torch' else 'XLA'} "
            f"{'on' if path['jit_compile'] else 'off'}") in printed
    if backend == "tensorflow":
        assert path["onednn"] is onednn_enabled()
        assert f"oneDNN {'on' if path['onednn'] else 'off'}" in printed
    # Gated nets: one row per gate and epoch.
    with (out / "gates.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["epoch"], r["block"]) for r in rows] == [("0", "block1"), ("1", "block1")]


def test_mixed_precision_is_refused_where_the_cpu_would_emulate_it(folder, tmp_path, capsys):
    if slow_mixed_precision("mixed_bfloat16") is None:
        pytest.skip("this machine runs bf16 natively (or has an accelerator)")
    out = tmp_path / "run"
    code = train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "1",
                       "--out", str(out), "--precision", "mixed_bfloat16"])
    assert code == 2
    error = capsys.readouterr().err
    assert "mixed_bfloat16" in error and "--precision float32" in error and "Traceback" not in error
    assert not out.exists()
    assert keras.config.dtype_policy().name == "float32"


def onednn_enabled() -> bool:
    from keras_gated.tensorflow_cpu import onednn_enabled

    return onednn_enabled()


def expected_jit_compile() -> bool:
    """JAX always compiles; TensorFlow on a CPU compiles only without oneDNN kernels."""
    backend = keras.backend.backend()
    if backend == "jax":
        return True
    if backend == "tensorflow":
        import tensorflow as tf

        return bool(tf.config.list_physical_devices("GPU")) or not onednn_enabled()
    return False


def test_model_fit_gets_the_fast_path_by_default_and_the_users_choice_wins():
    import keras_gated as kg

    model = kg.GResNetFC(2)
    model.compile("sgd", "sparse_categorical_crossentropy")
    assert model.jit_compile is expected_jit_compile()
    model.compile("sgd", "sparse_categorical_crossentropy", jit_compile=False)
    assert model.jit_compile is False
    model.compile("sgd", "sparse_categorical_crossentropy", jit_compile=True)
    assert model.jit_compile is True


FRESH_PROCESS = """
import keras_gated as kg, keras
from keras_gated.models.fast_path_model import describe_text
model = kg.GResNetFC(2)
model.compile("sgd", "sparse_categorical_crossentropy")
print(describe_text(model))
"""


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86 only")
@pytest.mark.parametrize("setting, expected", [
    (None, "XLA off for training, on for predict, float32, oneDNN on"),
    ("0", "XLA on, float32, oneDNN off")])
def test_importing_keras_gated_first_turns_onednn_on_unless_the_user_said_no(setting, expected):
    """What ``import keras_gated`` gives a new TensorFlow process on an x86 CPU: oneDNN
    kernels without XLA, or, with TF_ENABLE_ONEDNN_OPTS=0, Eigen kernels with XLA."""
    if keras.backend.backend() != "tensorflow":
        pytest.skip("a TensorFlow setting")
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    env.update(KERAS_BACKEND="tensorflow", CUDA_VISIBLE_DEVICES="")
    if setting is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = setting
    done = subprocess.run([sys.executable, "-c", FRESH_PROCESS], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout


def test_the_description_names_the_backends_compiler():
    import keras_gated as kg
    from keras_gated.models.fast_path_model import describe_text

    model = kg.GResNetFC(2)
    model.compile("sgd", "sparse_categorical_crossentropy", jit_compile=False)
    text = describe_text(model)
    backend = keras.backend.backend()
    assert text.startswith(f"backend {backend}, ")
    assert ("torch.compile off" if backend == "torch" else "XLA off") in text
    assert ("XLA" in text) is (backend != "torch")


def test_building_under_emulated_mixed_precision_warns_once():
    import keras_gated as kg
    from keras_gated import precision

    if slow_mixed_precision("mixed_bfloat16") is None:
        pytest.skip("this machine runs bf16 natively (or has an accelerator)")
    precision._warned.clear()
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        with pytest.warns(UserWarning, match="emulated") as record:
            kg.GResNetFC(2)
            kg.GResNetFC(2)
        assert sum("emulated" in str(w.message) for w in record) == 1
    finally:
        keras.mixed_precision.set_global_policy("float32")


def test_the_reported_thread_count_follows_tensorflows_variable(monkeypatch):
    from keras_gated.models.fast_path_model import describe

    if keras.backend.backend() != "tensorflow":
        pytest.skip("a TensorFlow setting")
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "1")
    assert describe(model)["intra_op_threads"] == 1
    monkeypatch.delenv("TF_NUM_INTRAOP_THREADS")
    assert describe(model)["intra_op_threads"] == "all cores"


@pytest.mark.parametrize("compiled", [True, False])
def test_predict_is_compiled_with_xla_where_onednn_trains_without_it(compiled, monkeypatch):
    """On a TensorFlow CPU with oneDNN, training runs without XLA and predict with it
    (small batches answer faster); the user's explicit jit_compile=False holds for both."""
    import keras_gated as kg

    if keras.backend.backend() != "tensorflow" or expected_jit_compile():
        pytest.skip("oneDNN kernels on a TensorFlow CPU only")
    import tensorflow as tf

    model = kg.GResNetFC(2)
    if compiled:
        model.compile("sgd", "sparse_categorical_crossentropy")
    x = np.random.default_rng(0).uniform(0, 255, (2, 28, 28, 1)).astype("float32")
    expected = np.asarray(model(x, training=False))

    def predict_step_jit_compile() -> bool:
        """Whether a fresh predict function compiles its step with XLA."""
        requested = []
        real = tf.function
        monkeypatch.setattr(tf, "function", lambda *a, **k: (requested.append(k.get("jit_compile")), real(*a, **k))[1])
        model.make_predict_function(force=True)
        monkeypatch.setattr(tf, "function", real)
        return True in requested

    assert predict_step_jit_compile()
    np.testing.assert_allclose(model.predict_on_batch(x), expected, atol=1e-5)
    assert model.jit_compile is False  # training is still without XLA
    model.compile("sgd", "sparse_categorical_crossentropy", jit_compile=False)
    assert not predict_step_jit_compile()


@pytest.mark.needs("torch")
def test_a_gpu_seen_by_torch_counts_as_an_accelerator_on_the_torch_backend(monkeypatch):
    """Keras's distribution API is absent on the torch backend: torch itself is asked, so a
    CUDA machine is not told that mixed precision would be emulated there."""
    import torch

    from keras_gated import precision

    monkeypatch.setattr(keras.backend, "backend", lambda: "torch")
    for available in (True, False):
        monkeypatch.setattr(torch.cuda, "is_available", lambda available=available: available)
        precision.has_accelerator.cache_clear()
        try:
            assert precision.has_accelerator() is available
            if available:
                assert slow_mixed_precision("mixed_bfloat16") is None
        finally:
            precision.has_accelerator.cache_clear()
