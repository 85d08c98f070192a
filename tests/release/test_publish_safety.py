"""Publishing never deletes files of an existing repo without the flag, never publishes a hard
linked file, and no message shows the credentials of a Hub URL."""

from __future__ import annotations

import os

import pytest

import keras_gated as kg
from keras_gated.files import check_not_linked
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401


# --- publish ----------------------------------------------------------------------------------
def test_publish_never_deletes_files_of_an_existing_repo_without_the_flag(hub, tmp_path):  # noqa: F811
    from huggingface_hub import HfApi

    from keras_gated.release import hub as kg_hub
    from tests.support.zoo import write_zoo

    repo = "user/existing"
    api = HfApi()
    api.create_repo(repo)
    for name, content in (("analysis.ipynb", b"{}"), ("data/train.csv", b"x,y\n1,2\n")):
        api.upload_file(path_or_fileobj=content, path_in_repo=name, repo_id=repo)
    before = hub.files(repo)
    folder = write_zoo(tmp_path / "src" / "gresnet8.cifar10")
    with pytest.raises(ValueError, match="--delete-other-files") as refused:
        kg_hub.publish(folder, repo)
    assert "analysis.ipynb" in str(refused.value) and "data/train.csv" in str(refused.value)
    assert hub.files(repo) == before  # nothing committed
    kg_hub.publish(folder, repo, delete_other_files=True)
    assert "analysis.ipynb" not in hub.files(repo) and "model.weights.h5" in hub.files(repo)
    kg_hub.publish(folder, repo)  # a repo holding only a release is published over as before


# --- release: zoo/ only with --register, whole, under a lock ---------------------------------


def test_a_hard_linked_file_is_never_published(hub, tmp_path):  # noqa: F811
    from keras_gated.release import hub as kg_hub
    from tests.support.zoo import write_zoo

    folder = write_zoo(tmp_path / "src" / "gresnet8.cifar10")
    secret = tmp_path / "token"
    secret.write_text("hf_secret_token")
    (folder / "training_log.csv").unlink()
    os.link(secret, folder / "training_log.txt")
    with pytest.raises(ValueError, match=r"hard links \(training_log.txt\)"):
        kg_hub.publish(folder, "user/repo")
    assert "user/repo" not in hub.state.repos
    with pytest.raises(ValueError, match="other hard links"):
        check_not_linked(folder / "training_log.txt", "The log")


# --- credentials in an endpoint never reach a message ----------------------------------------
def test_no_message_shows_the_credentials_of_hf_endpoint(hub, monkeypatch):  # noqa: F811
    import huggingface_hub.hf_api
    from huggingface_hub import constants

    from keras_gated.weights.sources import WeightsNotFoundError

    secret = hub.url.replace("http://", "http://user:s3cret-password@")
    monkeypatch.setenv("HF_ENDPOINT", secret)
    monkeypatch.setattr(constants, "ENDPOINT", secret)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        secret + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(huggingface_hub.hf_api.api, "endpoint", secret)
    with pytest.raises(WeightsNotFoundError) as raised:  # not on this Hub, not in the zoo
        kg.create_model("gresnet20", weights="cifar10")
    assert "s3cret-password" not in str(raised.value) and "user:" not in str(raised.value)
    assert hub.url.removeprefix("http://") in str(raised.value)  # the host is still named


def test_a_command_error_never_prints_url_credentials(capsys):
    from keras_gated.errors import run_command

    def fails() -> int:
        raise ValueError("Cannot reach http://user:s3cret@hub.example/api: check the endpoint.")

    assert run_command("keras-gated", fails) == 2
    err = capsys.readouterr().err
    assert "s3cret" not in err and "http://hub.example/api" in err
