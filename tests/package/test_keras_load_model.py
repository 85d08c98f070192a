"""Keras's habit: ``keras.saving.load_model(folder or "hf://...")`` of a keras-gated save,
in a fresh interpreter that never imports keras_gated. An installed wheel puts
``keras_gated.pth`` and ``_keras_gated_startup.py`` (from ``startup/``) beside the
package; here a site folder holds those two files and a link to this checkout's package,
and the interpreter runs its ``.pth`` as it does for ``site-packages``
(``tests/package/test_packaging.py`` does the same with the built wheel)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_gated  # noqa: F401  (registers the classes in this process)
from keras_gated.cli import main
from tests.support.helpers import images, to_numpy
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
WEIGHT_ID = "gresnet20.cifar10"
FOLDER = ROOT / "zoo" / WEIGHT_ID  # a Keras save folder of a GatedModel
REPO = f"keras-gated/{WEIGHT_ID}"
STARTUP_FILES = {"keras_gated.pth.in": "keras_gated.pth", "_keras_gated_startup.py": "_keras_gated_startup.py"}
USER_CODE = """
import sys
assert "keras" not in sys.modules and "keras_gated" not in sys.modules
import keras, numpy as np
model = keras.saving.load_model(sys.argv[1])
np.save(sys.argv[2], model.predict(np.load(sys.argv[3]), verbose=0))
print(type(model).__name__)
"""


@pytest.fixture
def site_dir(tmp_path: Path) -> Path:
    """A site folder as a wheel install leaves it: the startup files and the package."""
    folder = tmp_path / "site"
    folder.mkdir()
    for source, installed in STARTUP_FILES.items():  # as setup.py installs them
        shutil.copy(ROOT / "startup" / source, folder / installed)
    (folder / "keras_gated").symlink_to(ROOT / "keras_gated", target_is_directory=True)
    return folder


def run_user_code(site: Path | None, source: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """``USER_CODE`` on ``source`` in ``python -S`` (this environment's site-packages as
    plain paths, so no editable install's ``.pth`` runs), with ``site`` processed as a
    site folder first; returns the process and the file of its predictions."""
    paths = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "KERAS_GATED"))}
    env.update(PYTHONPATH=os.pathsep.join(paths), KERAS_BACKEND=keras.backend.backend())
    start = "" if site is None else f"import site; site.addsitedir({str(site)!r}); "
    x, out = tmp_path / "x.npy", tmp_path / "out.npy"
    np.save(x, images(3, seed=7))
    code = start + f"import sys; sys.argv[1:] = {[source, str(out), str(x)]!r}\n" + USER_CODE
    result = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    return result, out


def expected() -> np.ndarray:
    return to_numpy(keras.saving.load_model(FOLDER).predict(images(3, seed=7), verbose=0))


def test_load_model_of_a_folder_works_without_importing_keras_gated(site_dir, tmp_path):
    result, out = run_user_code(site_dir, str(FOLDER), tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.split()[-1] == "GatedModel"
    np.testing.assert_allclose(np.load(out), expected(), atol=1e-5)


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None,
                    reason="Keras reads hf:// paths through TensorFlow's gfile")
def test_load_model_of_an_hf_repo_works_without_importing_keras_gated(
        site_dir, hub, tmp_path, capsys):  # noqa: F811
    copy = tmp_path / "zoo" / WEIGHT_ID
    shutil.copytree(FOLDER, copy)
    assert main(["publish", str(copy), "--repo-id", REPO]) == 0
    capsys.readouterr()
    # The subprocess inherits the fixtures' HF_ENDPOINT and empty HF_HOME.
    result, out = run_user_code(site_dir, f"hf://{REPO}", tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    np.testing.assert_allclose(np.load(out), expected(), atol=1e-5)


def test_without_the_startup_files_keras_cannot_find_the_classes(tmp_path):
    """What the ``.pth`` changes: the same code with no site folder run fails in Keras."""
    result, _ = run_user_code(None, str(FOLDER), tmp_path)
    assert result.returncode != 0
    assert "Could not locate class 'GatedModel'" in result.stderr


@pytest.mark.parametrize("code", [
    "import keras_gated.layers; import keras_gated as kg; kg.GResNet20()",
    "from keras_gated.models import GResNet20; GResNet20()",
    "import keras_gated, keras",
])
def test_the_startup_hook_and_the_package_hook_work_together(site_dir, tmp_path, code):
    """Importing keras-gated itself, in any order, with the startup hook already waiting:
    the classes are registered once and neither hook is left on ``sys.meta_path``."""
    paths = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "KERAS_GATED"))}
    env.update(PYTHONPATH=os.pathsep.join(paths), KERAS_BACKEND=keras.backend.backend())
    check = ("import keras, sys; "
             "print(keras.saving.get_registered_object('keras_gated>GatedModel').__name__, "
             "[type(f).__name__ for f in sys.meta_path].count('RegistrationHook'))")
    result = subprocess.run(
        [sys.executable, "-S", "-c", f"import site; site.addsitedir({str(site_dir)!r}); {code}; {check}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.split()[-2:] == ["GatedModel", "0"]
