"""Pretrained weights: the per-weight configs and the ``weights=`` argument.

``weights=`` on every constructor accepts:

* ``None``: random initialisation;
* a data tag (``"cifar10"``) for which a weight id ``name.tag`` is registered
  (``list_models(pretrained=True)``). Its file is looked for, in order, in

  1. the Hugging Face cache (``HF_HOME`` / ``HF_HUB_CACHE``; no network),
  2. the ``zoo/<weight id>/`` folder of a source checkout (or ``$KERAS_GATED_ZOO``),
     then the copy bundled in an installed wheel (``keras_gated/_zoo/<weight id>/``:
     the checkpoints small enough to ship, see ``setup.py``),
  3. the Hub (``hf_hub_download``: progress bar, ``HF_HUB_OFFLINE``, ``HF_TOKEN``),

  and every file is checked against the config's sha256 before it is used. A missing
  file, a 404, a connection error or offline mode falls through to the next source;
  the final error names every source tried. A bad copy in the Hugging Face cache is
  deleted (never anything outside the cache) and the next source is tried; a bad
  ``zoo/`` or bundled copy or download is an error.
* a local ``.weights.h5`` file, or a Keras save folder (``config.json`` +
  ``model.weights.h5``);
* ``"hf://org/name"`` or ``"hf://org/name@revision"``: ``model.weights.h5`` of a Hub
  repo (e.g. one written by ``keras_gated.hub.save_zoo_folder`` and published). Such
  ad-hoc references have no registered hash: they are trusted as the Hub serves them,
  as ``keras.saving.load_model("hf://...")`` does. Pin a revision to make them
  reproducible.

The Keras ``config.json`` saved beside the weight file (in save folders, ``zoo/``
folders and their Hub repos) records the configuration the weights were trained with;
loading compares it with the model being built (``keras_gated.loading``), and its class
names come from the registered config or the folder's model card.

How a file is loaded into a model (head adaptation, strictness) is in
``keras_gated.loading``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import keras

from keras_gated.weight_ids import WeightIdParts

WEIGHTS_FILE = "model.weights.h5"
HUB_ORG = "keras-gated"
ZOO_ENV = "KERAS_GATED_ZOO"
HF_PREFIX = "hf://"

_WEIGHT_ID = re.compile(r"^[a-z0-9_]+\.[a-z0-9_]+$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class WeightsNotFoundError(ValueError):
    """No source could provide a registered weight file; the message lists them all."""


class ChecksumError(ValueError):
    """A weight file does not have the sha256 of its registered config."""


@dataclass(frozen=True)
class PretrainedCfg(WeightIdParts):
    """Everything known about one released weight, keyed by weight id ``name.tag``.

    Attributes:
        weight_id: ``"gresnet20.cifar10"``: registry name + data tag; also the ``zoo/``
            folder and the Hub repo name.
        dataset: the data it was trained on, e.g. ``"cifar10 (tfds), train split"``.
        classes: size of the ``predictions`` head.
        class_names: one name per class.
        input_shape: the input shape (without batch) it was trained with.
        preprocessing: what the in-model ``preprocessing`` layer does to 0-255 pixels.
        sha256: hex digest of ``file_name``: the pin that every copy is checked against.
        hf_hub_id: the Hub repo; defaults to ``keras-gated/<weight id>``.
        revision: the Hub commit to download; None (``main``) until really published.
        file_name: the weight file in the repo / zoo folder.
        metrics: the measured metrics (``metrics.json``), accuracy as a fraction.
        license, recipe, command: how it was made (the command reproduces it).
        caveat: empty for a sound checkpoint; otherwise a warning given whenever the
            weights are loaded (e.g. a run that did not converge, released as the record
            of that result).
    """

    weight_id: str
    dataset: str
    classes: int
    class_names: tuple[str, ...]
    input_shape: tuple[int, ...]
    preprocessing: str
    sha256: str
    hf_hub_id: str = ""
    revision: str | None = None
    file_name: str = WEIGHTS_FILE
    metrics: dict[str, Any] = field(default_factory=dict)
    license: str = "apache-2.0"
    recipe: str = ""
    command: str = ""
    caveat: str = ""

    def __post_init__(self) -> None:
        if not _WEIGHT_ID.match(self.weight_id):
            raise ValueError(
                f"A weight id is `name.tag` in lower case (e.g. 'gresnet20.cifar10'), "
                f"got {self.weight_id!r}."
            )
        if not isinstance(self.sha256, str) or not _SHA256.match(self.sha256):
            raise ValueError(
                f"{self.weight_id}: `sha256` must be the 64-character lower-case hex digest "
                f"of {self.file_name}, got {self.sha256!r}."
            )
        if self.class_names and len(self.class_names) != self.classes:
            raise ValueError(
                f"{self.weight_id}: {len(self.class_names)} class names for {self.classes} classes."
            )
        object.__setattr__(self, "class_names", tuple(self.class_names))
        object.__setattr__(self, "input_shape", tuple(self.input_shape))
        if not self.hf_hub_id:
            object.__setattr__(self, "hf_hub_id", f"{HUB_ORG}/{self.weight_id}")


# ---------------------------------------------------------------------------- registry

_PRETRAINED: dict[str, PretrainedCfg] | None = None


def _registry() -> dict[str, PretrainedCfg]:
    """The released configs, read once from ``keras_gated.pretrained_cfgs``."""
    global _PRETRAINED
    if _PRETRAINED is None:
        from keras_gated.pretrained_cfgs import PRETRAINED_CFGS

        _PRETRAINED = {}
        for cfg in PRETRAINED_CFGS:
            register_pretrained(cfg)
    return _PRETRAINED


def register_pretrained(cfg: PretrainedCfg, *, overwrite: bool = False) -> None:
    """Make ``weights=cfg.tag`` resolve for ``cfg.arch`` (released weights are listed in
    ``keras_gated/pretrained_cfgs.py``; tests and forks may register more)."""
    if not isinstance(cfg, PretrainedCfg):
        raise ValueError(f"Expected a PretrainedCfg, got {type(cfg).__name__}.")
    registry = _registry()
    if cfg.weight_id in registry and not overwrite:
        raise ValueError(
            f"Weights {cfg.weight_id!r} are already registered; pass overwrite=True to "
            "replace them."
        )
    registry[cfg.weight_id] = cfg


def unregister_pretrained(weight_id: str) -> PretrainedCfg:
    """Remove a registered weight id and return its config."""
    get_pretrained_cfg(weight_id)
    return _registry().pop(weight_id)


@contextlib.contextmanager
def pretrained_cfgs_overlay(*cfgs: PretrainedCfg) -> Iterator[None]:
    """Register ``cfgs`` (replacing same-id ones) for the duration of a ``with`` block."""
    registry = _registry()
    saved = dict(registry)
    try:
        for cfg in cfgs:
            register_pretrained(cfg, overwrite=True)
        yield
    finally:
        registry.clear()
        registry.update(saved)


def list_pretrained(pattern: str | None = None) -> list[str]:
    """The weight ids (``name.tag``) of every registered weight, optionally fnmatch-ed."""
    ids = sorted(_registry())
    return [i for i in ids if pattern is None or fnmatch.fnmatch(i, pattern)]


def get_pretrained_cfg(weight_id: str) -> PretrainedCfg:
    """The config of a released weight, e.g. ``get_pretrained_cfg("gresnet20.cifar10")``."""
    registry = _registry()
    if weight_id not in registry:
        released = ", ".join(sorted(registry)) or "none yet"
        raise ValueError(f"No released weights {weight_id!r}. Released: {released}.")
    return registry[weight_id]


def tags_for(arch: str) -> list[str]:
    """The data tags registered for an architecture (``["cifar10"]``)."""
    return sorted(cfg.tag for cfg in _registry().values() if cfg.arch == arch)


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
    """The `.weights.h5` file `weights` names (a file, or a save folder holding one)."""
    path = Path(os.path.expanduser(weights))
    if path.is_dir() and (path / WEIGHTS_FILE).is_file():
        return path / WEIGHTS_FILE
    if path.is_file() and path.name.endswith(".weights.h5"):
        return path
    return None


def validate_weights(arch: str, weights: str | os.PathLike | None) -> None:
    """Check ``weights=`` before a model is built (no network); a ValueError says what
    is accepted."""
    if weights is None:
        return
    if not isinstance(weights, (str, os.PathLike)):
        raise ValueError(
            "`weights` must be None, a data tag, a path or 'hf://org/name[@revision]'; "
            f"got {type(weights).__name__}."
        )
    weights = os.fspath(weights)
    if weights.startswith(HF_PREFIX):
        parse_hf_ref(weights)
        return
    if f"{arch}.{weights}" in _registry() or local_weights_file(weights) is not None:
        return
    if os.sep not in weights:
        from keras_gated.planned import check_not_planned

        check_not_planned(arch, weights)
    if os.sep in weights or weights.endswith((".h5", ".keras")):
        raise ValueError(
            f"`weights`={weights!r} is not a `.weights.h5` file or a Keras save folder "
            "(with model.weights.h5) that exists."
        )
    tags = tags_for(arch)
    available = (
        f"Released tags for {arch!r}: {', '.join(tags)}."
        if tags
        else f"No weights are released for {arch!r} yet; use weights=None, a local "
        "`.weights.h5` file or save folder, or 'hf://org/name'."
    )
    raise ValueError(
        f"Unknown `weights`={weights!r} for {arch!r}. {available} "
        "`keras_gated.list_models(pretrained=True)` lists every released weight id."
    )


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
    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file():
        return root / "zoo"
    return None


def bundled_zoo_dir() -> Path | None:
    """The ``<weight id>/`` folders shipped inside an installed wheel
    (``keras_gated/_zoo``, same files as ``zoo/``); None where there are none (a source
    checkout, whose ``zoo/`` is used instead)."""
    bundled = Path(__file__).resolve().parent / "_zoo"
    return bundled if bundled.is_dir() else None


def local_zoo_dirs() -> list[tuple[str, Path]]:
    """(label, folder) of every local copy of the released weights, in the order they
    are tried: ``zoo_dir()``, then the wheel's bundled copy."""
    folders = [("zoo/", zoo_dir()), ("bundled", bundled_zoo_dir())]
    return [(label, folder) for label, folder in folders if folder is not None]


def _hf():
    """huggingface_hub, imported on first use (it reads HF_* variables at import)."""
    import huggingface_hub
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
    registered hash; ``evict`` deletes a bad Hugging Face cache copy first."""
    actual = sha256_of(path)
    if actual == cfg.sha256:
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
        f"registered config expects sha256 {cfg.sha256}. {fate}"
    )


def resolve_pretrained_file(cfg: PretrainedCfg) -> Path:
    """The verified local path of a registered weight file (cache -> zoo -> Hub)."""
    hf = _hf()
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    fall_through = (HfHubHTTPError, EntryNotFoundError, OSError)
    revision = cfg.revision or "main"
    tried: list[str] = []
    bad_cache: ChecksumError | None = None

    cache = hf.constants.HF_HUB_CACHE
    try:
        cached = hf.hf_hub_download(
            cfg.hf_hub_id, cfg.file_name, revision=cfg.revision, local_files_only=True
        )
    except fall_through:
        tried.append(f"Hugging Face cache ({cache}): no copy of {cfg.hf_hub_id}@{revision}.")
    else:
        try:
            check_sha256(Path(cached), cfg, "Hugging Face cache", evict=True)
            return Path(cached)
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
            "installed package bundles no checkpoints."
        )
    for label, folder in local:
        candidate = folder / cfg.weight_id / cfg.file_name
        if candidate.is_file():
            check_sha256(candidate, cfg, label)
            return found(candidate)
        tried.append(f"{label} copy ({candidate}): no such file.")

    where = f"Hub download ({hf.constants.ENDPOINT}/{cfg.hf_hub_id}, revision {revision})"
    if _offline():
        tried.append(f"{where}: skipped, HF_HUB_OFFLINE is set.")
    else:
        try:
            downloaded = hf.hf_hub_download(cfg.hf_hub_id, cfg.file_name, revision=cfg.revision)
        except fall_through as error:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
            tried.append(f"{where}: {type(error).__name__}: {first_line}")
        else:
            check_sha256(Path(downloaded), cfg, "downloaded", evict=True)
            return found(Path(downloaded))

    listing = "\n".join(f"  {i}. {line}" for i, line in enumerate(tried, start=1))
    offline = (
        "HF_HUB_OFFLINE is set, so nothing was downloaded: unset it to download, or "
        if _offline()
        else ""
    )
    raise WeightsNotFoundError(
        f"Cannot find the weights {cfg.weight_id} (Hub repo {cfg.hf_hub_id}, revision "
        f"{revision}). Sources tried, in order:\n{listing}\n"
        f"{offline}run `keras-gated pull {cfg.weight_id}` where the Hub is reachable "
        "(with the same HF_HOME) to fill the cache for offline use."
    )


def download_hf_weights(ref: HubRef) -> Path:
    """``model.weights.h5`` of an ad-hoc ``hf://`` reference (not hash-checked: trusted as
    served). Uses the cache offline or when the Hub is unreachable."""
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    try:
        return Path(_hf().hf_hub_download(ref.repo_id, WEIGHTS_FILE, revision=ref.revision))
    except (HfHubHTTPError, EntryNotFoundError, OSError) as error:
        offline = " HF_HUB_OFFLINE is set and it is not cached." if _offline() else ""
        raise WeightsNotFoundError(
            f"Cannot get {WEIGHTS_FILE} of {ref}: {type(error).__name__}: {error}.{offline} "
            f"Run `keras-gated pull {ref}` where the Hub is reachable to cache it."
        ) from error


def resolve_weights_file(arch: str, weights: str | os.PathLike) -> tuple[Path, str]:
    """(local weight file, a description for messages) for a validated ``weights=``."""
    weights = os.fspath(weights)
    if weights.startswith(HF_PREFIX):
        ref = parse_hf_ref(weights)
        return download_hf_weights(ref), str(ref)
    if f"{arch}.{weights}" in _registry():  # a tag wins over a same-named local folder
        cfg = get_pretrained_cfg(f"{arch}.{weights}")
        if cfg.caveat:
            warnings.warn(f"Weights {cfg.weight_id}: {cfg.caveat}", UserWarning, stacklevel=4)
        return resolve_pretrained_file(cfg), f"weights {cfg.weight_id}"
    local = local_weights_file(weights)
    if local is None:
        raise ValueError(f"`weights`={weights!r} is not a tag, a weight file or a save folder.")
    return local, str(local)


# ------------------------------------------------- what is saved beside the weight file

CONFIG_FILE = "config.json"
CARD_FILE = "README.md"
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def _hub_source(arch: str, weights: str) -> tuple[str, str | None] | None:
    """(Hub repo, revision) that registered or ``hf://`` weights come from; else None."""
    if weights.startswith(HF_PREFIX):
        ref = parse_hf_ref(weights)
        return ref.repo_id, ref.revision
    if f"{arch}.{weights}" in _registry():
        cfg = get_pretrained_cfg(f"{arch}.{weights}")
        return cfg.hf_hub_id, cfg.revision
    return None


def companion_file(arch: str, weights: str, path: Path, file_name: str) -> Path | None:
    """``file_name`` (``config.json``, ``README.md``) saved with the weight file ``path``:
    beside it in a save folder, ``zoo/`` folder or Hub snapshot, else fetched from the
    same Hub repo and commit (the cache first; nothing is downloaded offline). None if
    there is none (e.g. a plain ``.weights.h5`` file)."""
    if path.name == WEIGHTS_FILE and (path.parent / file_name).is_file():
        return path.parent / file_name
    source = _hub_source(arch, weights)
    if source is None:
        return None
    hf = _hf()
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    repo_id, revision = source
    if _COMMIT.match(path.parent.name):  # a cache snapshot: the weights' own commit
        revision = path.parent.name
    for local_only in (True, False):
        if not local_only and _offline():
            break
        try:
            return Path(
                hf.hf_hub_download(repo_id, file_name, revision=revision,
                                   local_files_only=local_only)
            )
        except (HfHubHTTPError, EntryNotFoundError, OSError):
            continue
    return None


def read_saved_config(path: Path) -> dict:
    """The Keras model config saved in ``path`` (``config.json``)."""
    import json

    try:
        config = json.loads(path.read_text())
        return config["config"] if "layers" not in config else config
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{path} is not a Keras model config ({type(error).__name__}: {error}); "
            "save the model again with keras.saving.save_model(..., zipped=False)."
        ) from None


def weights_class_names(arch: str, weights: str, path: Path) -> tuple[str, ...] | None:
    """The class names of ``weights``: the registered config's, or those of the model
    card (``README.md`` front matter) saved with them; None when unknown."""
    weights = os.fspath(weights)
    if f"{arch}.{weights}" in _registry():
        return get_pretrained_cfg(f"{arch}.{weights}").class_names or None
    card = companion_file(arch, weights, path, CARD_FILE)
    if card is None:
        return None
    from huggingface_hub import ModelCard

    try:
        info = ModelCard.load(card).data.to_dict().get("keras_gated") or {}
    except (ValueError, OSError):
        return None
    names = info.get("class_names") if isinstance(info, dict) else None
    return tuple(str(n) for n in names) if isinstance(names, list) and names else None


def load_pretrained(
    model: keras.Model,
    *,
    arch: str,
    weights: str | os.PathLike,
    include_top: bool,
    classes: int,
    build_reference: Callable[[int | None], keras.Model],
    custom_input: bool = False,
    call: Any = None,
) -> tuple[str, ...] | None:
    """Load ``weights`` (already checked by ``validate_weights``) into ``model`` and
    return their class names (None when unknown).

    The configuration saved with the weights (``config.json``) must define the same
    function as ``model`` (``keras_gated.loading.check_configuration``; ``call``, the
    constructor call being built, is used to say which call matches the weights). Weights
    saved without one load by shape, with a warning.

    ``build_reference(n)`` builds the same architecture with a head of ``n`` classes
    (``None``: no head); it is used when the head is adapted (see
    ``keras_gated.loading.load_weights_file``).
    """
    from keras_gated.loading import check_configuration, load_weights_file, the_weights

    weights = os.fspath(weights)
    path, origin = resolve_weights_file(arch, weights)
    config_file = companion_file(arch, weights, path, CONFIG_FILE)
    if config_file is None:
        warnings.warn(
            f"{the_weights(origin, capital=True)} were saved without a configuration "
            f"(no {CONFIG_FILE} "
            "beside them), so only their shapes can be checked: make sure the model's "
            "arguments (gate, variant, shortcut, ...) are those they were trained with.",
            UserWarning,
            stacklevel=4,
        )
    else:
        check_configuration(
            model, read_saved_config(config_file), origin=origin, arch=arch, call=call
        )
    load_weights_file(
        model,
        path,
        origin=origin,
        include_top=include_top,
        classes=classes,
        build_reference=build_reference,
        custom_input=custom_input,
    )
    return weights_class_names(arch, weights, path)
