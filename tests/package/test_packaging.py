"""Packaging: the wheel built from this checkout holds ``keras_gated`` (with the released
checkpoints small enough to bundle, see ``setup.py``) and nothing else, and works
installed outside the checkout, offline, with an empty Hugging Face cache.

The wheel is built from a copy of the checkout (without VCS data, build outputs and
training runs), so the build writes nothing into the repository.
"""

from __future__ import annotations

import hashlib
import os
import runpy
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import keras
import pytest

import keras_gated.weights.sources as kw
from keras_gated.weights import ChecksumError, WeightsNotFoundError, get_pretrained_cfg
from tests.support.hub_fixtures import go_offline, hf_home  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parents[2]
# setup.py's caps and bundle list (run under another name than __main__: no build).
SETUP = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_constants")
DEMO_ID = "gresnet20.cifar10"
# Installed beside the package: they register its classes whenever Keras is imported.
STARTUP_FILES = set(SETUP["STARTUP_FILES"].values())  # their installed names
NOT_COPIED = shutil.ignore_patterns(
    ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".venv", "venv", "runs"
)


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run ``cmd``; fail the test with its output unless it exits 0."""
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)
    assert result.returncode == 0, f"{cmd} exited {result.returncode}:\n{result.stderr[-4000:]}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of this checkout, built offline (no index, no build isolation)."""
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=NOT_COPIED)
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(tmp / "dist"), str(source)],
        env={**os.environ, "PIP_NO_INDEX": "1"},
    )
    (built,) = (tmp / "dist").glob("keras_gated-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path) -> Path:
    """The folder the wheel is installed into (``pip install --no-deps --target``)."""
    target = wheel.parent.parent / "target"
    _run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target",
          str(target), str(wheel)])
    return target


def _python_outside(target: Path | None, code: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    """Run ``python -S <code>`` in ``tmp_path`` with the install in ``target`` (if any)
    first on the path, then this environment's site-packages as plain paths: ``-S`` keeps
    their ``.pth`` files (e.g. an editable install of this checkout) from running. Offline,
    with an empty Hugging Face cache and no ``$KERAS_GATED_ZOO``."""
    site_packages = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    if target is None:
        target_paths = []
    else:
        target_paths = [str(target)]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "HUGGING", "KERAS_GATED", "PYTHON"))}
    (tmp_path / "hf_home").mkdir()
    env.update(
        PYTHONPATH=os.pathsep.join([*target_paths, *site_packages]),
        HF_HOME=str(tmp_path / "hf_home"),
        HF_HUB_OFFLINE="1",
        KERAS_BACKEND=keras.backend.backend(),
    )
    return subprocess.run([sys.executable, "-S", *code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def test_wheel_holds_keras_gated_and_the_bundled_checkpoints_only(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        digests = {
            weight_id: hashlib.sha256(
                archive.read(f"keras_gated/_zoo/{weight_id}/model.weights.h5")
            ).hexdigest()
            for weight_id in SETUP["bundled_checkpoints"]()
        }
    top_level = {name.split("/")[0] for name in names}
    assert top_level == {"keras_gated", wheel.name.split("-py")[0] + ".dist-info",
                         *STARTUP_FILES}, top_level
    assert "keras_gated/__init__.py" in names and "keras_gated/cli/__init__.py" in names
    assert any(n.startswith("keras_gated/assets/cifar10_demo/") for n in names)
    # Every family's data files, the compressed architectures' list included.
    data_files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "keras_gated" / "models").rglob("*")
                  if p.suffix in (".json", ".jsonl")}
    assert "keras_gated/models/compressed/architectures.jsonl" in data_files
    assert data_files <= names

    bundled = sorted({n.split("/")[2] for n in names if n.startswith("keras_gated/_zoo/")})
    assert bundled == SETUP["bundled_checkpoints"]() and DEMO_ID in bundled
    for weight_id in bundled:
        folder = ROOT / "zoo" / weight_id
        # The whole folder, same names; the weight file has the registered sha256.
        files = [f for f in folder.iterdir() if f.is_file()]  # (not the keras_hub/ preset)
        assert {f"keras_gated/_zoo/{weight_id}/{f.name}" for f in files} <= names
        assert SETUP["folder_size"](folder) <= SETUP["BUNDLE_CAP_BYTES"]
        assert digests[weight_id] == get_pretrained_cfg(weight_id).sha256
    assert wheel.stat().st_size < SETUP["WHEEL_CAP_BYTES"]


def test_installed_wheel_runs_the_demo_offline(installed, tmp_path):
    result = _python_outside(installed, ["-m", "keras_gated.cli", "demo"], tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"GResNet20 ({DEMO_ID})" in result.stdout
    assert "image 19" in result.stdout and "accuracy on these 20 images" in result.stdout


def test_installed_wheel_loads_the_bundled_weights(installed, tmp_path):
    code = (
        "import keras_gated as kg; from keras_gated.weights import sources as w; "
        "m = kg.GResNet20(weights='cifar10'); print(kg.__file__); "
        f"print(w.resolve_pretrained_file(kg.get_pretrained_cfg({DEMO_ID!r})))"
    )
    result = _python_outside(installed, ["-c", code], tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    package, weights = (Path(line) for line in result.stdout.strip().splitlines()[-2:])
    assert package.is_relative_to(installed), package
    assert weights == installed / "keras_gated" / "_zoo" / DEMO_ID / "model.weights.h5"


def test_installed_wheel_lists_models_from_its_catalog(installed, tmp_path):
    code = ("import sys; sys.argv = ['keras-gated']; from keras_gated.cli import main; "
            "main(['list', 'gresnet2*']); print(sorted({'keras', 'tensorflow'} & set(sys.modules)))")
    result = _python_outside(installed, ["-c", code], tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.split()[0] == "gresnet20" and result.stdout.strip().endswith("[]")


def test_training_is_not_installed(installed, tmp_path):
    result = _python_outside(installed, ["-c", "import training"], tmp_path)
    assert result.returncode != 0
    assert "ModuleNotFoundError: No module named 'training'" in result.stderr


def test_bundled_copy_is_tried_after_zoo_and_checked(hf_home, tmp_path, monkeypatch):  # noqa: F811
    """In-process: with an empty cache and ``zoo/``, offline, the bundled copy is used
    when it is intact and refused when it is not; the error names both local sources."""
    go_offline(monkeypatch)
    cfg = get_pretrained_cfg(DEMO_ID)
    bundle = tmp_path / "bundle"
    monkeypatch.setattr(kw, "bundled_zoo_dir", lambda: bundle)

    with pytest.raises(WeightsNotFoundError) as error:
        kw.resolve_pretrained_file(cfg)
    assert "zoo/ copy" in str(error.value) and "bundled copy" in str(error.value)

    copy = bundle / DEMO_ID / cfg.file_name
    copy.parent.mkdir(parents=True)
    shutil.copy(ROOT / "zoo" / DEMO_ID / cfg.file_name, copy)
    assert kw.resolve_pretrained_file(cfg) == copy

    data = bytearray(copy.read_bytes())
    data[-1] ^= 1  # one bit flipped
    copy.write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match="bundled copy"):
        kw.resolve_pretrained_file(cfg)


def test_a_missing_optional_dependency_names_its_extra(monkeypatch):
    """tensorflow-datasets is optional (``[data]``, ``[train]``): without it, a tfds data
    set is a one-sentence error naming the extra to install."""
    from keras_gated import datasets

    monkeypatch.setitem(sys.modules, "tensorflow_datasets", None)  # as if not installed
    with pytest.raises(datasets.DatasetNotFoundError, match=r"pip install 'keras-gated\[data\]'"):
        datasets.load("mnist", "test", download=False)


# ------------------------------------- keras.saving.load_model without `import keras_gated`

LOAD_WITHOUT_IMPORT = """
import site, sys
{add_site}
assert "keras" not in sys.modules and "keras_gated" not in sys.modules
import keras, numpy as np
model = keras.saving.load_model({folder!r})
np.testing.assert_allclose(model.predict(np.load({x!r}), verbose=0), np.load({expected!r}),
                           atol=1e-5)
print(type(model).__name__, sys.modules["keras_gated"].__file__)
"""


@pytest.fixture(scope="module")
def saved_and_expected(installed: Path, tmp_path_factory) -> dict:
    """A keras-gated save folder (the wheel's bundled release), images, and the
    predictions this process (keras_gated imported) gets from it, as files."""
    import numpy as np

    import keras_gated  # noqa: F401  (registers the classes here)
    from tests.support.helpers import images, to_numpy

    folder = installed / "keras_gated" / "_zoo" / DEMO_ID
    tmp = tmp_path_factory.mktemp("load_without_import")
    x = images(4, seed=3)
    np.save(tmp / "x.npy", x)
    np.save(tmp / "expected.npy", to_numpy(keras.saving.load_model(folder).predict(x, verbose=0)))
    return {"folder": str(folder), "x": str(tmp / "x.npy"), "expected": str(tmp / "expected.npy")}


def test_installed_wheel_lets_keras_load_its_saves_without_the_import(
        installed, saved_and_expected, tmp_path):
    """As a user: ``import keras; keras.saving.load_model(folder)``, nothing else; the
    wheel's ``keras_gated.pth`` runs as in any site-packages (``site.addsitedir``)."""
    code = LOAD_WITHOUT_IMPORT.format(add_site=f"site.addsitedir({str(installed)!r})",
                                      **saved_and_expected)
    result = _python_outside(None, ["-c", code], tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    name, package = result.stdout.split()[-2:]
    assert name == "GatedModel" and Path(package).is_relative_to(installed)


def test_without_the_pth_keras_cannot_load_a_keras_gated_save(
        installed, saved_and_expected, tmp_path):
    """The same install on the path but its ``.pth`` not run: Keras does not know the
    classes (what the ``.pth`` fixes)."""
    code = LOAD_WITHOUT_IMPORT.format(add_site="", **saved_and_expected)
    result = _python_outside(installed, ["-c", code], tmp_path)
    assert result.returncode != 0
    assert "Could not locate class 'GatedModel'" in result.stderr


def test_the_pth_imports_nothing_heavy_at_start(installed, tmp_path):
    code = ("import site, sys; before = set(sys.modules); "
            f"site.addsitedir({str(installed)!r}); print(sorted(set(sys.modules) - before)); "
            "print(type(sys.meta_path[0]).__name__)")
    # The install first on the path, as in its own environment: the .pth imports the startup
    # module beside it (not an editable install's copy in this environment's site-packages).
    result = _python_outside(installed, ["-c", code], tmp_path)
    assert result.returncode == 0 and result.stderr == "", result.stderr[-4000:]
    new_modules, finder = result.stdout.strip().splitlines()
    allowed = {"_keras_gated_startup", "__future__", "importlib", "importlib._bootstrap",
               "importlib._bootstrap_external", "importlib.machinery", "types", "warnings"}
    assert set(eval(new_modules)) <= allowed, new_modules
    assert finder == "RegistrationHook"


def _site_copy(installed: Path, folder: Path, names: list[str]) -> Path:
    """``folder`` holding copies of the named files of the install (same relative paths)."""
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(installed / name, folder / name)
    return folder


def test_the_pth_line_never_raises_without_keras_gated(installed, tmp_path):
    """keras_gated removed (the .pth and its module left behind), or the module too: the
    interpreter starts silently and Keras's import is untouched."""
    for names in (["keras_gated.pth", "_keras_gated_startup.py"], ["keras_gated.pth"]):
        site_dir = _site_copy(installed, tmp_path / f"site{len(names)}", names)
        code = (f"import site, sys; site.addsitedir({str(site_dir)!r}); "
                "print([type(f).__name__ for f in sys.meta_path])")
        run_dir = tmp_path / f"run{len(names)}"
        run_dir.mkdir()
        result = _python_outside(None, ["-c", code], run_dir)
        assert result.returncode == 0 and result.stderr == "", (names, result.stderr)
        assert "RegistrationHook" not in result.stdout


def test_a_broken_keras_gated_warns_once_and_keras_still_imports(installed, tmp_path):
    site_dir = _site_copy(installed, tmp_path / "site",
                          ["keras_gated.pth", "_keras_gated_startup.py", "keras_gated/_keras_hook.py"])
    (site_dir / "keras_gated" / "__init__.py").write_text("raise RuntimeError('broken')\n")
    code = f"import site; site.addsitedir({str(site_dir)!r}); import keras; print(keras.__name__)"
    result = _python_outside(None, ["-W", "always", "-c", code], tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip().endswith("keras")
    assert result.stderr.count("keras-gated is installed but fails to import (RuntimeError: "
                               "broken)") == 1, result.stderr[-4000:]


@pytest.fixture(scope="module")
def editable(tmp_path_factory) -> tuple[Path, Path]:
    """An editable install of a copy of this checkout: ``(source copy, site folder)``, the
    editable wheel (PEP 660, built offline by setuptools' build backend) unpacked into the
    site folder as pip would install it."""
    import zipfile

    tmp = tmp_path_factory.mktemp("editable")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=NOT_COPIED)
    build = ("import sys; from setuptools import build_meta; "
             "print(build_meta.build_editable(sys.argv[1]))")
    name = _run([sys.executable, "-c", build, str(tmp / "dist")], cwd=source).stdout.split()[-1]
    site_folder = tmp / "site"
    with zipfile.ZipFile(tmp / "dist" / name) as wheel_file:
        wheel_file.extractall(site_folder)
    return source, site_folder


def test_an_editable_install_lets_keras_load_its_saves_without_the_import(editable, tmp_path):
    """As after ``pip install -e .``: ``import keras; keras.saving.load_model(folder)``."""
    import numpy as np

    import keras_gated  # noqa: F401  (registers the classes here)
    from tests.support.helpers import images, to_numpy

    source, site_folder = editable
    assert STARTUP_FILES <= {p.name for p in site_folder.iterdir()}
    folder = source / "zoo" / DEMO_ID
    x = images(4, seed=3)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "expected.npy",
            to_numpy(keras.saving.load_model(folder).predict(x, verbose=0)))
    run = tmp_path / "run"
    run.mkdir()
    # First on the path: this environment's own editable install has a finder module of
    # the same name.
    add_site = f"sys.path.insert(0, {str(site_folder)!r}); site.addsitedir({str(site_folder)!r})"
    code = LOAD_WITHOUT_IMPORT.format(add_site=add_site, folder=str(folder), x=str(tmp_path / "x.npy"),
                                      expected=str(tmp_path / "expected.npy"))
    result = _python_outside(None, ["-c", code], run)
    assert result.returncode == 0, result.stderr[-4000:]
    name, package = result.stdout.split()[-2:]
    assert name == "GatedModel" and Path(package).is_relative_to(source)
