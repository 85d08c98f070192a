"""Shared test set-up: quiet TF logs, fixed seeds, and helpers used across the suite."""

import os
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# On JAX, Keras draws each initial weight with a random kernel compiled once per weight
# shape, so building GResNet20 in a fresh process spends ~9 s compiling. A compilation
# cache for this test session (every compilation kept, however quick) builds the same
# shapes again from disk (~0.4 s). The first process to load this file makes it, a fresh
# private folder; the test workers and the processes started with this environment inherit
# it; the session removes it at its end. Its size cap makes JAX lock the folder, so two
# workers never read an entry half written.
_OWN_JAX_CACHE = None
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _OWN_JAX_CACHE = tempfile.mkdtemp(prefix="keras-gated-tests-jax-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _OWN_JAX_CACHE
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
    os.environ.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(4 << 30))

# The suite runs what users get: keras-gated imported first sets its CPU defaults
# (oneDNN on TensorFlow) before Keras imports the backend.
import keras_gated  # noqa: E402, F401  isort: skip
import keras  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.set_random_seed(1234)
    yield


@pytest.fixture
def backend() -> str:
    return keras.backend.backend()


# --- which tests run on which backend ----------------------------------------------------
# tests/run.sh runs the suite on TensorFlow, then on JAX. Everything runs in the
# TensorFlow pass; the JAX pass runs only the tests whose subject is what a backend
# computes: layers and models (outputs, gradients, saving and loading weights), the
# training loop and its fast path, the lease's compiled JAX step, compression's training,
# exports. Command lines, files, cards, the Hub protocol, packaging, docs and the paper
# records do not depend on the backend and run once; so do sweeps of every registered
# model through one builder (the layers they build are checked on both backends), and the
# constructors' options, names and model methods (tests/models/test_application_api.py,
# test_gated_model.py, test_postact_resnet.py: every family's forward pass and round trip
# run on both, in tests/models/test_families.py).
EVERY_BACKEND_PATHS = (
    "tests/layers/",
    "tests/models/test_compressed.py",
    "tests/models/test_families.py",
    "tests/training/test_data.py",
    "tests/training/test_distribute.py",
    "tests/training/test_fast_path.py",
    "tests/training/test_finetune.py",
    "tests/training/test_lease.py",
    "tests/training/test_loop.py",
    "tests/training/test_nan_watch.py",
    "tests/training/test_time_limit.py",
    "tests/training/test_train_cli.py",
    "tests/training/test_weight_decay.py",
    "tests/analysis/test_compress.py",  # compression trains under a penalty through fit
    "tests/analysis/test_compress_backup.py",
    "tests/conventions/test_keras_export.py",
    "tests/conventions/test_keras_hub.py",
    "tests/reliability/test_models_contract.py",
    "tests/reliability/test_predict_shapes.py",
    "tests/test_bfloat16_weights.py",
    "tests/test_export.py",
    "tests/test_features.py",
    "tests/test_gates.py",
    "tests/test_keras_hub.py",
    "tests/test_load_flow.py",
    "tests/test_mixed_precision.py",
    "tests/test_sharded_weights.py",
    "tests/test_weights.py",
)
# Tests in those paths that still run once: the full test-split evaluations of released
# checkpoints (every backend computes the same outputs to 1e-6, which the JAX pass checks
# on one of them, kept below), every registered model's initial kernels (drawn by
# Python's seeded ``random``), and a large bundle's size; then what the constructors and
# their configs decide (signatures, names, options, block choice, shapes, k's initial
# value and its round trip, a reload in a fresh process), which is Python the backend does
# not enter: each family's forward pass and round trip stay in every pass
# (tests/models/test_families.py's other tests).
ONCE_TESTS = (
    "test_released_accuracy_is_reproduced[",
    "test_no_two_same_shaped_kernels_of_a_fresh_model_are_equal[",
    "test_the_flagship_bundle_fits_what_a_call_brings_back",
    "test_the_flagship_is_released_sharded_in_bfloat16_with_its_lease_record",
    "test_signature_defaults_are_what_the_model_gets[",
    "test_default_names_are_registry_names",
    "test_block_choice_by_depth",
    "test_constructor_options_forward_and_round_trip[",
    "test_feature_maps_have_the_stage_strides_and_widths[",
    "test_every_k_starts_at_k_init[",
    "test_k_init_is_recorded_and_survives_a_round_trip",
    "test_a_reloaded_model_keeps_its_methods_in_a_fresh_process[",
    "test_shapes[",
    # keras-hub's own training and a generic classifier's round trip (its preset round
    # trip stays in every pass)
    "test_image_classifier_trains_on_a_gated_backbone",
    "test_a_generic_image_classifier_round_trips_with_its_head",
)
EVERY_BACKEND = ("test_released_accuracy_is_reproduced[gresnetfc10.fashion_mnist]",)
ONCE_BACKEND = "tensorflow"
# Sweeps of one behaviour over every release or family: the default run checks the
# representatives named here, `-m slow` the rest (tests/run.sh -m slow).
SWEEP_REPRESENTATIVES = {
    "test_released_accuracy_is_reproduced": ("gresnet20.cifar10", "gresnetfc10.fashion_mnist"),
    "test_pretrained_true_loads_the_backbone_with_a_new_head": ("gresnet20", "gresnetfc10"),
    "test_a_reloaded_model_keeps_its_methods_in_a_fresh_process": ("gresnet20.cifar10",),
}


# --- optional packages ----------------------------------------------------------------
# A test marked ``@pytest.mark.needs("torch")`` skips, naming the package and its install,
# where the package is missing (the README's set-up installs none of them). With
# KERAS_GATED_TEST_OPTIONAL_ONLY=1 only such tests run: CI's pass for the optional
# packages, after it installs them into the README's environment.
INSTALL_HINTS = {
    "torch": "pip install torch",
    "onnxruntime": "pip install 'keras-gated[onnx]'",
    "tf2onnx": "pip install 'keras-gated[onnx]'",
    "jax2onnx": "pip install 'keras-gated[onnx]'",
    "keras_hub": "pip install 'keras-gated[kerashub]'",
    "scipy": "pip install scipy",
}
OPTIONAL_ONLY = os.environ.get("KERAS_GATED_TEST_OPTIONAL_ONLY") == "1"


def _missing(packages) -> list[str]:
    import importlib.util

    return [p for p in packages if importlib.util.find_spec(p) is None]


def _optional_packages(config, items):
    kept, dropped = [], []
    for item in items:
        marks = list(item.iter_markers("needs"))
        if not marks:
            (dropped if OPTIONAL_ONLY else kept).append(item)
            continue
        kept.append(item)
        missing = _missing([p for m in marks for p in m.args])
        if missing:
            hints = "; ".join(f"{p} ({INSTALL_HINTS.get(p, 'pip install ' + p)})" for p in missing)
            item.add_marker(pytest.mark.skip(reason=f"needs {hints}"))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _sweeps(items):
    for item in items:
        name, _, param = item.name.partition("[")
        kept = SWEEP_REPRESENTATIVES.get(name)
        if kept is not None and param.rstrip("]") not in kept:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects
def pytest_collection_modifyitems(config, items):
    _sweeps(items)
    _optional_packages(config, items)
    if keras.backend.backend() == ONCE_BACKEND or os.environ.get("KERAS_GATED_TEST_EVERY_TEST") == "1":
        return  # KERAS_GATED_TEST_EVERY_TEST=1: every test on this backend too
    skip = pytest.mark.skip(reason=f"backend-independent: runs once, in the {ONCE_BACKEND} pass")
    root = config.rootpath
    for item in items:
        path = item.path.relative_to(root).as_posix()
        once = item.name.startswith(ONCE_TESTS) and item.name not in EVERY_BACKEND
        if not path.startswith(EVERY_BACKEND_PATHS) or once:
            item.add_marker(skip)


# --- the checkout is left as it was ---------------------------------------------------
# No test may write into the checkout's sources (a command run with its defaults, a
# benchmark smoke run, a publish to another repo): ``git status`` at the end of the run
# must be what it was at the start. Checked once, by the controlling process.
def _git_status(root) -> str | None:
    import subprocess

    try:
        done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                              cwd=root, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None  # None: not a git checkout


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):
        session.config._git_status_at_start = _git_status(session.config.rootpath)


def pytest_sessionfinish(session, exitstatus):
    if _OWN_JAX_CACHE is not None and not hasattr(session.config, "workerinput"):
        shutil.rmtree(_OWN_JAX_CACHE, ignore_errors=True)
    before = getattr(session.config, "_git_status_at_start", None)
    if before is None or hasattr(session.config, "workerinput"):
        return
    after = _git_status(session.config.rootpath)
    if after is not None and after != before:
        changed = sorted(set(after.splitlines()) ^ set(before.splitlines()))
        session.config.get_terminal_writer().line(
            "\nthe test run changed the checkout (git status): " + "; ".join(changed[:20]), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
