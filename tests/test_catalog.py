"""The registry snapshot the command line reads: current, complete, and enough to build."""

from __future__ import annotations

import json

import pytest

import keras_gated as kg
from keras_gated import catalog, registry


def test_the_committed_catalog_is_the_live_registry():
    committed = catalog.read_catalog()
    assert committed == json.loads(json.dumps(catalog.build_catalog())), (
        "keras_gated/catalog.json is stale: run `python -m keras_gated.catalog`"
    )
    assert set(committed["models"]) == set(kg.list_models())


def test_a_registry_filled_from_the_catalog_lists_describes_and_builds(monkeypatch):
    monkeypatch.setattr(registry.models, "_REGISTRY", {})
    added = catalog.fill_registry_from_catalog()
    assert added == len(catalog.read_catalog()["models"]) and "gresnet20" in kg.list_models()
    live = catalog.read_catalog()["models"]["gresnetfc2"]
    entry = registry.get_model_entry("gresnetfc2")
    assert (entry.family, entry.description, entry.kwargs, entry.default_recipe) == (
        live["family"], live["description"], live["kwargs"], live["default_recipe"])
    model = kg.create_model("gresnetfc2", classes=3)
    assert model.name == "gresnetfc2" and model.output_shape == (None, 3)
    assert catalog.fill_registry_from_catalog() == 0  # a second fill adds nothing
    for relative in catalog.read_catalog()["cfg_files"]:  # the families' own data files
        assert (catalog.PACKAGE_DIR / relative).is_file()


def test_an_unreadable_catalog_says_how_to_write_it(tmp_path):
    broken = tmp_path / "catalog.json"
    broken.write_text("{not json")
    with pytest.raises(RuntimeError, match="python -m keras_gated.catalog"):
        catalog.read_catalog(broken)


def test_a_family_imported_after_the_catalog_replaces_its_catalogued_entries():
    """``keras-gated list`` fills the registry from the catalog; a command run later in
    the same process imports the families, whose own entries take over."""
    import subprocess
    import sys

    code = (
        "from keras_gated.catalog import fill_registry_from_catalog\n"
        "fill_registry_from_catalog()\n"
        "from keras_gated.registry import get_model_entry\n"
        "assert get_model_entry('plainnet2').constructor.stands_in_for_a_family\n"
        "import keras_gated.models\n"
        "entry = get_model_entry('plainnet2')\n"
        "assert not hasattr(entry.constructor, 'stands_in_for_a_family'), entry\n"
        "print(entry.build().name)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("plainnet2")
