"""``import keras_gated`` is light (PEP 562 lazy names) and still registers the package's
classes with Keras, whichever of keras_gated and keras is imported first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import keras
import pytest

import keras_gated as kg
from keras_gated import _api

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter on this checkout; its stdout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_import_alone_imports_no_backend():
    out = run_python(
        "import sys, keras_gated\n"
        "print(sorted(m for m in ('keras', 'tensorflow', 'jax', 'torch') if m in sys.modules))\n"
        "print(sorted(n for n in sys.modules if n.startswith('keras_gated.')))"
    )
    loaded, submodules = out.splitlines()
    assert loaded == "[]"
    assert "keras_gated.models" not in submodules and "keras_gated.layers" not in submodules


def test_the_registry_lists_every_family_right_after_import():
    """``keras_gated.list_models()`` as the first call, as ``timm.list_models()`` is used:
    every registered family and every released weight, not only those of families some
    earlier call happened to import."""
    out = run_python(
        "import keras_gated as kg\n"
        "print(len(kg.list_models('gwrn*')), kg.list_models(pretrained=True, filter='*.cifar10'))\n"
        "print(kg.is_model('highwaynet50'), kg.get_pretrained_cfg('gwrn_16_2.cifar10').arch)"
    )
    first, second = out.splitlines()
    count, released = first.split(" ", 1)
    assert int(count) >= 4 and "'gresnet20.cifar10'" in released and "'gwrn_16_2.cifar10'" in released
    assert second == "True gwrn_16_2"


def test_every_public_name_resolves_and_is_listed():
    names = dir(kg)
    for name in [*_api.PUBLIC, *_api.SUBMODULES]:
        assert name in names and getattr(kg, name) is not None
    assert set(kg.models.__all__) <= set(names) and "GResNet20" in kg.__all__
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        kg.nothing_here  # noqa: B018


@pytest.fixture(scope="module")
def saved_gresnet(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("saved") / "gresnet20.keras"
    kg.GResNet20(input_shape=(16, 16, 3), classes=3).save(path)
    return path


@pytest.mark.parametrize("order", ["keras_gated, keras", "keras, keras_gated"])
def test_load_model_works_in_a_fresh_process_in_either_import_order(saved_gresnet, order):
    if keras.backend.backend() == "torch":
        pytest.skip("one backend is enough: the registration does not depend on it")
    out = run_python(
        f"import {order}\n"
        f"model = keras.saving.load_model({str(saved_gresnet)!r})\n"
        "print(type(model).__name__, model.get_layer('stage1_unit1').__class__.__name__)\n"
        "print(callable(getattr(model, 'forward_features', None)))"
    )
    assert out.splitlines()[-2:] == ["GatedModel PreActUnit", "True"]


def test_keras_imported_from_inside_the_package_registers_after_it():
    """``import keras_gated.layers`` imports Keras half way through the package's own
    imports: the registration waits for them, then loads a model as above."""
    out = run_python(
        "import sys\n"
        "from keras_gated.layers import ResidualGate\n"
        "print('keras_gated.models' in sys.modules, 'keras_gated.gating' in sys.modules)\n"
        "print(sys.meta_path[0].__class__.__name__)"
    )
    assert out.splitlines()[-2] == "True True" and out.splitlines()[-1] != "RegistrationHook"


def test_no_command_line_check_left_in_the_package():
    source = (ROOT / "keras_gated" / "__init__.py").read_text()
    assert "sys.argv" not in source and "def __getattr__" in source


def test_a_module_of_the_package_runs_with_python_m():
    """``python -m keras_gated.<module>`` asks the loader for the module's code: the
    registration finder hands that over from the original loader."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "keras_gated.cli", "list", "gresnet2*"],
                            capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "gresnet20" in result.stdout


def test_every_module_of_the_package_is_an_attribute_as_before():
    """``keras_gated.<module>`` reaches any module of the package (the deprecated ones
    warn), as when the package imported them all eagerly."""
    import subprocess
    import sys

    code = ("import warnings, keras_gated as kg\n"
            "assert kg.gating.gate_values is kg.gate_values\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    assert kg.gates.gate_variables is kg.gating.gate_variables\n"
            "assert any(w.category is DeprecationWarning for w in caught)\n"
            "try:\n"
            "    kg.no_such_module\n"
            "except AttributeError as error:\n"
            "    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "has no attribute 'no_such_module'" in result.stdout


def test_two_registration_hooks_on_meta_path_ask_each_other_once(monkeypatch):
    """The wheel's startup hook and the package's own can both be on ``sys.meta_path``:
    each asks the other finders, the other hook included, without endless recursion."""
    from keras_gated._keras_hook import RegistrationHook

    first, second = RegistrationHook(lambda: None), RegistrationHook(lambda: None)
    monkeypatch.setattr(sys, "meta_path", [first, second, *sys.meta_path])
    assert first.find_spec("keras_gated.no_such_module") is None
    spec = first.find_spec("keras_gated.version")
    assert spec is not None and spec.name == "keras_gated.version"
    assert type(spec.loader).__name__ == "_AfterExec"  # wrapped by both hooks
    assert type(spec.loader.loader).__name__ == "_AfterExec"
