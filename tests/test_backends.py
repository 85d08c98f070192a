"""Which Keras backend keras-gated starts: the one Keras would use where it is installed,
else the one installed backend (said once), else one sentence saying what to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from keras_gated import backends

ROOT = Path(__file__).resolve().parents[1]

HIDER = '''
"""Hide some backends from this process, as where they are not installed."""
import os
import sys

HIDDEN = tuple(os.environ["HIDDEN_MODULES"].split(","))


class _Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Hide())
'''


@pytest.fixture
def only(monkeypatch, tmp_path):
    """``only(*names)``: pretend exactly these backends are installed, with no
    KERAS_BACKEND and no keras.json (Keras's default, tensorflow, applies)."""
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras_home"))
    monkeypatch.setattr(backends, "_chosen", None)
    monkeypatch.setattr(backends, "_skipped", [])
    monkeypatch.setattr(backends, "_announced", False)
    monkeypatch.setattr(backends, "_keras_imported", lambda: False)

    def install(*names: str) -> None:
        monkeypatch.setattr(backends, "is_installed", lambda module: module in names)

    return install


def test_the_one_installed_backend_is_used_and_said_once(only, capsys):
    only("jax")
    assert backends.select_backend() == "jax"
    assert os.environ["KERAS_BACKEND"] == "jax"
    assert backends.select_backend() == "jax"
    backends.announce_choice()
    backends.announce_choice()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "jax" in err and "KERAS_BACKEND" in err


def test_the_configured_backend_is_kept_where_it_is_installed(only, capsys):
    only("tensorflow", "jax")
    assert backends.select_backend() is None
    assert "KERAS_BACKEND" not in os.environ and capsys.readouterr().err == ""


def test_without_any_backend_one_sentence_names_what_to_install(only):
    only()
    assert backends.select_backend() is None
    message = backends.missing_backend_message()
    assert 'pip install "keras-gated[jax]"' in message
    assert 'pip install "keras-gated[tensorflow]"' in message and "torch" in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_a_keras_backend_that_is_not_installed_is_named(only, monkeypatch):
    only("tensorflow")
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    assert backends.select_backend() is None
    message = backends.missing_backend_message()
    assert "KERAS_BACKEND=jax" in message and 'pip install "keras-gated[jax]"' in message


def test_the_jax_extra_exists():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(requirement.startswith("jax[cpu]") for requirement in extras["jax"])


def _cli(tmp_path: Path, hidden: str, *argv: str) -> subprocess.CompletedProcess:
    (tmp_path / "hider").mkdir(exist_ok=True)
    (tmp_path / "hider" / "sitecustomize.py").write_text(HIDER)
    env = {k: v for k, v in os.environ.items()
           if k not in ("KERAS_BACKEND", "JAX_COMPILATION_CACHE_DIR")}
    env.update(HIDDEN_MODULES=hidden, KERAS_HOME=str(tmp_path / "keras_home"),
               PYTHONPATH=os.pathsep.join([str(tmp_path / "hider"), str(ROOT)]))
    return subprocess.run([sys.executable, "-m", "keras_gated.cli", *argv], capture_output=True,
                          text=True, timeout=600, env=env, cwd=tmp_path)


def test_cli_without_any_backend_says_what_to_install(tmp_path):
    result = _cli(tmp_path, "tensorflow,jax,torch,jaxlib", "demo")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0], result.stderr
    assert 'pip install "keras-gated[jax]"' in lines[0]


def test_cli_with_only_jax_installed_uses_it(tmp_path):
    result = _cli(tmp_path, "tensorflow,torch,tf2onnx,tf_keras", "info", "gresnetfc10", "--params")
    assert result.returncode == 0, result.stderr
    assert "trainable parameters" in result.stdout
    assert result.stderr.count("using the Keras backend jax") == 1, result.stderr
