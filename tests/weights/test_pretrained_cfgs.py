"""The released and planned configs: data files beside the family modules, the zoo/
folders of this checkout, and a release tool that writes and parses data only."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from keras_gated.weights import (
    HUB_ORG,
    PretrainedCfg,
    get_pretrained_cfg,
    list_pretrained,
    sha256_of,
)
from keras_gated.weights.registered import cfg_source_file, read_cfg_file, write_cfg
from keras_gated.release.zoo_folder import (
    check_zoo_folder,
    pretrained_cfg_from_folder,
)
from keras_gated.registry import get_model_entry, is_model, list_models

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "zoo"
DATA_FILES = sorted((ROOT / "keras_gated" / "models").rglob("*.json"))
ALL_IDS = list_pretrained() + list_pretrained(planned=True)


def test_every_config_is_registered_once_from_its_family_data_file():
    ids = [cfg.weight_id for path in DATA_FILES for cfg in read_cfg_file(path)]
    assert len(ids) == len(set(ids)) and sorted(ids) == sorted(ALL_IDS)
    assert list_pretrained() == sorted(list_models(pretrained=True))
    for weight_id in ALL_IDS:
        cfg = get_pretrained_cfg(weight_id)
        assert is_model(cfg.arch), weight_id
        module = get_model_entry(cfg.arch).constructor.__module__.rsplit(".", 1)[-1]
        assert cfg_source_file(weight_id).name == f"{module}.json", weight_id
        assert cfg.hf_hub_id == f"{HUB_ORG}/{weight_id}" and cfg.dataset, weight_id
        if cfg.released:
            assert 0 < cfg.metrics["test_accuracy"] <= 1, weight_id
            assert cfg.plan is None
        else:
            assert cfg.plan.forward_macs > 0 and not cfg.metrics, weight_id


@pytest.mark.parametrize("weight_id", ALL_IDS)
def test_a_config_round_trips_through_its_data_file(tmp_path, weight_id):
    cfg = get_pretrained_cfg(weight_id)
    path = tmp_path / "family.json"
    write_cfg(cfg, path)
    write_cfg(cfg, path)  # replaces its own entry
    assert read_cfg_file(path) == [cfg]
    assert list(json.loads(path.read_text())) == [weight_id]


def test_a_malformed_config_names_the_file_and_the_key(tmp_path):
    path = tmp_path / "family.json"
    path.write_text(json.dumps({"gresnet20.x": {"classes": 10, "input_shape": [32, 32, 3],
                                                "sha256": "0" * 64, "colour": "red"}}))
    with pytest.raises(ValueError, match="colour"):
        read_cfg_file(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="family.json is not valid JSON"):
        read_cfg_file(path)
    with pytest.raises(ValueError, match="either a `sha256`"):
        PretrainedCfg("gresnet20.x", classes=10, input_shape=(32, 32, 3))


def test_no_module_of_the_library_or_the_training_tools_executes_text():
    calls = []
    for folder in ("keras_gated", "training"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id in ("exec", "eval")):
                    calls.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert calls == []


@pytest.mark.parametrize(
    "weight_id", [w for w in list_pretrained() if (ZOO / w).is_dir()] or ["(no zoo)"]
)
def test_zoo_folders_are_complete_and_equal_their_configs(weight_id):
    assert ZOO.is_dir(), "a source checkout has zoo/ with every released weight"
    folder = ZOO / weight_id
    check_zoo_folder(folder)
    cfg = get_pretrained_cfg(weight_id)
    assert sha256_of(folder / cfg.file_name) == cfg.sha256
    from_folder = pretrained_cfg_from_folder(folder, revision=cfg.revision, hf_hub_id=cfg.hf_hub_id)
    assert from_folder == cfg, [f.name for f in dataclasses.fields(cfg)
                                if getattr(cfg, f.name) != getattr(from_folder, f.name)]


def test_every_released_weight_has_its_zoo_folder():
    assert sorted(p.name for p in ZOO.iterdir() if p.is_dir()) == list_pretrained()


@pytest.mark.parametrize("weight_id", ALL_IDS)
def test_every_weight_cites_the_papers_of_its_architecture(weight_id):
    from keras_gated.release.citations import PAPERS, bibtex, citation_keys

    arch = get_pretrained_cfg(weight_id).arch
    keys = citation_keys(arch)
    assert keys and all(key in PAPERS for key in keys), arch
    assert bibtex(arch).count("@") == len(keys)
    if arch.startswith(("g", "plainnet", "resnetfc")) and "highway" not in arch:
        assert "savarese2017residual" in keys  # the gated families and their FC twins


@pytest.mark.parametrize("weight_id", [w for w in list_pretrained() if (ZOO / w).is_dir()])
def test_zoo_cards_state_size_and_citation(weight_id):
    import re

    from keras_gated.release.citations import citation_keys

    card = (ZOO / weight_id / "README.md").read_text()
    params = re.search(r"\| parameters \| ([\d,]+) \|", card)
    macs = re.search(r"\| GMACs per image \(forward\) \| ([\d.]+) \|", card)
    assert params and macs, weight_id
    for key in citation_keys(weight_id.split(".")[0]):
        assert f"{{{key}," in card, key
    assert card.index("## Model size") < card.index("## Training recipe")
    assert card.index("## Citation") < card.index("## Files")


def test_refreshing_card_facts_counts_the_folder_model_and_is_idempotent(tmp_path):
    import shutil

    from keras_gated.flops import count_macs
    from keras_gated.release.zoo_folder import refresh_card_facts

    folder = tmp_path / "gresnetfc10.fashion_mnist"
    shutil.copytree(ZOO / folder.name, folder)
    card = folder / "README.md"
    text = card.read_text()
    start, stop = text.index("## Model size"), text.index("## Training recipe")
    card.write_text(text[:start] + text[stop:])  # as an older card, without the section
    refresh_card_facts(folder)
    refresh_card_facts(folder)
    new = card.read_text()
    assert new.count("## Model size") == 1 and new.count("## Citation") == 1
    import keras

    model = keras.saving.load_model(folder, compile=False)
    assert f"| parameters | {model.count_params():,} |" in new
    assert f"| GMACs per image (forward) | {count_macs(model) / 1e9:.3f} |" in new
    assert sha256_of(folder / "model.weights.h5") == get_pretrained_cfg(folder.name).sha256
