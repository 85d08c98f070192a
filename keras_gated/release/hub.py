"""Publishing a zoo folder to the Hugging Face Hub (``keras-gated publish``).

Downloads for ``weights=`` go through ``keras_gated.weights.sources`` and pulling into
the cache is ``keras_gated.weights.hub``; this module is the release side of the Hub.

A release with a keras-hub preset (``keras_hub/`` in its zoo folder) is published as two
repos, because keras-hub reads a preset from the root of a repo (``hf://org/name`` has no
subfolder) and its ``config.json`` / ``model.weights.h5`` are the backbone's, while the
release repo's are the whole Keras model that ``keras.saving.load_model`` reads:

* ``org/<weight id>``: the zoo folder, plus the preset's ``task.json`` and
  ``task.weights.h5`` at its root, so that ``keras_hub.models.ImageClassifier.
  from_preset("hf://org/<weight id>")`` works too (the backbone's weights are read from
  the model's own ``model.weights.h5``, whose layers carry the same names);
* ``org/<weight id>-keras-hub``: the preset alone, at its root, for every keras-hub
  loader (``Backbone.from_preset`` included).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from keras_gated.errors import without_credentials
from keras_gated.files import is_linked
from keras_gated.release.zoo_folder import KERAS_HUB_PRESET, RELEASE_FILES, check_zoo_folder
from keras_gated.version import __version__
from keras_gated.weights.config import HUB_ORG
from keras_gated.weights.sources import HF_PREFIX, parse_hf_ref, transport_errors


def _api(token: str | None = None):
    from huggingface_hub import HfApi  # imported on first use: it reads HF_* at import

    return HfApi(library_name="keras-gated", library_version=__version__, token=token)


KERAS_HUB_SUFFIX = "-keras-hub"  # the repo of a release's keras-hub preset
TASK_FILES = ("task.json", "task.weights.h5")  # the preset's task, also at the release root
# The flag that lets publishing delete files of a repo that no keras-gated release holds.
DELETE_OTHERS_FLAG = "--delete-other-files"
# Shards of a sharded release (Keras's own names): files a release repo may hold.
SHARD_FILE = re.compile(r"model_\d{5}\.weights\.h5")


def published_name(name: str) -> bool:
    """Whether a file of a Hub repo is one that publishing a zoo folder writes (in the
    release repo or its keras-hub preset repo): such a file may be replaced or deleted
    by the next publication; any other file is the repo owner's."""
    preset = {f.removeprefix(KERAS_HUB_PRESET) for f in RELEASE_FILES if f.startswith(KERAS_HUB_PRESET)}
    return (name == ".gitattributes" or name in RELEASE_FILES or name in TASK_FILES
            or name in preset or SHARD_FILE.fullmatch(name) is not None)


def other_files(api, repo_id: str) -> list[str]:
    """The files of ``repo_id``'s main revision that no keras-gated publication writes
    ([] when the repo does not exist yet)."""
    from huggingface_hub.errors import RepositoryNotFoundError  # on first use: see _api

    try:
        files = api.list_repo_files(repo_id)
    except RepositoryNotFoundError:
        return []
    return sorted(name for name in files if not published_name(name))


def check_no_other_files(api, repo_ids: list[str]) -> None:
    """Refuse (``ValueError``), before anything is uploaded, to publish over repos that hold
    files of their own (notebooks, data): a publication makes a repo exactly the release,
    so it would delete them."""
    for repo_id in repo_ids:
        others = other_files(api, repo_id)
        if others:
            shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            raise ValueError(
                f"The Hub repo {repo_id} holds files that are not part of a release ({shown}), "
                f"which publishing would delete: publish to a new repo, or pass "
                f"{DELETE_OTHERS_FLAG} to delete them.")


def keras_hub_repo_id(repo_id: str) -> str:
    """The Hub repo that holds the keras-hub preset of the release in ``repo_id``
    (``keras-gated/gresnet20.cifar10`` -> ``keras-gated/gresnet20.cifar10-keras-hub``)."""
    return f"{repo_id}{KERAS_HUB_SUFFIX}"


def keras_hub_handle(repo_id: str) -> str:
    """The handle that keras-hub's ``from_preset`` loads the release's preset from."""
    return f"{HF_PREFIX}{keras_hub_repo_id(repo_id)}"


def repo_layouts(folder: Path, files: list[str]) -> tuple[dict[str, Path], dict[str, Path]]:
    """``(release, preset)``: ``{path in the repo: file}`` of the release repo and of its
    keras-hub preset repo (empty without a ``keras_hub/`` preset in the folder)."""
    preset = {name.removeprefix(KERAS_HUB_PRESET): folder / name
              for name in files if name.startswith(KERAS_HUB_PRESET)}
    release = {name: folder / name for name in files if not name.startswith(KERAS_HUB_PRESET)}
    if preset:
        release.update({name: preset[name] for name in TASK_FILES if name in preset})
    return release, preset


def preset_card(repo_id: str, weight_id: str) -> str:
    """The model card of a keras-hub preset repo: what it is and how to load it."""
    handle = keras_hub_handle(repo_id)
    return (
        "---\nlibrary_name: keras-hub\ntags:\n- keras-gated\n---\n\n"
        f"# {weight_id} as a keras-hub preset\n\n"
        f"The keras-hub `ImageClassifier` preset of [{repo_id}](https://huggingface.co/"
        f"{repo_id}) (its card has the training record); the classifier outputs logits.\n\n"
        "```python\nimport keras_hub\n"
        "import keras_gated.keras_hub  # registers keras-gated's classes with Keras\n\n"
        f'classifier = keras_hub.models.ImageClassifier.from_preset("{handle}")\n'
        f'backbone = keras_hub.models.Backbone.from_preset("{handle}")\n```\n'
    )


def _upload(api, repo_id: str, layout: dict[str, Path], message: str, private: bool,
            texts: dict[str, str] | None = None) -> str:
    """Make the ``main`` revision of ``repo_id`` exactly ``layout`` plus ``texts``
    (``{path in the repo: content}``; the Hub's ``.gitattributes`` stays) and return its
    commit id."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as staging:
        for name, source in layout.items():
            target = Path(staging, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        for name, text in (texts or {}).items():
            Path(staging, name).write_text(text)
        api.create_repo(repo_id, exist_ok=True, private=private)
        info = api.upload_folder(repo_id=repo_id, folder_path=staging, commit_message=message,
                                 delete_patterns="*")
    return info.oid


def publish(
    folder: str | os.PathLike,
    repo_id: str | None = None,
    *,
    token: str | None = None,
    commit_message: str | None = None,
    private: bool = False,
    delete_other_files: bool = False,
) -> str:
    """Upload a zoo folder to a Hub repo and return the commit id to pin.

    Creates the repo if needed. The new revision holds exactly the release files that
    ``check_zoo_folder`` lists (a folder with a symbolic link, a file with other hard
    links or any other file is refused; files of the previous revision that the folder
    no longer has are deleted; the Hub's ``.gitattributes`` stays), its keras-hub preset
    aside: that goes to the root
    of ``keras_hub_repo_id(repo_id)``, and its task files also to the root of ``repo_id``
    (see the module's docstring). A repo holding files that no release holds (a
    notebook, data) is refused before anything is uploaded unless ``delete_other_files``
    (``other_files``). ``repo_id`` defaults to ``keras-gated/<folder name>``; the token
    comes from ``token``, ``HF_TOKEN`` or ``hf auth login``.
    """
    folder = Path(folder)
    files = check_zoo_folder(folder)
    shared = [name for name in files if is_linked(folder / name)]
    if shared:
        raise ValueError(
            f"{folder} holds files with other hard links ({', '.join(shared)}), which are never "
            "published: replace each by a copy of its own (or remove it) and publish again.")
    repo_id = repo_id or f"{HUB_ORG}/{folder.name}"
    parse_hf_ref(repo_id)
    from huggingface_hub.errors import HfHubHTTPError  # on first use: see _api

    release, preset = repo_layouts(folder, files)
    message = commit_message or f"Publish {folder.name} with keras-gated"
    api = _api(token)
    check_reachable(api, repo_id)
    target = repo_id
    try:
        if not delete_other_files:
            check_no_other_files(api, [repo_id, *([keras_hub_repo_id(repo_id)] if preset else [])])
        commit = _upload(api, repo_id, release, message, private)
        if preset:
            target = keras_hub_repo_id(repo_id)
            _upload(api, target, preset, message, private,
                    texts={"README.md": preset_card(repo_id, folder.name)})
    except HfHubHTTPError as error:
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (401, 403):
            raise HubAuthError(_refused_token(target, status, token)) from None
        raise
    except _client_errors() as error:  # the connection failed part way
        raise HubUnreachableError(_unreachable(api, target, error)) from None
    return commit


class HubAuthError(PermissionError):
    """The Hub refused the token (or its absence): an environment fault, exit 1."""


class HubUnreachableError(ConnectionError):
    """The Hub did not answer (no network, refused, timed out): an environment fault,
    exit 1."""


def _client_errors() -> tuple[type[BaseException], ...]:
    """The HTTP client's transport errors, without ``OSError``: a local file that cannot
    be read while uploading is not a network failure."""
    return tuple(error for error in transport_errors() if error is not OSError)


def check_reachable(api, repo_id: str) -> None:
    """One request for ``repo_id``'s info, without huggingface_hub's retries (which log a
    line each and take about 23 s): ``HubUnreachableError`` if the Hub does not answer.
    Any answer, an HTTP error (404 for a new repo, 401) included, is enough."""
    from huggingface_hub.errors import HfHubHTTPError  # on first use: see _api

    try:
        api.model_info(repo_id)
    except HfHubHTTPError:
        return
    except transport_errors() as error:
        raise HubUnreachableError(_unreachable(api, repo_id, error)) from None


def _unreachable(api, repo_id: str, error: BaseException) -> str:
    """One sentence for a publish the Hub did not answer: where, why, what to do."""
    lines = str(error).strip().splitlines()
    reason = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return without_credentials(
        f"Could not reach the Hub at {api.endpoint} to publish {repo_id} ({reason}): check "
        "the network or HF_ENDPOINT, then publish again."
    )


def _refused_token(repo_id: str, status: int, token: str | None) -> str:
    """One sentence for a 401/403 on publishing: which token was sent, what to do."""
    from huggingface_hub import constants  # on first use: see _api

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
    return without_credentials(
        f"The Hub ({constants.ENDPOINT}) refused to publish {repo_id} ({reason}) with "
        f"{source}: set HF_TOKEN to a token with write access to "
        f"{repo_id.split('/')[0]!r} (or run `hf auth login`) and publish again."
    )
