"""Shared test set-up: quiet TF logs, fixed seeds, and helpers used across the suite."""

import os
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# On JAX, Keras draws each initial weight with a random kernel compiled once per weight
# shape, so building GResNet20 in a fresh process spends ~9 s compiling. A compilation
# cache (every compilation kept, however quick) builds the same shapes again from disk
# (~0.4 s). tests/run.sh makes one for both its passes; without it, the first process to
# load this file makes one for its session, a fresh private folder, and removes it at the
# end. The test workers and the processes started with this environment inherit it. Its
# size cap makes JAX lock the folder, so two workers never read an entry half written.
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


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory):
    """A finished two-epoch run of gresnetfc2 on 32x32 RGB images (its model's default
    input is Fashion-MNIST's 28x28x1), in ``run/`` beside its data folder ``rgb/``."""
    from tests.support.helpers import make_image_folder
    from training import train

    root = tmp_path_factory.mktemp("run")
    folder = make_image_folder(root / "rgb", shape=(32, 32, 3), per_class=(20, 6))
    out = root / "run"
    assert train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "8", "--out", str(out), "--verbose", "0"]) == 0
    return out


# --- which tests run on which backend ----------------------------------------------------
# The paths and test names are in tests/support/backend_split.py.
from tests.support.backend_split import (  # noqa: E402
    EVERY_BACKEND,
    EVERY_BACKEND_PATHS,
    ONCE_BACKEND,
    ONCE_TESTS,
    SWEEP_REPRESENTATIVES,
)


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
