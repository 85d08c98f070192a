"""The table of old import paths (keras_gated/_moved.py): each old module still imports,
warns once naming its new place, and gives the new modules' very objects; no file stands
at an old path. The only test that imports an old path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from keras_gated._moved import MOVED, MOVED_NAMES

ROOT = Path(__file__).resolve().parents[2]
# One name per old module and the new module that defines it.
SAMPLES = {
    "keras_gated.analysis.compress_training": ("data_digest", "keras_gated.training.phases"),
    "keras_gated.analysis.gate_log": ("GateLogger", "keras_gated.training.callbacks"),
    "keras_gated.analysis.prune": ("prune", "keras_gated.models.prune"),
    "keras_gated.class_names": ("CLASS_NAMES", "keras_gated.datasets"),
    "keras_gated.cli_names": ("model_name", "keras_gated.cli.arguments"),
    "keras_gated.fast_path": ("FastPathModel", "keras_gated.models.fast_path_model"),
    "keras_gated.gates": ("gate_values", "keras_gated.gating"),
    "keras_gated.hub": ("save_zoo_folder", "keras_gated.release.zoo_folder"),
    "keras_gated.kerashub": ("GatedBackbone", "keras_gated.keras_hub"),
    "keras_gated.models.application": ("build_application", "keras_gated.models.builder"),
    "keras_gated.models.family_spec": ("declare", "keras_gated.registry.families"),
    "keras_gated.pretrained": ("get_pretrained_cfg", "keras_gated.weights.registered"),
    "keras_gated.pretrained.citations": ("bibtex", "keras_gated.release.citations"),
    "keras_gated.pretrained.config": ("PretrainedCfg", "keras_gated.weights.config"),
    "keras_gated.pretrained.hub": ("publish", "keras_gated.release.hub"),
    "keras_gated.pretrained.listing": ("released_table", "keras_gated.release.listing"),
    "keras_gated.pretrained.load": ("load_resolved", "keras_gated.weights.load"),
    "keras_gated.pretrained.planned": ("planned_error", "keras_gated.weights.planned"),
    "keras_gated.pretrained.registry": ("get_pretrained_cfg", "keras_gated.weights.registered"),
    "keras_gated.pretrained.resolve": ("resolve_weights", "keras_gated.weights.resolve"),
    "keras_gated.pretrained.shards": ("shard_names", "keras_gated.weights.shards"),
    "keras_gated.pretrained.sources": ("sha256_of", "keras_gated.weights.sources"),
    "keras_gated.pretrained.zoo_folder": ("save_zoo_folder", "keras_gated.release.zoo_folder"),
    "keras_gated.recipes": ("get_recipe", "keras_gated.training.recipes"),
    "keras_gated.registry.factory": ("create_model", "keras_gated.models.factory"),
    "keras_gated.registry.weights": ("list_pretrained", "keras_gated.weights.registered"),
    "keras_gated.transforms": ("augment_batch", "keras_gated.training.transforms"),
}

# Every sampled old module checked in one fresh process, one after the other: each old
# module's first import is its own (no other check imports it), so each warns once there.
CHECK = """
import importlib, json, sys, warnings
warnings.simplefilter("always")
results = {}
for old_name, name, new_name in json.loads(sys.argv[1]):
    try:
        with warnings.catch_warnings(record=True) as first:  # an old package warns on first use
            old = importlib.import_module(old_name)
            value = getattr(old, name)
        with warnings.catch_warnings(record=True) as again:
            importlib.import_module(old_name)
            assert getattr(old, name) is value
        new = importlib.import_module(new_name)
        namespace = {}
        exec(f"from {old_name} import *", namespace)
    except Exception as error:  # reported for this module alone
        results[old_name] = {"error": repr(error)}
        continue
    results[old_name] = {
        "first": [str(w.message) for w in first if issubclass(w.category, DeprecationWarning)],
        "again": [str(w.message) for w in again if issubclass(w.category, DeprecationWarning)],
        "same_object": value is getattr(new, name),
        "in_dir": name in dir(old),
        "star_import": namespace.get(name) is getattr(new, name),
    }
print(json.dumps(results))
"""


def test_the_table_covers_the_sampled_modules_and_no_file_stands_at_an_old_path():
    assert set(SAMPLES) == set(MOVED)
    for old in MOVED:
        path = ROOT / Path(*old.split("."))
        assert not path.with_suffix(".py").exists() and not path.is_dir(), old


@pytest.fixture(scope="module")
def checked_in_a_fresh_process() -> dict[str, dict]:
    """Each sampled old module's check (``CHECK``), all in one fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KERAS_BACKEND": os.environ.get("KERAS_BACKEND", "jax")}
    samples = json.dumps([[old, *SAMPLES[old]] for old in SAMPLES])
    done = subprocess.run([sys.executable, "-c", CHECK, samples], capture_output=True,
                          text=True, timeout=600, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("old", [
    pytest.param(old, marks=pytest.mark.needs("keras_hub")) if old == "keras_gated.kerashub" else old
    for old in SAMPLES])  # keras_gated.keras_hub itself needs keras-hub
def test_each_old_module_warns_once_and_gives_the_new_objects(old, checked_in_a_fresh_process):
    result = checked_in_a_fresh_process[old]
    assert "error" not in result, result
    assert len(result["first"]) == 1 and old in result["first"][0], result
    assert all(target in result["first"][0] for target in MOVED[old]), result
    assert result["again"] == [], result
    assert result["same_object"] and result["in_dir"] and result["star_import"], result


def test_an_unknown_name_of_an_old_module_says_where_it_moved():
    import keras_gated  # noqa: F401  (installs the finder)
    from keras_gated import gating

    with pytest.warns(DeprecationWarning):
        sys.modules.pop("keras_gated.gates", None)
        import keras_gated.gates as old
    assert old.gate_values is gating.gate_values
    with pytest.raises(AttributeError, match="moved to keras_gated.gating"):
        old.no_such_name  # noqa: B018


def test_a_name_that_left_a_standing_package_warns_and_gives_the_new_object():
    import importlib

    for package, names in MOVED_NAMES.items():
        module = importlib.import_module(package)
        for name, new in names.items():
            vars(module).pop(name, None)  # as if never asked for in this process
            with pytest.warns(DeprecationWarning, match=f"{package}.{name} is deprecated: import it from {new}"):
                value = getattr(module, name)
            assert value is getattr(importlib.import_module(new), name)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                assert getattr(module, name) is value  # warned once
    from keras_gated import registry

    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        registry.no_such_name  # noqa: B018


def test_an_old_submodule_warns_once_naming_its_own_new_place():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KERAS_BACKEND": os.environ.get("KERAS_BACKEND", "jax")}
    code = ("import json, warnings; warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    from keras_gated.pretrained.resolve import resolve_weights\n"
            "    from keras_gated.pretrained import sources\n"
            "print(json.dumps([str(w.message) for w in caught\n"
            "                  if issubclass(w.category, DeprecationWarning)]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    messages = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(messages) == 2, messages
    assert "keras_gated.pretrained.resolve" in messages[0] and "keras_gated.weights.resolve" in messages[0]
    assert "keras_gated.pretrained.sources" in messages[1]
