"""The shipped registry of released weights and the zoo/ folders of this checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from keras_gated.hub import check_zoo_folder, pretrained_cfg_from_folder
from keras_gated.pretrained_cfgs import PRETRAINED_CFGS
from keras_gated.registry import is_model, list_models
from keras_gated.weights import HUB_ORG, get_pretrained_cfg, list_pretrained, sha256_of

ZOO = Path(__file__).resolve().parent.parent / "zoo"


def test_every_shipped_config_is_registered_once_under_a_known_model():
    ids = [cfg.weight_id for cfg in PRETRAINED_CFGS]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == list_pretrained() == sorted(list_models(pretrained=True))
    for cfg in PRETRAINED_CFGS:
        assert is_model(cfg.arch), cfg.weight_id
        assert cfg.hf_hub_id == f"{HUB_ORG}/{cfg.weight_id}"
        assert 0 < cfg.metrics["test_accuracy"] <= 1, cfg.weight_id
        assert cfg.command and cfg.recipe and cfg.dataset, cfg.weight_id


@pytest.mark.parametrize(
    "folder", sorted(p for p in ZOO.glob("*") if p.is_dir()) if ZOO.is_dir() else [], ids=str
)
def test_zoo_folders_are_complete_and_match_their_configs(folder):
    check_zoo_folder(folder)
    from_folder = pretrained_cfg_from_folder(folder)
    assert from_folder.weight_id == folder.name
    if folder.name in list_pretrained():  # released: the registered hash pins this file
        cfg = get_pretrained_cfg(folder.name)
        assert sha256_of(folder / cfg.file_name) == cfg.sha256
        assert cfg.metrics["test_accuracy"] == from_folder.metrics["test_accuracy"]
