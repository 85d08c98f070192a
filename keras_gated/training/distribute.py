"""Distribution strategies through the existing engines.

``--strategy``:

* ``default``: no distribution (one device; a GPU if there is one).
* ``mirrored``: ``tf.distribute.MirroredStrategy`` (TensorFlow backend) over the GPUs, or
  over ``cpu_replicas`` logical CPU devices on a CPU-only host (2 by default).
* ``multiworker``: ``tf.distribute.MultiWorkerMirroredStrategy`` (TensorFlow backend),
  the cluster from ``TF_CONFIG``. Keras 3.15's ``fit`` fails under it
  (keras-team/keras#20585 and the scalar-metric reduction of tensorflow/tensorflow#72388);
  ``patch_keras_for_multi_worker`` fixes both, on Keras 3.15.x only (the version it was
  written and tested for); on any other Keras version it patches nothing, warns, and
  Keras's own code runs.
* ``tpu``: ``tf.distribute.TPUStrategy`` from ``TPUClusterResolver`` (TensorFlow backend).
  **Untested**: no TPU can be reached from the machines this project is tested on.
* ``dataparallel``: ``keras.distribution.DataParallel`` over every device (JAX backend).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import warnings

STRATEGIES = ("default", "mirrored", "multiworker", "tpu", "dataparallel")
_TF_STRATEGIES = ("mirrored", "multiworker", "tpu")

# The Keras versions the multi-worker fix was written for, and the source hashes of the
# two Keras functions it replaces there. The fix is applied only when both match; if a
# 3.15.x release changes the functions, tests/training/test_distribute.py fails:
# re-verify the fix, then update. To extend it to a newer Keras, verify it there first.
PATCHED_KERAS_VERSION_PREFIX = "3.15."
PATCHED_KERAS_SOURCES = {
    "TensorFlowTrainer._maybe_symbolic_build": "92a504f5eba9b29f",
    "reduce_per_replica": "2e7d54b1e6edc29a",
}
_PATCHED_FLAG = "_keras_gated_multi_worker_patch"  # set on Keras's trainer module once patched


def _backend() -> str:
    import keras

    return keras.backend.backend()


def check_strategy(name: str) -> str:
    if name not in STRATEGIES:
        raise ValueError(f"Unknown `--strategy`={name!r}. Allowed values: {', '.join(STRATEGIES)}.")
    backend = _backend()
    if name in _TF_STRATEGIES and backend != "tensorflow":
        raise ValueError(
            f"--strategy {name} uses tf.distribute and needs KERAS_BACKEND=tensorflow "
            f"(now {backend!r}); on JAX use --strategy dataparallel."
        )
    if name == "dataparallel" and backend != "jax":
        raise ValueError(
            f"--strategy dataparallel uses keras.distribution and needs KERAS_BACKEND=jax "
            f"(now {backend!r}); on TensorFlow use --strategy mirrored."
        )
    return name


def configure_cpu_replicas(count: int) -> None:
    """Split the CPU into ``count`` logical devices (before TensorFlow starts using it)."""
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)]
    )


def source_hash(function) -> str:
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:16]


def keras_sources_to_patch() -> dict[str, str]:
    """Source hashes of the installed Keras's versions of the functions the fix replaces."""
    from keras.src.backend.tensorflow import trainer as tf_trainer

    return {
        "TensorFlowTrainer._maybe_symbolic_build": source_hash(
            tf_trainer.TensorFlowTrainer._maybe_symbolic_build
        ),
        "reduce_per_replica": source_hash(tf_trainer.reduce_per_replica),
    }


def multi_worker_patch_applies() -> bool:
    """Whether the installed Keras is one the multi-worker fix was written for: a 3.15.x
    version whose two replaced functions are unchanged (checked before patching)."""
    import keras

    if not keras.__version__.startswith(PATCHED_KERAS_VERSION_PREFIX):
        return False
    from keras.src.backend.tensorflow import trainer as tf_trainer

    if getattr(tf_trainer, _PATCHED_FLAG, False):  # patched already: it applied
        return True
    return keras_sources_to_patch() == PATCHED_KERAS_SOURCES


def patch_keras_for_multi_worker() -> None:
    """Make Keras 3.15 ``fit``/``evaluate`` work under MultiWorkerMirroredStrategy.

    Only on the Keras versions it was written for (``multi_worker_patch_applies``);
    elsewhere it warns and leaves Keras as it is.

    1. ``_maybe_symbolic_build`` reduces the peeked input batch with
       ``strategy.reduce("MEAN", batch)``, which multi-worker strategies reject
       (keras-team/keras#20585): build from the first local replica's batch instead.
    2. ``reduce_per_replica`` reduces scalar metrics with ``axis=0``
       (tensorflow/tensorflow#72388): reduce them with ``axis=None``.
    Both only change the multi-worker path; other strategies run Keras's own code.
    """
    import keras

    if not multi_worker_patch_applies():
        warnings.warn(
            f"The multi-worker fix in keras_gated/training/distribute.py was written for Keras "
            f"{PATCHED_KERAS_VERSION_PREFIX}x; Keras {keras.__version__} runs its own code, "
            "whose fit fails under MultiWorkerMirroredStrategy unless that version fixed "
            "the two failures patch_keras_for_multi_worker describes.",
            UserWarning,
            stacklevel=2,
        )
        return
    import tensorflow as tf
    from keras.src import tree
    from keras.src.backend.tensorflow import trainer as tf_trainer

    if getattr(tf_trainer, _PATCHED_FLAG, False):
        return
    original_build = tf_trainer.TensorFlowTrainer._maybe_symbolic_build
    original_reduce = tf_trainer.reduce_per_replica
    multi_worker = tf_trainer._collective_all_reduce_multi_worker

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        strategy = self._distribute_strategy
        if strategy is None or iterator is None or not multi_worker(strategy):
            return original_build(self, iterator=iterator, data_batch=data_batch)
        for _, _, it in iterator:
            batch = next(it)
            data_batch = tree.map_structure(
                lambda x: strategy.experimental_local_results(x)[0]
                if isinstance(x, tf.distribute.DistributedValues)
                else x,
                batch,
            )
            break
        with strategy.scope():
            self._symbolic_build(data_batch=data_batch)

    def reduce_per_replica(values, strategy, reduction):
        if reduction in ("auto", "mean") and multi_worker(strategy):
            return tree.map_structure(lambda v: strategy.reduce("MEAN", v, axis=None), values)
        return original_reduce(values, strategy, reduction)

    tf_trainer.TensorFlowTrainer._maybe_symbolic_build = _maybe_symbolic_build
    tf_trainer.reduce_per_replica = reduce_per_replica
    setattr(tf_trainer, _PATCHED_FLAG, True)


def make_strategy(name: str, cpu_replicas: int | None = None):
    """The ``tf.distribute`` strategy for ``name`` (None for default and dataparallel).

    For ``dataparallel`` the Keras distribution is set globally instead.
    """
    check_strategy(name)
    if name == "default":
        return None
    if name == "dataparallel":
        import keras

        devices = keras.distribution.list_devices()
        keras.distribution.set_distribution(keras.distribution.DataParallel(devices=devices))
        return None
    import tensorflow as tf

    if name == "mirrored":
        gpus = tf.config.list_physical_devices("GPU")
        if gpus:
            return tf.distribute.MirroredStrategy()
        count = cpu_replicas or 2
        configure_cpu_replicas(count)
        return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(count)])
    if name == "multiworker":
        if "TF_CONFIG" not in os.environ:
            raise ValueError(
                "--strategy multiworker needs TF_CONFIG (the cluster and this worker's "
                'index), e.g. {"cluster": {"worker": ["host1:port", "host2:port"]}, '
                '"task": {"type": "worker", "index": 0}}.'
            )
        patch_keras_for_multi_worker()
        return tf.distribute.MultiWorkerMirroredStrategy()
    # tpu: untested here (no TPU reachable); the standard TF 2 recipe.
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def scope(strategy):
    """``strategy.scope()``, or a no-op context without a tf.distribute strategy."""
    return strategy.scope() if strategy is not None else contextlib.nullcontext()


def num_replicas(strategy) -> int:
    if strategy is not None:
        return strategy.num_replicas_in_sync
    import keras

    distribution = keras.distribution.distribution()
    if distribution is not None:
        return len(distribution.device_mesh.devices.flatten())
    return 1


def shard_for_workers(ds, strategy):
    """Auto-shard a dataset by data across the workers of a multi-worker strategy."""
    if strategy is None:
        return ds
    import tensorflow as tf

    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return ds.with_options(options)
