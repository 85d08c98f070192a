"""Hub transfers: publish a zoo folder, pull released weights into the cache.

Downloads for ``weights=`` go through ``keras_gated.pretrained.sources``; this module
holds the rest of the project's use of the Hub client.
"""

from __future__ import annotations

import os
from pathlib import Path

from keras_gated.pretrained.config import HUB_ORG
from keras_gated.registry.weights import get_pretrained_cfg
from keras_gated.pretrained.sources import (
    HF_PREFIX,
    ChecksumError,
    check_sha256,
    network_errors,
    parse_hf_ref,
    unreachable_message,
)
from keras_gated.pretrained.zoo_folder import check_zoo_folder


def _api(token: str | None = None):
    from huggingface_hub import HfApi

    from keras_gated.version import __version__

    return HfApi(library_name="keras-gated", library_version=__version__, token=token)


def publish(
    folder: str | os.PathLike,
    repo_id: str | None = None,
    *,
    token: str | None = None,
    commit_message: str | None = None,
    private: bool = False,
) -> str:
    """Upload a zoo folder to a Hub repo and return the commit id to pin.

    Creates the repo if needed. The new revision holds exactly the release files that
    ``check_zoo_folder`` lists (a folder with a symbolic link or any other file is
    refused; files of the previous revision that the folder no longer has are deleted;
    the Hub's ``.gitattributes`` stays). ``repo_id`` defaults to ``keras-gated/<folder name>``;
    the token comes from ``token``, ``HF_TOKEN`` or ``hf auth login``.
    """
    folder = Path(folder)
    files = check_zoo_folder(folder)
    repo_id = repo_id or f"{HUB_ORG}/{folder.name}"
    parse_hf_ref(repo_id)
    from huggingface_hub.errors import HfHubHTTPError

    api = _api(token)
    try:
        api.create_repo(repo_id, exist_ok=True, private=private)
        info = api.upload_folder(
            repo_id=repo_id,
            folder_path=folder,
            allow_patterns=files,
            commit_message=commit_message or f"Publish {folder.name} with keras-gated",
            delete_patterns="*",
        )
    except HfHubHTTPError as error:
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (401, 403):
            raise HubAuthError(_refused_token(repo_id, status, token)) from None
        raise
    return info.oid


class HubDownloadError(OSError):
    """A Hub download failed (missing repo or revision, network): exit 1."""


class HubAuthError(PermissionError):
    """The Hub refused the token (or its absence): an environment fault, exit 1."""


def _refused_token(repo_id: str, status: int, token: str | None) -> str:
    """One sentence for a 401/403 on publishing: which token was sent, what to do."""
    from huggingface_hub import constants

    if token:
        source = "the token passed to publish()"
    elif os.environ.get("HF_TOKEN"):
        source = "the token in HF_TOKEN"
    elif Path(constants.HF_TOKEN_PATH).is_file():
        source = (
            f"the token saved by `hf auth login` ({constants.HF_TOKEN_PATH}; HF_TOKEN is "
            "not set)"
        )
    else:
        source = "no token (HF_TOKEN is not set and `hf auth login` was not run)"
    reason = "401 Unauthorized" if status == 401 else "403 Forbidden"
    return (
        f"The Hub ({constants.ENDPOINT}) refused to publish {repo_id} ({reason}) with "
        f"{source}: set HF_TOKEN to a token with write access to "
        f"{repo_id.split('/')[0]!r} (or run `hf auth login`) and publish again."
    )


def pull(name: str, *, token: str | None = None) -> Path:
    """Download a released weight id (at its pinned revision, sha256 checked) or an
    ``hf://org/name[@revision]`` repo into the Hugging Face cache; return the folder.

    Afterwards ``weights=<tag>`` and ``keras.saving.load_model`` work offline
    (``HF_HUB_OFFLINE=1``) with the same ``HF_HOME``.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError

    if name.startswith(HF_PREFIX):
        ref = parse_hf_ref(name)
        try:
            return Path(snapshot_download(ref.repo_id, revision=ref.revision, token=token))
        except HfHubHTTPError as error:  # its message spans lines: one sentence instead
            raise HubDownloadError(
                f"Cannot download {ref} from the Hub ({type(error).__name__}, "
                f"{str(error).strip().splitlines()[0].rstrip('.')}): check the repo id and "
                "revision, and that HF_TOKEN can read it if it is private."
            ) from None
    cfg = get_pretrained_cfg(name)
    try:
        folder = Path(snapshot_download(cfg.hf_hub_id, revision=cfg.revision, token=token))
    except network_errors() as error:  # offline: name the local copy that serves it
        raise HubDownloadError(unreachable_message(cfg, error)) from None
    if not (folder / cfg.file_name).is_file():
        raise ValueError(
            f"{cfg.hf_hub_id}@{cfg.revision or 'main'} has no {cfg.file_name}; check the "
            f"registered config of {cfg.weight_id}."
        )
    try:
        check_sha256(folder / cfg.file_name, cfg, "downloaded", evict=True)
    except ChecksumError:  # a bad cached copy, now evicted: download it once more
        folder = Path(snapshot_download(cfg.hf_hub_id, revision=cfg.revision, token=token))
        check_sha256(folder / cfg.file_name, cfg, "downloaded", evict=True)
    return folder


