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


# Modules whose subject does not depend on the Keras backend (command lines run in
# subprocesses, packaging, the benchmark harness) or that sweep every registered model
# through the same builder: they run once, in the TensorFlow pass of tests/run.sh, which
# keeps the two-backend default run within its time budget. The weights they load and
# the layers they build are exercised on every backend by the other tests.
ONCE_MODULES = (
    "tests/test_packaging.py",
    "tests/benchmarks/",
    "tests/reliability/test_training_runs.py",
    "tests/reliability/test_weights_cli.py",
    "tests/reliability/test_weights_hub.py",
    "tests/test_timm_api.py",
    "tests/analysis/",
    "tests/models/test_parameter_counts.py",  # counts do not depend on the backend
    "tests/training/test_release.py",  # files, cards and configs
    "tests/training/test_release_compressed.py",
    "tests/training/test_lease_several.py",  # bundle files and processes; its CPU run is JAX's
    "tests/experiments/",  # the paper reproductions' scripts, records and figures
    "tests/test_repository.py",  # the tracked tree
    "tests/test_convert.py",  # array mapping; every backend loads the same arrays
    "tests/test_hub.py",  # the Hub protocol
    "tests/test_datasets.py",  # tf.data / numpy on every backend
    "tests/test_catalog.py",
    "tests/test_import_graph.py",
    "tests/test_pretrained_cfgs.py",
    # JAX subprocesses with TensorFlow hidden, compared with the TensorFlow backend.
    "tests/test_without_tensorflow.py",
)
# The full test-split evaluations of the released checkpoints likewise (the accuracy is
# a property of the weights; every backend computes the same outputs to 1e-6, which the
# other backends check on one of them, kept below).
ONCE_TESTS = (
    "test_released_accuracy_is_reproduced[",
    # Every registered model's initial kernels (drawn by Python's seeded ``random``), and a
    # large bundle's size: neither depends on the backend.
    "test_no_two_same_shaped_kernels_of_a_fresh_model_are_equal[",
    "test_the_flagship_bundle_fits_what_a_call_brings_back",
    "test_the_flagship_is_released_sharded_in_bfloat16_with_its_lease_record",
)
# Modules under ONCE_MODULES that train or compare outputs on every backend all the same
# (compression trains under a penalty through plain ``fit`` on each backend).
EVERY_BACKEND_MODULES = ("tests/analysis/test_compress.py", "tests/analysis/test_compress_backup.py")
EVERY_BACKEND = ("test_released_accuracy_is_reproduced[gresnetfc10.fashion_mnist]",)
ONCE_BACKEND = "tensorflow"


def pytest_collection_modifyitems(config, items):
    if keras.backend.backend() == ONCE_BACKEND:
        return
    skip = pytest.mark.skip(reason=f"backend-independent: runs once, in the {ONCE_BACKEND} pass")
    root = config.rootpath
    for item in items:
        path = item.path.relative_to(root).as_posix()
        once = item.name.startswith(ONCE_TESTS) and item.name not in EVERY_BACKEND
        every = path.startswith(EVERY_BACKEND_MODULES)
        if (path.startswith(ONCE_MODULES) and not every) or once:
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
