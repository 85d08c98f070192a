"""Zoo folders, publishing and pulling, and resolving registered weights through the HF
cache, ``zoo/`` and the Hub, against the Hub-protocol server of ``tests.support.hub_server``
(the real huggingface_hub client; nothing mocked)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import keras
import numpy as np
import pytest
from huggingface_hub import (
    ModelCard,
    constants,
    hf_hub_download,
    snapshot_download,
    try_to_load_from_cache,
)

import keras_gated as kg
from keras_gated.cli import main
from keras_gated.weights import (
    ChecksumError,
    PretrainedCfg,
    WeightsNotFoundError,
    pretrained_cfgs_overlay,
    sha256_of,
)
from keras_gated.release import zoo_folder as kg_zoo
from keras_gated.weights.config import LISTING_METRICS
from keras_gated.weights.sources import resolve_pretrained_file
from tests.support.helpers import images, to_numpy
from tests.support.hub_fixtures import flip_one_byte, go_offline, hf_home, hub, trained_ish  # noqa: F401

WEIGHT_ID = "gresnet8.cifar10"
REPO = f"keras-gated/{WEIGHT_ID}"
METRICS = {"test_accuracy": 0.4375, "split": "test", "num_examples": 16}
ZOO_FILES = {
    "config.json",
    "metadata.json",
    "model.weights.h5",
    "README.md",
    "metrics.json",
    "training_log.csv",
}
X = images(4, seed=11)


def predict(model: keras.Model) -> np.ndarray:
    return to_numpy(model(X, training=False))


def write_zoo(model: keras.Model, folder: Path, **overrides) -> Path:
    folder.parent.mkdir(parents=True, exist_ok=True)
    log = folder.parent / "log.csv"
    log.write_text("epoch,loss,accuracy\n0,2.30,0.10\n1,2.10,0.20\n")
    arguments = {
        "weight_id": WEIGHT_ID,
        "metrics": METRICS,
        "recipe": "test recipe: random perturbation of the initial weights",
        "command": "python -m training.train --recipe test",
        "dataset_note": "16 synthetic images; not CIFAR-10",
        "training_log": log,
        **overrides,
    }
    return kg_zoo.save_zoo_folder(model, folder, **arguments)


def publish(folder: Path, capsys) -> str:
    """`keras-gated publish`; returns the printed commit id."""
    assert main(["publish", str(folder), "--repo-id", REPO]) == 0
    out = capsys.readouterr().out
    return re.search(r"^commit: ([0-9a-f]{40})$", out, re.M).group(1)


@pytest.fixture
def published(hub, tmp_path, capsys):  # noqa: F811
    """A 'trained' GResNet(8) published once: (model, zoo folder, commit id, config)."""
    model = trained_ish(kg.GResNet(8), seed=1)
    folder = write_zoo(model, tmp_path / "zoo_src" / WEIGHT_ID)
    commit = publish(folder, capsys)
    cfg = kg_zoo.pretrained_cfg_from_folder(folder, revision=commit)
    return model, folder, commit, cfg


# ------------------------------------------------------------------------- zoo folders


def test_zoo_folder_holds_exactly_the_hub_files(tmp_path):
    model = trained_ish(kg.GResNet(8), seed=1)
    folder = write_zoo(model, tmp_path / WEIGHT_ID)
    assert {p.name for p in folder.iterdir()} == ZOO_FILES
    assert json.loads((folder / "metrics.json").read_text()) == {
        **METRICS,
        "dataset": "16 synthetic images; not CIFAR-10",
        "command": "python -m training.train --recipe test",
    }
    assert sorted(kg_zoo.check_zoo_folder(folder)) == sorted(ZOO_FILES)
    reloaded = keras.saving.load_model(folder)
    np.testing.assert_array_equal(predict(reloaded), predict(model))
    # The folder carries the tag's class names; the model given keeps its own.
    assert reloaded.class_names[:2] == ("airplane", "automobile")
    assert model.class_names[:2] == ("class0", "class1")
    card = (folder / "README.md").read_text()
    from keras_gated.flops import count_macs

    assert f"| parameters | {model.count_params():,} |" in card
    assert f"| GMACs per image (forward) | {count_macs(model) / 1e9:.3f} |" in card
    assert "@article{savarese2017residual," in card and "@inproceedings{he2016identity," in card

    with pytest.raises(ValueError, match="not empty; pass overwrite=True"):
        write_zoo(model, folder)
    with pytest.raises(ValueError, match="a fraction in"):
        write_zoo(model, tmp_path / "percent", metrics={**METRICS, "test_accuracy": 43.75})
    with pytest.raises(ValueError, match="'predictions' head"):
        write_zoo(kg.GResNet(8, include_top=False), tmp_path / "headless")
    (folder / "notes.txt").write_text("not for the Hub")
    with pytest.raises(ValueError, match=r"unexpected \['notes.txt'\]"):
        kg_zoo.check_zoo_folder(folder)


def test_set_card_note_adds_then_replaces_one_subsection_of_notes(tmp_path):
    from huggingface_hub import ModelCard

    folder = write_zoo(trained_ish(kg.GResNet(8), seed=1), tmp_path / WEIGHT_ID)
    card = folder / "README.md"
    assert "## Notes" not in card.read_text()  # written without notes
    kg_zoo.set_card_note(folder, "Twin comparison", "first table")
    kg_zoo.set_card_note(folder, "Other", "kept")
    kg_zoo.set_card_note(folder, "Twin comparison", "second table")
    text = card.read_text()
    assert text.count("## Notes") == 1 and text.count("### Twin comparison") == 1
    assert "first table" not in text and "second table" in text and "kept" in text
    assert text.index("## Notes") < text.index("second table") < text.index("## Data caveats")
    # a deeper heading of the same words is another section, left alone
    card.write_text(text.replace("### Twin comparison", "#### Twin comparison"))
    kg_zoo.set_card_note(folder, "Twin comparison", "third table")
    text = card.read_text()
    assert "#### Twin comparison\n\nsecond table" in text and "kept" in text
    assert text.index("kept") < text.index("### Twin comparison\n\nthird table")
    assert ModelCard.load(card).data.eval_results[0].metric_value == METRICS["test_accuracy"]
    with pytest.raises(ValueError, match="no model card"):
        kg_zoo.set_card_note(tmp_path, "Twin comparison", "x")


def test_config_from_folder_round_trips_as_source(tmp_path):
    folder = write_zoo(trained_ish(kg.GResNet(8), seed=1), tmp_path / WEIGHT_ID)
    cfg = kg_zoo.pretrained_cfg_from_folder(folder, revision="a" * 40)
    assert cfg.sha256 == sha256_of(folder / "model.weights.h5")
    assert (cfg.classes, cfg.input_shape, cfg.class_names[3]) == (10, (32, 32, 3), "cat")
    assert cfg.metrics == {k: v for k, v in METRICS.items() if k in LISTING_METRICS}
    assert (cfg.mean, cfg.std) == ((125.3, 123.0, 113.9), (63.0, 62.1, 66.7))
    assert PretrainedCfg.from_dict(cfg.weight_id, json.loads(json.dumps(cfg.to_dict()))) == cfg


# ---------------------------------------------------------------- publishing and loading


def test_publish_then_load_by_tag_by_hf_ref_and_with_keras(published):
    model, folder, commit, cfg = published
    expected = predict(model)
    snapshot = Path(snapshot_download(REPO, revision=commit))
    assert {p.name for p in snapshot.iterdir()} == ZOO_FILES | {".gitattributes"}

    with pretrained_cfgs_overlay(cfg):  # empty cache, no zoo/ copy: a Hub download
        np.testing.assert_array_equal(predict(kg.GResNet(8, weights="cifar10")), expected)
    np.testing.assert_array_equal(predict(kg.GResNet(8, weights=f"hf://{REPO}@{commit}")), expected)
    np.testing.assert_array_equal(predict(keras.saving.load_model(f"hf://{REPO}")), expected)


def test_two_publishes_are_two_revisions(published, tmp_path, capsys):
    first, folder, first_commit, first_cfg = published
    second = trained_ish(kg.GResNet(8), seed=2)
    write_zoo(second, folder, overwrite=True)
    second_commit = publish(folder, capsys)
    assert second_commit != first_commit

    np.testing.assert_array_equal(predict(kg.GResNet(8, weights=f"hf://{REPO}")), predict(second))
    np.testing.assert_array_equal(predict(keras.saving.load_model(f"hf://{REPO}")), predict(second))
    pinned = kg.GResNet(8, weights=f"hf://{REPO}@{first_commit}")
    np.testing.assert_array_equal(predict(pinned), predict(first))
    np.testing.assert_array_equal(
        predict(keras.saving.load_model(snapshot_download(REPO, revision=first_commit))),
        predict(first),
    )

    # The first config, unpinned, now gets the second file from main: refused, not kept.
    unpinned = PretrainedCfg(**{**vars(first_cfg), "revision": None})
    with pretrained_cfgs_overlay(unpinned), pytest.raises(ChecksumError) as error:
        kg.GResNet(8, weights="cifar10")
    assert first_cfg.sha256 in str(error.value)
    assert sha256_of(folder / "model.weights.h5") in str(error.value)
    assert try_to_load_from_cache(REPO, "model.weights.h5") is None


def test_published_card_parses_and_carries_the_accuracy(published):
    _, _, commit, _ = published
    card = ModelCard.load(hf_hub_download(REPO, "README.md", revision=commit))
    metrics = json.loads(Path(hf_hub_download(REPO, "metrics.json", revision=commit)).read_text())
    data = card.data
    assert (data.library_name, data.license, data.datasets) == ("keras", "apache-2.0", ["cifar10"])
    assert "keras-gated" in data.tags
    [result] = data.eval_results
    assert (result.metric_type, result.dataset_split) == ("accuracy", "test")
    assert result.metric_value == metrics["test_accuracy"] == METRICS["test_accuracy"]
    assert "python -m training.train --recipe test" in card.text
    assert "not CIFAR-10" in card.text and 'keras.saving.load_model("hf://' in card.text


def test_hf_token_is_sent(published, hub, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    start = len(hub.state.requests)
    kg.GResNet(8, weights=f"hf://{REPO}")
    sent = {auth for _, _, auth in hub.state.requests[start:]}
    assert sent == {"Bearer hf_test_token"}


# ------------------------------------------------------------- cache, zoo/, offline use


def test_pull_fills_the_cache_for_offline_use(published, hub, monkeypatch, capsys):  # noqa: F811
    model, _, commit, cfg = published
    with pretrained_cfgs_overlay(cfg):
        assert main(["pull", WEIGHT_ID]) == 0
        snapshot = (
            Path(constants.HF_HUB_CACHE)
            / "models--keras-gated--gresnet8.cifar10"
            / "snapshots"
            / commit
        )
        assert {p.name for p in snapshot.iterdir()} == ZOO_FILES | {".gitattributes"}
        assert str(snapshot) in capsys.readouterr().out

        go_offline(monkeypatch)
        requests = len(hub.state.requests)
        start = time.perf_counter()
        resolve_pretrained_file(cfg)
        assert time.perf_counter() - start < 1.0
        np.testing.assert_array_equal(predict(kg.GResNet(8, weights="cifar10")), predict(model))
        np.testing.assert_array_equal(
            predict(keras.saving.load_model(snapshot_download(REPO, revision=commit))),
            predict(model),
        )
        assert len(hub.state.requests) == requests  # not one request

        # Online but the Hub unreachable (closed port): the cache comes first, no retries.
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
        start = time.perf_counter()
        np.testing.assert_array_equal(predict(kg.GResNet(8, weights="cifar10")), predict(model))
        assert time.perf_counter() - start < 5.0  # huggingface_hub's retries would take 23 s


def test_offline_without_cache_or_zoo_names_every_source(published, hub, monkeypatch):  # noqa: F811
    _, _, _, cfg = published
    go_offline(monkeypatch)
    requests = len(hub.state.requests)
    with pretrained_cfgs_overlay(cfg), pytest.raises(WeightsNotFoundError) as error:
        kg.GResNet(8, weights="cifar10")
    message = str(error.value)
    for expected in (
        "HF_HUB_OFFLINE",
        REPO,
        "1. Hugging Face cache",
        "2. zoo/ copy",
        "3. Hub download",
        f"keras-gated pull {WEIGHT_ID}",
    ):
        assert expected in message
    assert len(hub.state.requests) == requests


REFUSED = "http://127.0.0.1:9"  # nothing listens on the discard port: connections are refused


def refuse_connections(monkeypatch) -> None:
    """Point huggingface_hub at a port that refuses connections, as an unreachable Hub."""
    monkeypatch.setattr(constants, "ENDPOINT", REFUSED)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        REFUSED + "/{repo_id}/resolve/{revision}/{filename}")


def test_an_unreachable_hub_fails_hf_references_at_once(hf_home, monkeypatch):  # noqa: F811
    refuse_connections(monkeypatch)
    start = time.perf_counter()
    with pytest.raises(WeightsNotFoundError) as error:
        kg.GResNet(8, weights="hf://keras-gated/x")
    assert time.perf_counter() - start < 5.0  # huggingface_hub's retries take 23 s a file
    message = str(error.value)
    assert "Cannot reach the Hub" in message and REFUSED in message
    assert "KERAS_GATED_HUB_RETRIES" in message and "\n" not in message


def test_an_unreachable_hub_fails_registered_weights_at_once(published, monkeypatch):
    _, _, _, cfg = published
    refuse_connections(monkeypatch)
    start = time.perf_counter()
    with pytest.raises(WeightsNotFoundError) as error:
        resolve_pretrained_file(cfg)
    assert time.perf_counter() - start < 5.0
    assert "3. Hub download" in str(error.value) and "Cannot reach the Hub" in str(error.value)


def test_an_unreachable_hub_still_serves_a_cached_hf_reference(published, monkeypatch, capsys):
    model, _, commit, _ = published
    assert main(["pull", f"hf://{REPO}"]) == 0
    refuse_connections(monkeypatch)
    start = time.perf_counter()
    np.testing.assert_array_equal(predict(kg.GResNet(8, weights=f"hf://{REPO}")), predict(model))
    assert time.perf_counter() - start < 5.0


def test_publish_and_pull_to_an_unreachable_hub_end_in_one_sentence(hf_home, tmp_path,  # noqa: F811
                                                                     monkeypatch, capsys):
    """An environment fault (exit 1) without huggingface_hub's retries and log lines."""
    from tests.support.zoo import write_zoo as write_zoo_folder

    folder = write_zoo_folder(tmp_path / "src" / "gresnet8.cifar10")
    refuse_connections(monkeypatch)
    start = time.perf_counter()
    assert main(["publish", str(folder)]) == 1
    assert time.perf_counter() - start < 5.0  # huggingface_hub's retries take 23 s
    err = capsys.readouterr().err
    assert err.startswith(f"keras-gated: error: Could not reach the Hub at {REFUSED} to "
                          "publish keras-gated/gresnet8.cifar10 (")
    assert err.endswith("): check the network or HF_ENDPOINT, then publish again.\n")
    assert err.count("\n") == 1
    assert main(["pull", "hf://keras-gated/x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"keras-gated: error: Cannot reach the Hub at {REFUSED} for "
                          "hf://keras-gated/x (")
    assert err.endswith("and it is not cached: check the network or HF_ENDPOINT (or unset "
                        "HF_HUB_OFFLINE), then pull again.\n") and err.count("\n") == 1


def test_hub_retries_are_huggingface_hubs_own_when_asked_for(hf_home, monkeypatch):  # noqa: F811
    import huggingface_hub

    from keras_gated.weights.sources import hub_download

    asked = []

    def no_probe(*args, **kwargs):
        raise AssertionError("probed the Hub although retries were asked for")

    def download(repo_id, filename, **kwargs):
        asked.append((repo_id, filename))
        return "/cached/" + filename

    monkeypatch.setattr(huggingface_hub, "get_hf_file_metadata", no_probe)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    monkeypatch.setenv("KERAS_GATED_HUB_RETRIES", "1")
    assert hub_download("keras-gated/x", "model.weights.h5") == "/cached/model.weights.h5"
    assert asked == [("keras-gated/x", "model.weights.h5")]


def test_missing_repo_or_revision_falls_through_to_one_error(published):
    _, _, _, cfg = published
    missing_repo = PretrainedCfg(**{**vars(cfg), "hf_hub_id": "keras-gated/nothing.cifar10"})
    missing_revision = PretrainedCfg(**{**vars(cfg), "revision": "f" * 40})
    for bad, reason in (
        (missing_repo, "RepositoryNotFoundError"),
        (missing_revision, "RevisionNotFoundError"),
    ):
        with (
            pretrained_cfgs_overlay(bad),
            pytest.raises(WeightsNotFoundError, match=reason) as error,
        ):
            kg.GResNet(8, weights="cifar10")
        assert "HF_HUB_OFFLINE" not in str(error.value)


def test_tampered_cache_copy_is_refused_and_deleted(published, hub, capsys):  # noqa: F811
    model, _, commit, cfg = published
    with pretrained_cfgs_overlay(cfg):
        assert main(["pull", WEIGHT_ID]) == 0
        cached = Path(try_to_load_from_cache(REPO, "model.weights.h5", revision=commit))
        blob = cached.resolve()
        flip_one_byte(cached)
        bad_sha = sha256_of(cached)
        downloads = len(hub.state.requests)
        # The bad copy is deleted and the same call falls through to a good download.
        with pytest.warns(UserWarning, match="Hugging Face cache copy") as warned:
            loaded = kg.GResNet(8, weights="cifar10")
        message = " ".join(str(w.message) for w in warned)
        for expected in (str(cached), bad_sha, cfg.sha256):
            assert expected in message
        assert len(hub.state.requests) > downloads
        np.testing.assert_array_equal(predict(loaded), predict(model))
        assert sha256_of(blob) == cfg.sha256  # the blob was deleted, then downloaded again


def test_zoo_copy_is_used_offline_and_a_tampered_one_refused(published, monkeypatch, tmp_path):
    model, folder, _, cfg = published
    go_offline(monkeypatch)
    zoo_copy = Path(kg.pretrained.zoo_dir()) / WEIGHT_ID / "model.weights.h5"
    zoo_copy.parent.mkdir(parents=True)
    zoo_copy.write_bytes((folder / "model.weights.h5").read_bytes())
    with pretrained_cfgs_overlay(cfg):
        assert resolve_pretrained_file(cfg) == zoo_copy
        np.testing.assert_array_equal(predict(kg.GResNet(8, weights="cifar10")), predict(model))
        flip_one_byte(zoo_copy)
        with pytest.raises(ChecksumError) as error:
            kg.GResNet(8, weights="cifar10")
    for expected in (str(zoo_copy), sha256_of(zoo_copy), cfg.sha256, "not used"):
        assert expected in str(error.value)


def test_pull_errors_exit_nonzero(hub, capsys):  # noqa: F811
    assert main(["pull", "gresnet8.nothing"]) == 2
    assert "No released weights 'gresnet8.nothing'" in capsys.readouterr().err
    assert main(["pull", "hf://keras-gated/nothing"]) == 1
    assert "RepositoryNotFoundError" in capsys.readouterr().err
