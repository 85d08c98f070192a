"""Publishing uploads only a release's own files: a symbolic link in a zoo folder (e.g.
``training_log.txt`` pointing at the user's Hugging Face token) or any file outside the
release list is refused before anything is sent, and publishing to another repo leaves
the registered configs alone. Against the local Hub-protocol server."""

from __future__ import annotations

from pathlib import Path

import pytest

import keras_gated as kg
from keras_gated.pretrained import hub as kg_hub
from keras_gated.pretrained import zoo_folder as kg_zoo
from tests.hub_fixtures import hf_home, hub, trained_ish  # noqa: F401

WEIGHT_ID = "gresnet8.cifar10"
REPO = f"keras-gated/{WEIGHT_ID}"
SECRET = "hf_secret_token_of_the_user_0123456789"


def write_zoo(folder: Path) -> Path:
    """A small zoo folder of a 'trained' GResNet(8), with its training log."""
    log = folder.parent / "log.csv"
    folder.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("epoch,loss\n0,2.3\n")
    return kg_zoo.save_zoo_folder(
        trained_ish(kg.GResNet(8), seed=1), folder, weight_id=WEIGHT_ID,
        metrics={"test_accuracy": 0.5, "split": "test", "num_examples": 4},
        recipe="test", command="none", dataset_note="synthetic", training_log=log,
    )


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
