"""Where weights come from: the ``weights=`` argument, resolved to a verified local file.

``weights=`` on every constructor accepts:

* ``None``: random initialisation;
* a data tag (``"cifar10"``) for which a weight id ``name.tag`` is registered
  (``list_models(pretrained=True)``). Its file is looked for, in order, in

  1. the Hugging Face cache (``HF_HOME`` / ``HF_HUB_CACHE``; no network),
  2. the ``zoo/<weight id>/`` folder of a source checkout (or ``$KERAS_GATED_ZOO``),
     then the copy bundled in an installed wheel (``keras_gated/_zoo/<weight id>/``:
     the checkpoints small enough to ship, see ``setup.py``),
  3. the Hub (``hf_hub_download``: progress bar, ``HF_HUB_OFFLINE``, ``HF_TOKEN``; an
     unreachable Hub fails after one attempt, see ``hub_download``),

  and every file is checked against the config's sha256 before it is used (a release
  too large for one file is a shard index, ``model.weights.json``, and its shards, each
  pinned: ``keras_gated.weights.shards``). A missing
  file, a 404, a connection error or offline mode falls through to the next source;
  the final error names every source tried. A bad copy in the Hugging Face cache is
  deleted (never anything outside the cache) and the next source is tried; a bad
  ``zoo/`` or bundled copy or download is an error.
* a local ``.weights.h5`` file, or a Keras save folder (``config.json`` +
  ``model.weights.h5``);
* ``"hf://org/name"`` or ``"hf://org/name@revision"``: ``model.weights.h5`` of a Hub
  repo (e.g. one written by ``keras_gated.release.save_zoo_folder`` and published). Such
  ad-hoc references have no registered hash: they are trusted as the Hub serves them,
  as ``keras.saving.load_model("hf://...")`` does. Pin a revision to make them
  reproducible.

The Keras ``config.json`` saved beside the weight file (in save folders, ``zoo/``
folders and their Hub repos) records the configuration the weights were trained with;
loading compares it with the model being built (``keras_gated.weights.load``), and its class
names come from the registered config or the folder's model card.

``locate`` does all of it for one value in one pass (what it names, its verified file,
what is saved beside it); ``keras_gated.weights.resolve`` turns that into the record a
model is built from, and ``keras_gated.weights.load`` loads the file into the model (head
adaptation, strictness).
"""


from __future__ import annotations

import difflib
import hashlib
import importlib
import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keras_gated.errors import without_credentials
from keras_gated.weights.config import METRICS_FILE, WEIGHTS_FILE, PretrainedCfg
from keras_gated.weights.shards import FOLDER_WEIGHT_FILES, SHARD_INDEX, shard_names
from keras_gated.weights.planned import planned_error
from keras_gated.weights.registered import find_pretrained_cfg, list_pretrained, tags_for

ZOO_ENV = "KERAS_GATED_ZOO"
RETRIES_ENV = "KERAS_GATED_HUB_RETRIES"
HF_PREFIX = "hf://"


class WeightsNotFoundError(ValueError):
    """No source could provide a registered weight file; the message lists them all."""


class ChecksumError(ValueError):
    """A weight file does not have the sha256 of its registered config."""


class HubUnreachableError(ConnectionError):
    """The Hub did not answer (connection refused, no route, timed out) and the file is
    not cached; raised after one attempt instead of huggingface_hub's retries."""


def released_cfg(arch: str, weights: str) -> PretrainedCfg | None:
    """The config of the released weights ``arch.weights`` (a tag), None if there are none."""
    cfg = find_pretrained_cfg(arch, weights)
    return cfg if cfg is not None and cfg.released else None


# ------------------------------------------------------------------- the weights= value


@dataclass(frozen=True)
class HubRef:
    """A parsed ``hf://org/name[@revision]``."""

    repo_id: str
    revision: str | None = None

    def __str__(self) -> str:
        return f"{HF_PREFIX}{self.repo_id}" + (f"@{self.revision}" if self.revision else "")


def parse_hf_ref(ref: str) -> HubRef:
    """``"hf://org/name@rev"`` -> ``HubRef("org/name", "rev")``; a ValueError if malformed."""
    body = ref[len(HF_PREFIX) :] if ref.startswith(HF_PREFIX) else ref
    repo_id, _, revision = body.partition("@")
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts) or (ref.count("@") and not revision):
        raise ValueError(
            f"Invalid Hub reference {ref!r}: expected 'hf://org/name' or "
            "'hf://org/name@revision' (a branch, tag or commit id)."
        )
    return HubRef(repo_id, revision or None)


def local_weights_file(weights: str) -> Path | None:
    """The weight file ``weights`` names: a ``.weights.h5`` file or a shard index
    (``.weights.json``), or a save folder holding either."""
    path = Path(os.path.expanduser(weights))
    if path.is_dir():
        return next((path / name for name in FOLDER_WEIGHT_FILES if (path / name).is_file()), None)
    if path.is_file() and path.name.endswith((".weights.h5", ".weights.json")):
        return path
    return None


@dataclass(frozen=True)
class WeightsRef:
    """What a checked ``weights=`` value names: a released tag's config, a local file,
    or a Hub reference (exactly one of them)."""

    cfg: PretrainedCfg | None = None
    local: Path | None = None
    hub: HubRef | None = None


def identify_weights(
    arch: str | None, weights: str | os.PathLike, cfg: PretrainedCfg | None = None
) -> WeightsRef:
    """Check ``weights=`` (no network) and say what it names; a ValueError says what is
    accepted. ``cfg``: the config to use for a tag instead of the registered one (a
    ``pretrained_cfg_overlay``). The weights registry is read at most once here (twice
    when the value is refused, to list the tags there are)."""
    if not isinstance(weights, (str, os.PathLike)):
        raise ValueError(
            "`weights` must be None, a data tag, a path or 'hf://org/name[@revision]'; "
            f"got {type(weights).__name__}."
        )
    weights = os.fspath(weights)
    if weights.startswith(HF_PREFIX):
        return WeightsRef(hub=parse_hf_ref(weights))
    if cfg is None and arch is not None:
        cfg = find_pretrained_cfg(arch, weights)
    if cfg is not None and cfg.released:  # a tag wins over a same-named local folder
        return WeightsRef(cfg=cfg)
    local = local_weights_file(weights)
    if local is not None:
        return WeightsRef(local=local)
    if cfg is not None and os.sep not in weights:
        raise planned_error(cfg)
    if os.sep in weights or weights.endswith((".h5", ".keras")):
        raise ValueError(_not_weights_message(weights))
    tags = tags_for(arch) if arch is not None else []
    available = (
        f"Released tags for {arch!r}: {', '.join(tags)}."
        if tags
        else f"No weights are released for {arch!r} yet; use weights=None, a local "
        "`.weights.h5` file or save folder, or 'hf://org/name'."
    )
    raise ValueError(
        f"Unknown `weights`={weights!r} for {arch!r}.{_similar_tags(weights, arch)} "
        f"{available} `keras_gated.list_models(pretrained=True)` lists every released "
        "weight id."
    )


def _not_weights_message(weights: str) -> str:
    """Why a path given as ``weights=`` is not loadable, and what to pass instead."""
    path = Path(os.path.expanduser(weights))
    if path.is_file() and path.suffix == ".keras":
        return (f"`weights`={weights!r} is a whole saved model (.keras), not a weights file: "
                f"load it with keras.saving.load_model({weights!r}), or save its weights "
                "with model.save_weights('NAME.weights.h5') and pass that file.")
    if path.is_dir():
        return (f"`weights`={weights!r} is a folder without {WEIGHTS_FILE} (or {SHARD_INDEX}): "
                "pass a Keras save folder (config.json and model.weights.h5) or a "
                "`.weights.h5` file.")
    if path.exists():
        return (f"`weights`={weights!r} is not a `.weights.h5` file: pass a Keras "
                "`.weights.h5` file or a save folder (config.json and model.weights.h5).")
    return (f"`weights`={weights!r} does not exist: pass an existing `.weights.h5` file or "
            "Keras save folder (with model.weights.h5), or a released tag.")


def _similar_tags(weights: str, arch: str | None) -> str:
    """A sentence naming the registered tags (released or planned) that ``weights``
    abbreviates or nearly spells (``"imagenet"`` -> ``imagenet2012``), with their weight
    ids (``arch``'s own when it has one); empty when there are none."""
    released = set(list_pretrained())
    by_tag: dict[str, list[str]] = {}
    for weight_id in sorted(released | set(list_pretrained(planned=True))):
        by_tag.setdefault(weight_id.split(".", 1)[1], []).append(weight_id)
    key = weights.lower()
    close = [tag for tag in by_tag if tag != key and tag.startswith(key)]
    close += [tag for tag in difflib.get_close_matches(key, list(by_tag), n=3, cutoff=0.75)
              if tag not in close and tag != key]
    if not close:
        return ""
    parts = []
    for tag in close:
        ids = [f"{arch}.{tag}"] if f"{arch}.{tag}" in by_tag[tag] else by_tag[tag][:3]
        described = "; ".join(
            f"{i} {'released' if i in released else 'planned, not released yet'}" for i in ids)
        parts.append(f"{tag!r} ({described})")
    return f" Did you mean the tag {' or '.join(parts)}?"


def validate_weights(arch: str, weights: str | os.PathLike | None) -> None:
    """Check ``weights=`` before a model is built (no network); a ValueError says what
    is accepted."""
    if weights is not None:
        identify_weights(arch, weights)


# ------------------------------------------------------------------ resolving the files


def sha256_of(path: str | os.PathLike) -> str:
    """Hex sha256 digest of a file (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def zoo_dir() -> Path | None:
    """Where ``zoo/<weight id>/`` folders are looked for: ``$KERAS_GATED_ZOO`` if set,
    else the ``zoo/`` of the source checkout this package runs from (None if installed)."""
    if os.environ.get(ZOO_ENV):
        return Path(os.environ[ZOO_ENV]).expanduser()
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():
        return root / "zoo"
    return None


def bundled_zoo_dir() -> Path | None:
    """The ``<weight id>/`` folders shipped inside an installed wheel
    (``keras_gated/_zoo``, same files as ``zoo/``); None where there are none (a source
    checkout, whose ``zoo/`` is used instead)."""
    bundled = Path(__file__).resolve().parents[1] / "_zoo"
    return bundled if bundled.is_dir() else None


def local_zoo_dirs() -> list[tuple[str, Path]]:
    """(label, folder) of every local copy of the released weights, in the order they
    are tried: ``zoo_dir()``, then the wheel's bundled copy."""
    folders = [("zoo/", zoo_dir()), ("bundled", bundled_zoo_dir())]
    return [(label, folder) for label, folder in folders if folder is not None]


def _hf():
    """huggingface_hub, imported on first use: it reads the HF_* variables (cache, offline
    mode, endpoint) when imported, which the caller and the tests may set before a load,
    and costs a noticeable part of a second that reading configs does not need."""
    import huggingface_hub  # on first use: see _hf
    import huggingface_hub.constants  # a submodule: not loaded by the lazy package import

    return huggingface_hub


def _offline() -> bool:
    return bool(_hf().constants.HF_HUB_OFFLINE)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _evict_from_cache(path: Path) -> str:
    """Delete a cached file, its snapshot entry and the blob it points to, but only what
    lies inside the Hugging Face cache (real paths compared); say what was done."""
    cache = Path(os.path.realpath(_hf().constants.HF_HUB_CACHE))
    entry = Path(os.path.realpath(path.parent)) / path.name  # the link itself, not its target
    if not _inside(entry, cache):
        return f"It is not inside the Hugging Face cache ({cache}), so it was not deleted."
    blob = Path(os.path.realpath(path))
    entry.unlink(missing_ok=True)
    if blob != entry and _inside(blob, cache):
        blob.unlink(missing_ok=True)
    elif blob != entry:
        return (
            f"Its cache entry was deleted; the file it linked to, {blob}, is outside the "
            "cache and was left untouched."
        )
    return "It was deleted from the cache."


def check_sha256(path: Path, cfg: PretrainedCfg, where: str, *, evict: bool = False) -> None:
    """Raise ``ChecksumError`` (naming the file and both hashes) unless ``path`` has the
    hash registered for its file name (the weight file's, or one shard's of a sharded
    release); ``evict`` deletes a bad Hugging Face cache copy first."""
    expected = cfg.files.get(path.name, cfg.sha256)
    actual = sha256_of(path)
    if actual == expected:
        return
    if evict:
        try:
            fate = _evict_from_cache(path)
        except OSError as error:
            fate = f"Deleting it from the cache failed ({error}): delete it by hand."
    else:
        fate = "It was not used; replace it (or fix the registered sha256)."
    raise ChecksumError(
        f"{cfg.weight_id}: the {where} copy {path} has sha256 {actual}, but the "
        f"registered config expects sha256 {expected}. {fate}"
    )


def check_files(paths: list[Path], cfg: PretrainedCfg, where: str, *,
                evict: bool = False) -> Path:
    """Check every file of one copy (the weight file, or an index and its shards, in one
    folder) and return the one ``model.load_weights`` reads. Every bad file is named
    (and, with ``evict``, deleted from the cache) before the ``ChecksumError``."""
    errors = []
    for path in paths:
        try:
            check_sha256(path, cfg, where, evict=evict)
        except ChecksumError as error:
            errors.append(str(error))
    if errors:
        raise ChecksumError(" ".join(errors))
    if len({path.parent for path in paths}) > 1:
        raise ChecksumError(
            f"{cfg.weight_id}: the {where} files {', '.join(map(str, paths))} are not in one "
            "folder, so the index would not read the shards that were checked; fetch them "
            "again (`keras-gated pull`)."
        )
    if cfg.shards and set(shard_names(paths[0])) != set(cfg.shards):
        raise ChecksumError(
            f"{cfg.weight_id}: the index {paths[0]} lists the shards "
            f"{sorted(shard_names(paths[0]))}, the registered config pins "
            f"{sorted(cfg.shards)}: fix the registered config."
        )
    return paths[0]


def transport_errors() -> tuple[type[BaseException], ...]:
    """What a request that got no answer raises: OSError (sockets, and requests' errors)
    and the transport errors of the HTTP client huggingface_hub uses (httpx or httpx2)."""
    errors: list[type[BaseException]] = [OSError]
    for name in ("httpx2", "httpx"):
        try:
            errors.append(importlib.import_module(name).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


def _probe(repo_id: str, filename: str, revision: str | None, token) -> None:
    """One HEAD request for a file, without retries: a transport error (see
    ``transport_errors``) if the Hub does not answer; nothing if it answers, an HTTP error
    (404, 401) included, which the download then reports."""
    from huggingface_hub.errors import HfHubHTTPError  # on first use: see _hf

    hf = _hf()
    url = hf.hf_hub_url(repo_id, filename, revision=revision)
    try:
        hf.get_hf_file_metadata(url, token=token)
    except HfHubHTTPError:
        return


def hub_download(repo_id: str, filename: str, *, revision: str | None = None,
                 **options) -> str:
    """``huggingface_hub.hf_hub_download`` that fails at once where the Hub cannot be
    reached: one HEAD request first; without an answer, the cached copy of the file (as
    ``hf_hub_download`` would give) or ``HubUnreachableError``, where
    ``hf_hub_download`` would retry five times (about 23 s a file). With
    ``$KERAS_GATED_HUB_RETRIES`` set, offline and for ``local_files_only``, it is
    ``hf_hub_download`` itself."""
    hf = _hf()
    if options.get("local_files_only") or _offline() or os.environ.get(RETRIES_ENV):
        return hf.hf_hub_download(repo_id, filename, revision=revision, **options)
    try:
        _probe(repo_id, filename, revision, options.get("token"))
    except transport_errors() as error:
        try:
            return hf.hf_hub_download(repo_id, filename, revision=revision,
                                      **{**options, "local_files_only": True})
        except OSError:  # LocalEntryNotFoundError: not cached
            raise HubUnreachableError(_unreachable_sentence(repo_id, filename, error)) from None
    return hf.hf_hub_download(repo_id, filename, revision=revision, **options)


def _unreachable_sentence(repo_id: str, filename: str, error: BaseException) -> str:
    """Why a file could not be downloaded from a Hub that did not answer, and what to do."""
    reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return (
        f"Cannot reach the Hub at {_hf().constants.ENDPOINT} for {repo_id}/{filename} "
        f"({type(error).__name__}: {reason}) and it is not cached: check the network "
        f"and HF_ENDPOINT, set HF_HUB_OFFLINE=1 to use the cache only, or set "
        f"{RETRIES_ENV}=1 to retry as huggingface_hub does"
    )


def _fetch(cfg: PretrainedCfg, names: list[str], **options) -> list[Path]:
    """``hub_download`` of every file of a weight, the later ones at the commit the first
    resolved to, so that an index and its shards come from one revision."""
    first = Path(hub_download(cfg.hf_hub_id, names[0], revision=cfg.revision, **options))
    commit = first.parent.name if _COMMIT.match(first.parent.name) else cfg.revision
    return [first, *(Path(hub_download(cfg.hf_hub_id, name, revision=commit, **options))
                     for name in names[1:])]


def _sharded_note(cfg: PretrainedCfg) -> str:
    """What a wheel user needs to know about a release too large to ship in the wheel."""
    if not cfg.shards:
        return ""
    return (
        f" {cfg.weight_id} is a sharded release ({cfg.file_name} and {len(cfg.shards)} "
        "shards), too large to ship inside the wheel: it comes from the Hub, or from a "
        f"source checkout's zoo/ (or ${ZOO_ENV})."
    )


def resolve_pretrained_file(cfg: PretrainedCfg) -> Path:
    """The verified local path of a registered weight file (cache -> zoo -> Hub); for a
    sharded release the index, with every shard verified beside it."""
    hf = _hf()
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError  # on first use: see _hf

    fall_through = (HfHubHTTPError, EntryNotFoundError, OSError)
    revision = cfg.revision or "main"
    names = list(cfg.files)  # the file load_weights reads comes first
    complete = "complete copy" if cfg.shards else "copy"
    tried: list[str] = []
    bad_cache: ChecksumError | None = None

    cache = hf.constants.HF_HUB_CACHE
    try:
        cached = _fetch(cfg, names, local_files_only=True)
    except fall_through:
        tried.append(
            f"Hugging Face cache ({cache}): no {complete} of {cfg.hf_hub_id}@{revision}.")
    else:
        try:
            return check_files(cached, cfg, "Hugging Face cache", evict=True)
        except ChecksumError as error:  # evicted: the next sources may have a good copy
            bad_cache = error
            tried.append(f"Hugging Face cache: {error}")

    def found(path: Path) -> Path:
        if bad_cache is not None:
            warnings.warn(f"{bad_cache} Used {path} instead.", UserWarning, stacklevel=2)
        return path

    local = local_zoo_dirs()
    if not local:
        tried.append(
            f"zoo/ copy: this is not a source checkout, ${ZOO_ENV} is not set and the "
            f"installed package bundles no checkpoints.{_sharded_note(cfg)}"
        )
    for label, folder in local:
        candidate = folder / cfg.weight_id / cfg.file_name
        if not candidate.is_file():
            note = _sharded_note(cfg) if label == "bundled" else ""
            tried.append(f"{label} copy ({candidate}): no such file.{note}")
            continue
        missing = [name for name in names if not (candidate.parent / name).is_file()]
        if missing:
            tried.append(f"{label} copy ({candidate.parent}): incomplete, without "
                         f"{', '.join(missing)}.")
            continue
        return found(check_files([candidate.parent / name for name in names], cfg, label))

    where = f"Hub download ({hf.constants.ENDPOINT}/{cfg.hf_hub_id}, revision {revision})"
    if _offline():
        tried.append(f"{where}: skipped, HF_HUB_OFFLINE is set.")
    else:
        try:
            downloaded = _fetch(cfg, names)
        except fall_through as error:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
            tried.append(f"{where}: {type(error).__name__}: {first_line}")
        else:
            return found(check_files(downloaded, cfg, "downloaded", evict=True))

    listing = "\n".join(f"  {i}. {line}" for i, line in enumerate(tried, start=1))
    offline = (
        "HF_HUB_OFFLINE is set, so nothing was downloaded: unset it to download, or "
        if _offline()
        else ""
    )
    raise WeightsNotFoundError(without_credentials(
        f"Cannot find the weights {cfg.weight_id} (Hub repo {cfg.hf_hub_id}, revision "
        f"{revision}). Sources tried, in order:\n{listing}\n"
        f"{offline}run `keras-gated pull {cfg.weight_id}` where the Hub is reachable "
        "(with the same HF_HOME) to fill the cache for offline use."
    ))


def local_copy(cfg: PretrainedCfg) -> tuple[str, Path] | None:
    """(label, file) of the first local copy of released weights (``zoo/``, then the
    wheel's bundled one) whose every file has its sha256; None where there is none."""
    for label, folder in local_zoo_dirs():
        paths = [folder / cfg.weight_id / name for name in cfg.files]
        if all(p.is_file() and sha256_of(p) == cfg.files[p.name] for p in paths):
            return label, paths[0]
    return None


def network_errors() -> tuple[type[BaseException], ...]:
    """What a Hub client raises when the Hub cannot be reached (no network, refused,
    HF_HUB_OFFLINE) or answers with an error: ``transport_errors`` and huggingface_hub's
    own HTTP error."""
    from huggingface_hub.errors import HfHubHTTPError  # on first use: see _hf

    return (*transport_errors(), HfHubHTTPError)


def hub_status(error: BaseException) -> int | None:
    """The HTTP status the Hub answered with (404, 401...), None when it did not answer."""
    response = getattr(error, "response", None)
    return getattr(response, "status_code", None)


def unreachable_message(cfg: PretrainedCfg, error: BaseException,
                        found: tuple[str, Path] | None = None) -> str:
    """One sentence for a download of released weights that could not reach the Hub, or
    that the Hub refused (an HTTP status: the repo or revision is not there, or not
    readable with this token): the local copy that already serves them (``found``, from
    ``local_copy``), or how to get them."""
    status = hub_status(error)
    reason = f"{type(error).__name__}, HF_HUB_OFFLINE" if _offline() else type(error).__name__
    where = f"Cannot reach the Hub for {cfg.hf_hub_id} ({reason})"
    if status is not None:
        where = (f"The Hub at {_hf().constants.ENDPOINT} answered HTTP {status} for "
                 f"{cfg.hf_hub_id}@{cfg.revision or 'main'} ({type(error).__name__}: the repo "
                 "or revision is not there, or HF_TOKEN cannot read it)")
    if found is not None:
        label, path = found
        return (
            f"{where}, but no download is needed: the {label} copy {path} (sha256 checked) "
            f"already serves weights={cfg.tag!r} and create_model({cfg.weight_id!r})."
        )
    return without_credentials(
        f"{where}, and no local copy serves it: "
        + (f"check HF_ENDPOINT and the registered config of {cfg.weight_id}, or set "
           if status is not None else
           f"connect to {_hf().constants.ENDPOINT} (or unset HF_HUB_OFFLINE) and run "
           f"`keras-gated pull {cfg.weight_id}` again, or set ")
        + f"${ZOO_ENV} to a folder holding {cfg.weight_id}/{cfg.file_name}"
        + (f" and its {len(cfg.shards)} shards." if cfg.shards else ".")
    )


def download_hf_weights(ref: HubRef) -> Path:
    """The weights of an ad-hoc ``hf://`` reference (not hash-checked: trusted as served):
    ``model.weights.h5``, or a sharded repo's ``model.weights.json`` with its shards from
    the same commit. Uses the cache offline or when the Hub is unreachable."""
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError  # on first use: see _hf

    try:
        try:
            return Path(hub_download(ref.repo_id, WEIGHTS_FILE, revision=ref.revision))
        except EntryNotFoundError as one_file_error:
            try:
                index = Path(hub_download(ref.repo_id, SHARD_INDEX, revision=ref.revision))
            except EntryNotFoundError:
                raise one_file_error from None
        commit = index.parent.name if _COMMIT.match(index.parent.name) else ref.revision
        for name in shard_names(index):
            hub_download(ref.repo_id, name, revision=commit)
        return index
    except (HfHubHTTPError, EntryNotFoundError, OSError) as error:
        offline = " HF_HUB_OFFLINE is set and it is not cached." if _offline() else ""
        raise WeightsNotFoundError(without_credentials(
            f"Cannot get {WEIGHTS_FILE} (or a sharded {SHARD_INDEX}) of {ref}: "
            f"{type(error).__name__}: {error}.{offline} "
            f"Run `keras-gated pull {ref}` where the Hub is reachable to cache it."
        )) from error


# ------------------------------------------------- what is saved beside the weight file

CONFIG_FILE = "config.json"
CARD_FILE = "README.md"
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def companion_file(
    path: Path, file_name: str, hub_source: tuple[str, str | None] | None = None
) -> Path | None:
    """``file_name`` (``config.json``, ``README.md``) saved with the weight file ``path``:
    beside it in a save folder, ``zoo/`` folder or Hub snapshot, else fetched from the
    Hub repo and revision the weights come from (``hub_source``; a cache snapshot's own
    commit wins), the cache first, nothing downloaded offline. None if there is none
    (e.g. a plain ``.weights.h5`` file)."""
    if path.name in FOLDER_WEIGHT_FILES and (path.parent / file_name).is_file():
        return path.parent / file_name
    source = hub_source
    if source is None:
        return None
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError  # on first use: see _hf

    repo_id, revision = source
    if _COMMIT.match(path.parent.name):  # a cache snapshot: the weights' own commit
        revision = path.parent.name
    for local_only in (True, False):
        if not local_only and _offline():
            break
        try:
            return Path(hub_download(repo_id, file_name, revision=revision,
                                     local_files_only=local_only))
        except (HfHubHTTPError, EntryNotFoundError, OSError):
            continue
    return None


def read_saved_config(path: Path) -> dict:
    """The Keras model config saved in ``path`` (``config.json``)."""
    try:
        config = json.loads(path.read_text())
        return config["config"] if "layers" not in config else config
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{path} is not a Keras model config ({type(error).__name__}: {error}); "
            "save the model again with keras.saving.save_model(..., zipped=False)."
        ) from None


def card_class_names(card: Path) -> tuple[str, ...] | None:
    """The class names in a model card's front matter (``keras_gated.datasets.CLASS_NAMES``);
    None when it has none."""
    from huggingface_hub import ModelCard  # on first use: see _hf

    try:
        info = ModelCard.load(card).data.to_dict().get("keras_gated") or {}
    except (ValueError, OSError):
        return None
    names = info.get("class_names") if isinstance(info, dict) else None
    return tuple(str(n) for n in names) if isinstance(names, list) and names else None


# ------------------------------------------------------------ one value, found whole


@dataclass(frozen=True)
class Located:
    """The files a ``weights=`` value names, found and verified, and what is saved with
    them: the one answer of ``locate``."""

    ref: WeightsRef
    path: Path  # the weight file (or shard index) ``load_weights`` reads
    hub_source: tuple[str, str | None] | None  # (repo id, revision) the files come from
    saved_config: dict | None  # the Keras model config saved beside them (None: none)
    card_class_names: tuple[str, ...] | None  # the class names of their model card
    trained_with: dict  # a zoo folder's recorded constructor arguments (``metrics.json``)


def locate(
    arch: str | None,
    weights: str,
    cfg: PretrainedCfg | None = None,
    file: str | None = None,
    *,
    stacklevel: int = 2,
) -> Located:
    """Everything on disk or on the Hub about one ``weights=`` value, in one pass: what it
    names (``identify_weights``), its verified weight file (cache -> zoo -> Hub for a tag,
    the repo's for an ``hf://`` reference, the file itself for a path; ``file``: a local
    file in place of the tag's), and the config, model card and run record saved with it
    (the card only when the tag's config has no class names). A released config's caveat
    is said here, once (a UserWarning, ``stacklevel`` frames up)."""
    ref = identify_weights(arch, weights, cfg)
    trained_with: dict = {}
    if ref.hub is not None:
        path = download_hf_weights(ref.hub)
        hub_source = (ref.hub.repo_id, ref.hub.revision)
    elif ref.cfg is not None:
        cfg = ref.cfg
        if cfg.caveat:
            warnings.warn(f"Weights {cfg.weight_id}: {cfg.caveat}", UserWarning,
                          stacklevel=stacklevel + 1)
        if file is None and os.path.lexists(weights):
            warnings.warn(
                f"weights={weights!r} is both the released tag {cfg.weight_id} and a path in "
                f"the working directory: the released weights {cfg.weight_id} are used; "
                f"pass {os.path.join('.', weights)!r} to load the path instead.",
                UserWarning, stacklevel=stacklevel + 1,
            )
        if file is not None:
            path = local_weights_file(file)
            if path is None:
                raise ValueError(
                    f"pretrained_cfg_overlay file {file!r} is not a `.weights.h5` "
                    "file, a shard index (`.weights.json`) or a Keras save folder (with "
                    "model.weights.h5) that exists."
                )
            hub_source = None
        else:
            path = resolve_pretrained_file(cfg)
            hub_source = (cfg.hf_hub_id, cfg.revision)
    else:
        path, hub_source = ref.local, None
        trained_with = _trained_with(weights)
    config_file = companion_file(path, CONFIG_FILE, hub_source)
    card = None
    if ref.cfg is None or not ref.cfg.class_names:
        card = companion_file(path, CARD_FILE, hub_source)
    return Located(
        ref, path, hub_source,
        saved_config=None if config_file is None else read_saved_config(config_file),
        card_class_names=None if card is None else card_class_names(card),
        trained_with=trained_with,
    )


def _trained_with(weights: str) -> dict[str, Any]:
    """The constructor arguments a zoo folder's training run used (its ``metrics.json``
    records them as ``model_args``); empty for anything else."""
    metrics = Path(os.path.expanduser(weights)) / METRICS_FILE
    if not metrics.is_file():
        return {}
    with open(metrics) as f:
        return dict(json.load(f).get("model_args") or {})
