"""Pulling released weights (or an ``hf://`` repo) into the Hugging Face cache, so that
``weights=<tag>`` then works offline (``keras-gated pull``).

Downloads for ``weights=`` themselves go through ``keras_gated.weights.sources``;
publishing a release to the Hub is ``keras_gated.release.hub``.
"""

from __future__ import annotations

from pathlib import Path

from keras_gated.errors import without_credentials
from keras_gated.weights.planned import planned_error
from keras_gated.weights.registered import get_pretrained_cfg
from keras_gated.weights.sources import (
    HF_PREFIX,
    ChecksumError,
    check_files,
    local_copy,
    network_errors,
    parse_hf_ref,
    unreachable_message,
)


class HubDownloadError(OSError):
    """A Hub download failed (missing repo or revision, network): exit 1.

    ``local`` is ``(label, weight file)`` of a checked local copy (``zoo/`` or the
    wheel's bundled one) that serves the weights without the download, else None.
    """

    def __init__(self, message: str, local: tuple[str, Path] | None = None) -> None:
        super().__init__(message)
        self.local = local


def pull(name: str, *, token: str | None = None) -> Path:
    """Download a released weight id (at its pinned revision, sha256 checked) or an
    ``hf://org/name[@revision]`` repo into the Hugging Face cache; return the folder.

    Afterwards ``weights=<tag>`` and ``keras.saving.load_model`` work offline
    (``HF_HUB_OFFLINE=1``) with the same ``HF_HOME``.
    """
    # huggingface_hub on first use: it reads the HF_* variables at import (see sources._hf).
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    if name.startswith(HF_PREFIX):
        ref = parse_hf_ref(name)
        try:
            return Path(snapshot_download(ref.repo_id, revision=ref.revision, token=token))
        except HfHubHTTPError as error:  # its message spans lines: one sentence instead
            raise HubDownloadError(without_credentials(
                f"Cannot download {ref} from the Hub ({type(error).__name__}, "
                f"{str(error).strip().splitlines()[0].rstrip('.')}): check the repo id and "
                "revision, and that HF_TOKEN can read it if it is private."
            )) from None
        except LocalEntryNotFoundError as error:  # no answer (or offline), and not cached
            cause = error.__cause__ or error
            reason = "HF_HUB_OFFLINE" if constants.HF_HUB_OFFLINE else (
                f"{type(cause).__name__}: {str(cause).strip().splitlines()[0].rstrip('.')}"
                if str(cause).strip() else type(cause).__name__)
            raise HubDownloadError(without_credentials(
                f"Cannot reach the Hub at {constants.ENDPOINT} for {ref} ({reason}) and it is "
                "not cached: check the network or HF_ENDPOINT (or unset HF_HUB_OFFLINE), "
                "then pull again."
            )) from None
    cfg = get_pretrained_cfg(name)
    if not cfg.released:
        raise planned_error(cfg)
    try:
        folder = Path(snapshot_download(cfg.hf_hub_id, revision=cfg.revision, token=token))
    except network_errors() as error:  # offline: name the local copy that serves it
        found = local_copy(cfg)
        raise HubDownloadError(unreachable_message(cfg, error, found), local=found) from None
    missing = [name for name in cfg.files if not (folder / name).is_file()]
    if missing:
        raise ValueError(
            f"{cfg.hf_hub_id}@{cfg.revision or 'main'} has no {', '.join(missing)}; check "
            f"the registered config of {cfg.weight_id}."
        )
    try:
        check_files([folder / name for name in cfg.files], cfg, "downloaded", evict=True)
    except ChecksumError:  # bad cached copies, now every one evicted: download them again
        folder = Path(snapshot_download(cfg.hf_hub_id, revision=cfg.revision, token=token))
        check_files([folder / name for name in cfg.files], cfg, "downloaded", evict=True)
    return folder
