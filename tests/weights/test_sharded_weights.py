"""A release too large for one file: Keras sharded weights in ``zoo/<weight id>/``, every
shard pinned by its sha256, loaded by ``weights=`` from ``zoo/``, the Hugging Face cache
and the (test) Hub, and refused when a shard is tampered with or missing.

The large nets are stood in for by a small one saved with a small shard cap: the code
paths are the same, only ``max_shard_bytes`` differs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import keras
import numpy as np
import pytest
from huggingface_hub import constants, try_to_load_from_cache

import keras_gated as kg
from keras_gated.cli import main
from keras_gated.weights import (
    ChecksumError,
    PretrainedCfg,
    WeightsNotFoundError,
    pretrained_cfgs_overlay,
    sha256_of,
)
from keras_gated.weights import sources
from keras_gated.release import zoo_folder as kg_zoo
from keras_gated.weights.load import count_arrays, head_classes
from keras_gated.weights.shards import SHARD_INDEX, save_sharded, shard_names, weight_files
from keras_gated.weights.sources import resolve_pretrained_file
from tests.support.helpers import images, to_numpy
from tests.support.hub_fixtures import flip_one_byte, go_offline, hf_home, hub, trained_ish  # noqa: F401

WEIGHT_ID = "gresnet14.cifar10"
REPO = f"keras-gated/{WEIGHT_ID}"
CAP = 400_000  # bytes per shard: GResNet(14)'s 0.7 MB of weights become 2-3 shards
X = images(4, seed=5)


def predict(model: keras.Model) -> np.ndarray:
    return to_numpy(model(X, training=False))


def write_sharded_zoo(model: keras.Model, folder: Path) -> Path:
    return kg_zoo.save_zoo_folder(
        model, folder, weight_id=WEIGHT_ID,
        metrics={"test_accuracy": 0.25, "split": "test", "num_examples": 16},
        recipe="test recipe", command="python -m training.train --recipe test",
        dataset_note="16 synthetic images", max_shard_bytes=CAP,
    )


@pytest.fixture
def sharded(tmp_path):
    """A 'trained' GResNet(14) in a sharded zoo folder: (model, folder, config)."""
    model = trained_ish(kg.GResNet(14), seed=3)
    folder = write_sharded_zoo(model, tmp_path / "release" / WEIGHT_ID)
    return model, folder, kg_zoo.pretrained_cfg_from_folder(folder)


def publish(folder: Path, capsys) -> tuple[PretrainedCfg, str]:
    """`keras-gated publish` of a zoo folder to REPO: its config pinned to the commit."""
    assert main(["publish", str(folder), "--repo-id", REPO]) == 0
    commit = re.search(r"^commit: ([0-9a-f]{40})$", capsys.readouterr().out, re.M).group(1)
    return kg_zoo.pretrained_cfg_from_folder(folder, revision=commit), commit


def shards_of(folder: Path) -> list[Path]:
    return [folder / name for name in shard_names(folder / SHARD_INDEX)]


# ------------------------------------------------------------------------- writing them


def test_save_sharded_keeps_every_file_under_the_cap_and_round_trips(tmp_path):
    model = trained_ish(kg.GResNet(14), seed=1)
    written = save_sharded(model, tmp_path, max_shard_bytes=CAP)
    assert written[0] == tmp_path / SHARD_INDEX and len(written) >= 3  # index + 2 shards
    assert all(path.stat().st_size <= CAP for path in written[1:])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in written)
    loaded = kg.GResNet(14)
    loaded.load_weights(tmp_path / SHARD_INDEX)
    np.testing.assert_array_equal(predict(loaded), predict(model))
    assert count_arrays(tmp_path / SHARD_INDEX) == len(model.weights)
    assert head_classes(tmp_path / SHARD_INDEX) == 10


def test_a_variable_larger_than_the_cap_is_refused_and_nothing_is_left(tmp_path):
    with pytest.raises(ValueError, match="raise `max_shard_bytes`"):
        save_sharded(kg.GResNet(14), tmp_path, max_shard_bytes=150_000)
    assert list(tmp_path.iterdir()) == []


def test_a_variable_just_under_the_cap_gets_a_shard_of_its_own(tmp_path):
    """A variable between 0.9 and 1 times the cap is still saved (the last try caps the
    arrays at the largest variable itself)."""
    model = keras.Sequential([keras.Input((10_000,)), keras.layers.Dense(10, name="hidden"),
                              keras.layers.Dense(3, name="predictions")])  # kernel: 400,000 B
    written = save_sharded(model, tmp_path, max_shard_bytes=430_000)
    assert all(path.stat().st_size <= 430_000 for path in written[1:]) and len(written) >= 3


def test_the_head_is_found_when_its_variables_open_a_new_shard(tmp_path):
    """Keras names a layer's variable group only in the shard where the group was made;
    the head's kernel here opens the second shard, whose group carries no name."""
    model = keras.Sequential([keras.Input((100,)), keras.layers.Dense(8, name="hidden"),
                              keras.layers.Dense(3, name="predictions")])
    model.save_weights(tmp_path / SHARD_INDEX, max_shard_size=3240 / 1024**3)
    assert len(shard_names(tmp_path / SHARD_INDEX)) == 2
    assert head_classes(tmp_path / SHARD_INDEX) == 3
    assert count_arrays(tmp_path / SHARD_INDEX) == 4


def test_a_missing_shard_is_named(tmp_path):
    save_sharded(kg.GResNet(14), tmp_path, max_shard_bytes=CAP)
    last = shards_of(tmp_path)[-1]
    last.unlink()
    with pytest.raises(FileNotFoundError, match=re.escape(last.name)):
        weight_files(tmp_path / SHARD_INDEX)


def test_zoo_folder_of_a_large_net_is_sharded_and_pinned_shard_by_shard(sharded):
    model, folder, cfg = sharded
    files = set(kg_zoo.check_zoo_folder(folder))
    assert "model.weights.h5" not in files and SHARD_INDEX in files
    assert {p.name for p in shards_of(folder)} <= files and len(shards_of(folder)) >= 2
    assert cfg.file_name == SHARD_INDEX and cfg.sha256 == sha256_of(folder / SHARD_INDEX)
    assert cfg.shards == {p.name: sha256_of(p) for p in shards_of(folder)}
    assert PretrainedCfg.from_dict(WEIGHT_ID, cfg.to_dict()) == cfg  # the registry's JSON
    card = (folder / "README.md").read_text()
    assert "model_00000.weights.h5" in card and "load_folder_model" in card
    np.testing.assert_array_equal(predict(kg_zoo.load_folder_model(folder)), predict(model))


def test_a_small_net_keeps_one_file(tmp_path):
    folder = kg_zoo.save_zoo_folder(
        kg.GResNet(14), tmp_path / WEIGHT_ID, weight_id=WEIGHT_ID,
        metrics={"test_accuracy": 0.25, "split": "test", "num_examples": 16},
        recipe="r", command="c", dataset_note="d")
    assert (folder / "model.weights.h5").is_file() and not (folder / SHARD_INDEX).exists()
    assert kg_zoo.pretrained_cfg_from_folder(folder).shards == {}


def test_shards_belong_to_an_index():
    digest = "0" * 64
    with pytest.raises(ValueError, match="`shards` belong to a sharded release"):
        PretrainedCfg(WEIGHT_ID, 10, (32, 32, 3), sha256=digest,
                      shards={"model_00000.weights.h5": digest})
    with pytest.raises(ValueError, match="needs `shards`"):
        PretrainedCfg(WEIGHT_ID, 10, (32, 32, 3), sha256=digest, file_name=SHARD_INDEX)
    with pytest.raises(ValueError, match="shard file names"):
        PretrainedCfg(WEIGHT_ID, 10, (32, 32, 3), sha256=digest, file_name=SHARD_INDEX,
                      shards={"../model_00000.weights.h5": digest})


# ------------------------------------------------------------------------- loading them


def test_zoo_copy_loads_by_tag_and_a_tampered_shard_is_refused(sharded, hf_home, monkeypatch):  # noqa: F811
    model, folder, cfg = sharded
    go_offline(monkeypatch)
    zoo_copy = Path(kg.pretrained.zoo_dir()) / WEIGHT_ID
    zoo_copy.mkdir(parents=True)
    for name in (*cfg.files, "config.json", "README.md"):
        (zoo_copy / name).write_bytes((folder / name).read_bytes())
    with pretrained_cfgs_overlay(cfg):
        assert resolve_pretrained_file(cfg) == zoo_copy / SHARD_INDEX
        np.testing.assert_array_equal(predict(kg.GResNet(14, weights="cifar10")), predict(model))
        backbone = kg.GResNet(14, weights="cifar10", include_top=False, pooling="avg")
        assert backbone.output_shape == (None, 64)

        shard = zoo_copy / sorted(cfg.shards)[-1]
        flip_one_byte(shard)
        with pytest.raises(ChecksumError) as error:
            kg.GResNet(14, weights="cifar10")
        for expected in (str(shard), sha256_of(shard), cfg.shards[shard.name], "not used"):
            assert expected in str(error.value)

        shard.unlink()  # an incomplete copy: said, and the next source tried
        with pytest.raises(WeightsNotFoundError, match=f"incomplete, without {shard.name}"):
            kg.GResNet(14, weights="cifar10")


def test_published_shards_are_pulled_into_the_cache_and_load_offline(
        sharded, hub, monkeypatch, capsys):  # noqa: F811
    model, folder, _ = sharded
    cfg, commit = publish(folder, capsys)
    with pretrained_cfgs_overlay(cfg):
        assert main(["pull", WEIGHT_ID]) == 0
        snapshot = Path(constants.HF_HUB_CACHE) / f"models--keras-gated--{WEIGHT_ID}" / "snapshots" / commit
        assert set(cfg.files) <= {p.name for p in snapshot.iterdir()}

        go_offline(monkeypatch)
        requests = len(hub.state.requests)
        np.testing.assert_array_equal(predict(kg.GResNet(14, weights="cifar10")), predict(model))
        assert len(hub.state.requests) == requests  # all from the cache

        # A tampered cached shard is refused, evicted, and downloaded again online.
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        name = sorted(cfg.shards)[0]
        cached = Path(try_to_load_from_cache(REPO, name, revision=commit))
        flip_one_byte(cached)
        with pytest.warns(UserWarning, match=re.escape(name)):
            reloaded = kg.GResNet(14, weights="cifar10")
        np.testing.assert_array_equal(predict(reloaded), predict(model))
        assert sha256_of(try_to_load_from_cache(REPO, name, revision=commit)) == cfg.shards[name]


def test_several_bad_cached_shards_are_all_evicted_and_downloaded_again(
        sharded, hub, capsys):  # noqa: F811
    model, folder, _ = sharded
    cfg, commit = publish(folder, capsys)
    with pretrained_cfgs_overlay(cfg):
        assert main(["pull", WEIGHT_ID]) == 0
        for name in cfg.shards:  # every shard of the cached copy tampered with
            flip_one_byte(Path(try_to_load_from_cache(REPO, name, revision=commit)))
        with pytest.warns(UserWarning, match="Hugging Face cache copy"):
            np.testing.assert_array_equal(predict(kg.GResNet(14, weights="cifar10")), predict(model))
        for name in cfg.shards:
            flip_one_byte(Path(try_to_load_from_cache(REPO, name, revision=commit)))
        assert main(["pull", WEIGHT_ID]) == 0  # pull too: evicts them all, then downloads
        for name, pin in cfg.shards.items():
            assert sha256_of(try_to_load_from_cache(REPO, name, revision=commit)) == pin


def test_a_sharded_hub_repo_loads_by_hf_reference(sharded, hub, capsys):  # noqa: F811
    model, folder, _ = sharded
    _, commit = publish(folder, capsys)
    np.testing.assert_array_equal(predict(kg.GResNet(14, weights=f"hf://{REPO}@{commit}")),
                                  predict(model))


def test_pin_official_refuses_other_weights_behind_the_same_index(
        sharded, hub, tmp_path, monkeypatch, capsys):  # noqa: F811
    """A shard index records where each layer is, not its values: two trainings of one
    architecture share it. --pin-official compares every shard's pin."""
    from keras_gated.weights import registered as registry_weights

    _, folder, cfg = sharded
    other = write_sharded_zoo(trained_ish(kg.GResNet(14), seed=4), tmp_path / "other" / WEIGHT_ID)
    assert sha256_of(other / SHARD_INDEX) == cfg.sha256
    assert kg_zoo.pretrained_cfg_from_folder(other).shards != cfg.shards
    data_file = tmp_path / "registered.json"
    registry_weights.write_cfg(cfg, data_file)
    monkeypatch.setattr(registry_weights, "cfg_source_file", lambda weight_id: data_file)
    with pretrained_cfgs_overlay(cfg):
        assert main(["publish", str(other), "--pin-official"]) != 0
    assert "sha256 differs" in capsys.readouterr().err
    assert hub.state.repos == {}


def test_a_wheel_user_is_told_where_a_sharded_release_comes_from(sharded, hf_home, monkeypatch):  # noqa: F811
    _, _, cfg = sharded
    go_offline(monkeypatch)
    monkeypatch.setattr(sources, "local_zoo_dirs", lambda: [])  # an installed wheel, no zoo/
    with pretrained_cfgs_overlay(cfg), pytest.raises(WeightsNotFoundError) as error:
        kg.GResNet(14, weights="cifar10")
    message = str(error.value)
    for expected in ("too large to ship inside the wheel", f"keras-gated pull {WEIGHT_ID}",
                     "KERAS_GATED_ZOO", "no complete copy"):
        assert expected in message


def test_a_shard_index_is_a_weights_path(sharded):
    model, folder, _ = sharded
    np.testing.assert_array_equal(predict(kg.GResNet(14, weights=str(folder))), predict(model))
    index = folder / SHARD_INDEX
    np.testing.assert_array_equal(predict(kg.GResNet(14, weights=str(index))), predict(model))
    assert json.loads(index.read_text())["weight_map"]
