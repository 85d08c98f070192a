"""Distribution strategies, each in its own process (device set-up is per process):
MirroredStrategy over two logical CPUs, MultiWorkerMirroredStrategy with two worker
processes on 127.0.0.1, JAX DataParallel over two host devices."""

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_gated  # noqa: F401  (registers the layers that load_model needs)
from tests.support.helpers import make_image_folder
from keras_gated.training import distribute

ROOT = Path(__file__).resolve().parents[2]
on_tf = pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="runs in the TensorFlow pass")
on_jax = pytest.mark.skipif(keras.backend.backend() != "jax", reason="runs in the JAX pass")


def _python(script: str, env: dict, timeout: int = 300) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT,
                            env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


TRAIN_SNIPPET = """
import numpy as np, keras, json
import keras_gated as kg
keras.utils.set_random_seed(0)  # the weights too: the loss checks below must not depend on luck
rng = np.random.default_rng(0)
x = rng.uniform(0, 255, (256, 28, 28, 1)).astype("float32")
y = (x[:, :14].mean(axis=(1, 2, 3)) > x[:, 14:].mean(axis=(1, 2, 3))).astype("int64")
"""


@on_tf
def test_mirrored_strategy_on_two_logical_cpus():
    out = _python(TRAIN_SNIPPET + """
import tensorflow as tf
from keras_gated.training import distribute
strategy = distribute.make_strategy("mirrored", cpu_replicas=2)
with strategy.scope():
    model = kg.GResNetFC(2, classes=2)
    model.compile(keras.optimizers.SGD(0.05), "sparse_categorical_crossentropy")
mirrored = all(isinstance(v.value, tf.distribute.DistributedValues) for v in model.weights)
history = model.fit(x, y, batch_size=32, epochs=4, verbose=0).history["loss"]
print(json.dumps({"replicas": strategy.num_replicas_in_sync, "mirrored": mirrored, "loss": history}))
""", {"KERAS_BACKEND": "tensorflow"})
    result = json.loads(out.strip().splitlines()[-1])
    assert result["replicas"] == 2 and result["mirrored"]
    assert result["loss"][-1] < result["loss"][0]


@pytest.mark.slow  # two worker processes; the mirrored strategy is tested in the default run
@on_tf
def test_multi_worker_strategy_two_processes_train_identically(tmp_path):
    folder = make_image_folder(tmp_path / "data", per_class=(64, 16))
    workers = [f"127.0.0.1:{_free_port()}", f"127.0.0.1:{_free_port()}"]
    procs = []
    for index in range(2):
        tf_config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CONFIG": json.dumps(tf_config)}
        cmd = [sys.executable, "-m", "training.train", "--model", "gresnetfc2", "--dataset",
               str(folder), "--epochs", "2", "--batch-size", "16", "--strategy", "multiworker",
               "--out", str(tmp_path / f"worker{index}"), "--verbose", "0"]
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    outputs = [p.communicate(timeout=300) for p in procs]
    for p, (stdout, stderr) in zip(procs, outputs):
        assert p.returncode == 0, stderr[-4000:]
        assert "(2 replicas)" in stdout
    models = [keras.saving.load_model(tmp_path / f"worker{i}" / "last.keras") for i in range(2)]
    # Every trained parameter is identical (gradients are all-reduced). BN moving
    # statistics are not parameters: each worker estimates them from its own shard.
    trained = list(zip(*(m.trainable_weights for m in models)))
    assert len(trained) == 11  # stem 2, two Dot-BN layers 3 each, k, head 2
    for a, b in trained:
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b))
    moving = [w.path for w in models[0].non_trainable_weights]
    assert moving and all("moving_" in p or "preprocessing" in p for p in moving)
    for i in range(2):
        assert json.loads((tmp_path / f"worker{i}" / "metrics.json").read_text())["epochs"] == 2


@on_jax
def test_jax_data_parallel_over_two_host_devices(tmp_path):
    out = _python(TRAIN_SNIPPET + """
import jax
from keras_gated.training import distribute
distribute.make_strategy("dataparallel")
model = kg.GResNetFC(2, classes=2)
model.compile(keras.optimizers.SGD(0.05), "sparse_categorical_crossentropy")
history = model.fit(x, y, batch_size=32, epochs=4, verbose=0).history["loss"]
shardings = [v.value.sharding for v in model.weights]
print(json.dumps({
    "devices": len(jax.devices()),
    "mesh": [dict(s.mesh.shape) for s in shardings][0],
    "replicated": all(all(axis is None for axis in s.spec) for s in shardings),
    "on_both": all(len(s.device_set) == 2 for s in shardings),
    "loss": history,
}))
""", {"KERAS_BACKEND": "jax", "XLA_FLAGS": "--xla_force_host_platform_device_count=2"})
    result = json.loads(out.strip().splitlines()[-1])
    assert result["devices"] == 2 and result["mesh"] == {"batch": 2}
    assert result["replicated"] and result["on_both"]
    assert result["loss"][-1] < result["loss"][0]


@on_jax
def test_dataparallel_through_the_cli(tmp_path):
    folder = make_image_folder(tmp_path / "data", per_class=(32, 8))
    cmd = [sys.executable, "-m", "training.train", "--model", "gresnetfc2", "--dataset", str(folder),
           "--epochs", "1", "--batch-size", "16", "--strategy", "dataparallel", "--cpu-replicas", "2",
           "--out", str(tmp_path / "run"), "--verbose", "0"]
    result = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "KERAS_BACKEND": "jax"},
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "(2 replicas)" in result.stdout
    assert (tmp_path / "run" / "metrics.json").exists()


@on_tf
@pytest.mark.skipif(not keras.__version__.startswith(distribute.PATCHED_KERAS_VERSION_PREFIX),
                    reason="the multi-worker fix applies to Keras 3.15.x only")
def test_keras_internals_patched_for_multi_worker_are_unchanged():
    """Fails when a Keras 3.15.x release changes the functions the multi-worker fix
    replaces: re-verify the fix against it, then update PATCHED_KERAS_SOURCES."""
    from keras.src.backend.tensorflow import trainer

    if getattr(trainer, "_keras_gated_multi_worker_patch", False):
        pytest.skip("already patched in this process")
    assert distribute.keras_sources_to_patch() == distribute.PATCHED_KERAS_SOURCES
    assert distribute.multi_worker_patch_applies()


@on_tf
def test_multi_worker_fix_leaves_other_keras_versions_alone(monkeypatch):
    """On a Keras version the fix was not written for, nothing is patched and a warning
    says so (the dependency range allows any Keras 3 from 3.15.1)."""
    from keras.src.backend.tensorflow import trainer

    if getattr(trainer, "_keras_gated_multi_worker_patch", False):
        pytest.skip("already patched in this process")
    build, reduce = trainer.TensorFlowTrainer._maybe_symbolic_build, trainer.reduce_per_replica
    monkeypatch.setattr(keras, "__version__", "3.99.0")
    assert not distribute.multi_worker_patch_applies()
    with pytest.warns(UserWarning, match="written for Keras 3.15.x; Keras 3.99.0 runs its own"):
        distribute.patch_keras_for_multi_worker()
    assert trainer.TensorFlowTrainer._maybe_symbolic_build is build
    assert trainer.reduce_per_replica is reduce
    assert not getattr(trainer, "_keras_gated_multi_worker_patch", False)


def test_strategy_backend_mismatch_is_a_clear_error():
    wrong = "dataparallel" if keras.backend.backend() == "tensorflow" else "mirrored"
    with pytest.raises(ValueError, match="KERAS_BACKEND"):
        distribute.check_strategy(wrong)
    with pytest.raises(ValueError, match="default, mirrored, multiworker, tpu, dataparallel"):
        distribute.check_strategy("horovod")
