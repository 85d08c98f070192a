"""Publishing uploads only a release's own files: a symbolic link in a zoo folder (e.g.
``training_log.txt`` pointing at the user's Hugging Face token) or any file outside the
release list is refused before anything is sent, and publishing to another repo leaves
the registered configs alone. Against the local Hub-protocol server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import keras_gated as kg
from keras_gated.release import hub as kg_hub
from keras_gated.release import zoo_folder as kg_zoo
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.zoo import write_zoo

WEIGHT_ID = "gresnet8.cifar10"
REPO = f"keras-gated/{WEIGHT_ID}"
SECRET = "hf_secret_token_of_the_user_0123456789"


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    """A stand-in for the user's Hugging Face token file, outside the zoo folder."""
    path = tmp_path / "home" / ".cache" / "huggingface" / "token"
    path.parent.mkdir(parents=True)
    path.write_text(SECRET + "\n")
    return path


def sent_anything(server) -> bool:
    """Whether any repo of the server holds the secret."""
    return any(
        SECRET.encode() in content
        for repo_id in server.state.repos
        for content in server.files(repo_id).values()
    )


@pytest.mark.parametrize("name", ["training_log.txt", "training_log.csv"])
def test_a_log_linked_to_the_token_is_refused_and_nothing_sent(hub, tmp_path, token_file, name):  # noqa: F811
    folder = write_zoo(tmp_path / "src" / WEIGHT_ID)
    (folder / "training_log.csv").unlink()
    (folder / name).symlink_to(token_file)
    with pytest.raises(ValueError, match=rf"symbolic links \({name}\)") as refused:
        kg_hub.publish(folder, REPO)
    assert str(folder) in str(refused.value)
    assert REPO not in hub.state.repos
    assert not sent_anything(hub)


def test_a_linked_folder_inside_is_refused(hub, tmp_path, token_file):  # noqa: F811
    folder = write_zoo(tmp_path / "src" / WEIGHT_ID)
    (folder / "keras_hub").symlink_to(token_file.parent, target_is_directory=True)
    with pytest.raises(ValueError, match=r"symbolic links \(keras_hub\)"):
        kg_hub.publish(folder, REPO)
    assert not sent_anything(hub)


def test_only_the_release_files_are_accepted(hub, tmp_path):  # noqa: F811
    folder = write_zoo(tmp_path / "src" / WEIGHT_ID)
    (folder / "training_log.secret").write_text(SECRET)
    with pytest.raises(ValueError, match=r"unexpected \['training_log.secret'\]"):
        kg_hub.publish(folder, REPO)
    (folder / "training_log.secret").unlink()
    kg_hub.publish(folder, REPO)
    assert set(hub.files(REPO)) == {".gitattributes", *kg_zoo.check_zoo_folder(folder)}
    assert not sent_anything(hub)


# ------------------------------------------------- publishing never rewrites registered configs

RELEASED = "plainnet10.fashion_mnist"
REPO_ROOT = Path(__file__).resolve().parents[2]


def config_files() -> dict[str, bytes]:
    """The bytes of every registered-config data file of the checkout."""
    package = REPO_ROOT / "keras_gated"
    return {p.relative_to(package).as_posix(): p.read_bytes()
            for p in sorted([*package.glob("models/*.json"), *package.glob("registry/*.json")])}


@pytest.fixture
def released_copy(tmp_path: Path) -> Path:
    """A copy of a released zoo folder (the checkout's zoo/ is never touched)."""
    import shutil

    return Path(shutil.copytree(REPO_ROOT / "zoo" / RELEASED, tmp_path / "copy" / RELEASED))


def test_publish_to_another_repo_leaves_the_configs_byte_identical(hub, released_copy, capsys):  # noqa: F811
    from keras_gated.cli import main

    before = config_files()
    assert main(["publish", str(released_copy), "--repo-id", "someone/else"]) == 0
    out = capsys.readouterr().out
    assert "registered configs are unchanged" in out and "pinned" not in out
    assert "someone/else" in hub.state.repos
    assert config_files() == before
    assert kg.registry.get_pretrained_cfg(RELEASED).hf_hub_id == f"keras-gated/{RELEASED}"


def test_pin_official_to_another_repo_is_refused_before_uploading(hub, released_copy, capsys):  # noqa: F811
    from keras_gated.cli import main

    before = config_files()
    code = main(["publish", str(released_copy), "--repo-id", "someone/else", "--pin-official"])
    assert code != 0
    err = capsys.readouterr().err
    assert "someone/else" in err and "--pin-official" in err
    assert hub.state.repos == {}
    assert config_files() == before


def test_pin_official_pins_the_registered_entry(hub, released_copy, tmp_path, monkeypatch, capsys):  # noqa: F811
    import json

    from keras_gated.cli import main
    from keras_gated.weights import registered as registry_weights

    data_file = tmp_path / "fc_nets.json"  # a copy: the checkout's data file stays as it is
    data_file.write_bytes((REPO_ROOT / "keras_gated" / "models" / "fc_nets" / "fc_nets.json").read_bytes())
    monkeypatch.setattr(registry_weights, "cfg_source_file", lambda weight_id: data_file)
    before = config_files()
    assert main(["publish", str(released_copy), "--pin-official"]) == 0
    commit = re.search(r"^commit: ([0-9a-f]{40})$", capsys.readouterr().out, re.M).group(1)
    entry = json.loads(data_file.read_text())[RELEASED]
    assert entry["revision"] == commit
    assert entry.get("hf_hub_id", f"keras-gated/{RELEASED}") == f"keras-gated/{RELEASED}"
    assert config_files() == before
