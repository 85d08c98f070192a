"""The files generated from the family declarations (the registry snapshot the command
line reads, the docs' family table): current, complete, and enough to build."""

from __future__ import annotations

import json

import pytest

import keras_gated as kg
from keras_gated import catalog, registry
from keras_gated.models import generate
from keras_gated.registry import families


def test_the_generated_files_are_current():
    stale = [path.relative_to(generate.ROOT).as_posix() for path in generate.stale()]
    assert not stale, f"{', '.join(stale)} stale: run `{generate.COMMAND}`"


def test_the_committed_catalog_is_the_live_registry():
    committed = catalog.read_catalog()
    assert committed == json.loads(json.dumps(generate.build_catalog())), (
        f"keras_gated/catalog.json is stale: run `{generate.COMMAND}`"
    )
    assert set(committed["models"]) == set(kg.list_models())
    assert committed["public"] == sorted(kg.models.__all__)
    assert set(committed["public"]) <= set(kg._api.PUBLIC)


def test_the_docs_table_lists_every_family_and_constructor():
    table = generate.model_table()
    for family in families.specs():
        assert f"| `{family.name}` |" in table
        assert all(f"`{name}`" in table for name in family.public_names)
    text = generate.DOCS_MODELS.read_text()
    assert text.count(generate.TABLE_BEGIN) == text.count(generate.TABLE_END) == 1


def test_the_check_names_stale_files_and_writes_nothing(tmp_path, monkeypatch, capsys):
    stale_copy = tmp_path / "catalog.json"
    stale_copy.write_text("{}\n")
    monkeypatch.setattr(catalog, "CATALOG_FILE", stale_copy)
    assert generate.main(["--check"]) == 1
    assert f"stale: {stale_copy}" in capsys.readouterr().out
    assert stale_copy.read_text() == "{}\n"


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
    with pytest.raises(RuntimeError, match="python -m keras_gated.models.generate"):
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
