"""The config of one pretrained weight: what loading needs, as data.

A weight id ``name.tag`` (``"gresnet20.cifar10"``) is the registry name of an
architecture plus the tag of the data its weights were trained on; it also names the
``zoo/`` folder and the Hub repo. As in timm, one config type covers released weights
and planned ones: a config without ``sha256`` is a config whose weights are not
released yet, and its ``plan`` says how to train them.

Provenance (the full recipe, the command, the hardware) lives in the zoo folder's model
card and ``metrics.json``; a config keeps what loading and listing need. Nothing here
imports Keras.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

WEIGHTS_FILE = "model.weights.h5"
METRICS_FILE = "metrics.json"  # a zoo folder's record of its run (``model_args`` included)
HUB_ORG = "keras-gated"

_WEIGHT_ID = re.compile(r"^[a-z0-9_]+\.[a-z0-9_]+$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_SHARD = re.compile(r"^model_[0-9]{5}\.weights\.h5$")

# The metrics.json entries a config keeps, for listings (the README's zoo table).
LISTING_METRICS = (
    "test_accuracy", "split", "num_examples", "epochs", "recipe", "backend", "hardware",
    "wall_time_s",
)


def split_weight_id(name: str) -> tuple[str, str | None]:
    """``"gresnet20.cifar10"`` -> ``("gresnet20", "cifar10")``; a bare name -> tag None."""
    arch, _, tag = name.partition(".")
    return arch, (tag or None)


def is_weight_id(name: str) -> bool:
    """True for ``name.tag`` in lower case (letters, digits, underscores)."""
    return isinstance(name, str) and bool(_WEIGHT_ID.match(name))


def _is_default(f: dataclasses.Field, value: Any) -> bool:
    """True when ``value`` is the default of the dataclass field ``f``."""
    if f.default_factory is not dataclasses.MISSING:
        return value == f.default_factory()
    return f.default is not dataclasses.MISSING and value == f.default


class PlannedWeightsError(ValueError):
    """The weights are planned, not released; the message says how to train them.

    ``summary`` is the same in one short paragraph (what the command line prints): that
    they are planned, where the training command is, and the released weights of the
    same family.
    """

    def __init__(self, message: str, summary: str | None = None) -> None:
        super().__init__(message)
        self.summary = summary or message


@dataclass(frozen=True)
class TrainingPlan:
    """How the weights of a planned config are to be trained.

    Attributes:
        recipe: a recipe of ``keras_gated.training.recipes``.
        epochs: the epoch budget of the paper.
        expect: the paper's number to expect, and where it is from.
        forward_macs: multiply-accumulates of one forward pass, counted with
            ``keras_gated.flops.count_macs`` (tests check them).
        train_images: images per epoch.
        strategy: the distribution strategy of the command (``dataparallel``: every GPU
            of the host, on the JAX backend).
        model_kwargs: constructor arguments the recipe builds the model with.
        missing: what must exist before the command can run ("" when nothing).
    """

    recipe: str
    epochs: int
    expect: str
    forward_macs: int
    train_images: int = 50_000
    strategy: str = "dataparallel"
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    missing: str = ""


@dataclass(frozen=True)
class PretrainedCfg:
    """Everything loading needs to know about one weight, keyed by weight id.

    Attributes:
        weight_id: ``"gresnet20.cifar10"``: registry name + data tag.
        classes: size of the ``predictions`` head.
        class_names: one name per class (may be empty when there are too many to list).
        input_shape: the input shape (without batch) the weights were trained with.
        dataset: the data, in words, e.g. ``"CIFAR-10, JPEG q75 copy of the standard
            splits"``.
        mean, std: per-channel numbers of the in-model ``(x - mean) / std`` on 0-255
            pixels; ``scale``: the in-model ``x * scale`` instead (None when unused).
        sha256: hex digest of ``file_name``, the pin every copy is checked against;
            None while the weights are planned.
        hf_hub_id: the Hub repo; defaults to ``keras-gated/<weight id>``.
        revision: the Hub commit to download; None (``main``) until published.
        file_name: the weight file in the repo and the zoo folder: ``model.weights.h5``,
            or ``model.weights.json``, the index of a sharded release.
        shards: the shard files of a sharded release and their sha256 (``{
            "model_00000.weights.h5": "..."}``); empty for a one-file release.
        license: the Hub license id.
        caveat: empty for sound weights; otherwise a warning given whenever they load.
        metrics: the measured numbers shown in listings (accuracy as a fraction).
        model_kwargs: constructor arguments the weights were trained with beyond the
            registered model's (``{"activation": "tanh"}``): a constructor that loads
            them by tag takes these as the defaults of the arguments it is not given.
        plan: how to train planned weights (None for released ones).
    """

    weight_id: str
    classes: int
    input_shape: tuple[int, ...]
    dataset: str = ""
    class_names: tuple[str, ...] = ()
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    scale: float | None = None
    sha256: str | None = None
    hf_hub_id: str = ""
    revision: str | None = None
    file_name: str = WEIGHTS_FILE
    shards: dict[str, str] = field(default_factory=dict)
    license: str = "apache-2.0"
    caveat: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    plan: TrainingPlan | None = None

    def __post_init__(self) -> None:
        if not is_weight_id(self.weight_id):
            raise ValueError(
                f"A weight id is `name.tag` in lower case (e.g. 'gresnet20.cifar10'), "
                f"got {self.weight_id!r}."
            )
        if self.sha256 is None and self.plan is None:
            raise ValueError(
                f"{self.weight_id}: a config has either a `sha256` (released weights) or a "
                "`plan` (planned ones)."
            )
        if self.sha256 is not None and not _SHA256.match(str(self.sha256)):
            raise ValueError(
                f"{self.weight_id}: `sha256` must be the 64-character lower-case hex digest "
                f"of {self.file_name}, got {self.sha256!r}."
            )
        self._check_shards()
        if self.class_names and len(self.class_names) != self.classes:
            raise ValueError(
                f"{self.weight_id}: {len(self.class_names)} class names for {self.classes} "
                "classes."
            )
        if (self.mean is None) != (self.std is None):
            raise ValueError(f"{self.weight_id}: give both `mean` and `std`, or neither.")
        object.__setattr__(self, "class_names", tuple(self.class_names))
        object.__setattr__(self, "input_shape", tuple(self.input_shape))
        for name in ("mean", "std"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, tuple(float(v) for v in getattr(self, name)))
        if isinstance(self.plan, dict):
            object.__setattr__(self, "plan", TrainingPlan(**self.plan))
        if not self.hf_hub_id:
            object.__setattr__(self, "hf_hub_id", f"{HUB_ORG}/{self.weight_id}")

    def _check_shards(self) -> None:
        """A sharded release names its index as ``file_name`` and pins every shard."""
        sharded = self.file_name.endswith(".weights.json")
        if self.shards and not sharded:
            raise ValueError(
                f"{self.weight_id}: `shards` belong to a sharded release, whose `file_name` "
                f"is its index ('model.weights.json'), not {self.file_name!r}."
            )
        if sharded and self.released and not self.shards:
            raise ValueError(
                f"{self.weight_id}: the sharded release {self.file_name} needs `shards`, "
                "the sha256 of each of its shard files."
            )
        for name, digest in self.shards.items():
            if not _SHARD.match(str(name)) or not _SHA256.match(str(digest)):
                raise ValueError(
                    f"{self.weight_id}: `shards` maps shard file names (model_00000.weights.h5"
                    f") to 64-character hex sha256 digests; got {name!r}: {digest!r}."
                )

    @property
    def files(self) -> dict[str, str]:
        """Every file of the weights and its pinned sha256: the weight file, or a sharded
        release's index and shards (empty while planned)."""
        if not self.released:
            return {}
        return {self.file_name: str(self.sha256), **self.shards}

    @property
    def arch(self) -> str:
        """The registry name: ``"gresnet20"``."""
        return split_weight_id(self.weight_id)[0]

    @property
    def tag(self) -> str:
        """The data tag: ``"cifar10"``."""
        return split_weight_id(self.weight_id)[1] or ""

    @property
    def released(self) -> bool:
        """True when the weights exist (pinned by sha256); False while planned."""
        return self.sha256 is not None

    def preprocessing(self) -> str:
        """The in-model preprocessing of 0-255 pixels, in words."""
        if self.mean is not None:
            return f"in-model (x - mean) / std on 0-255 pixels, mean={self.mean}, std={self.std}"
        if self.scale is not None:
            return f"in-model x * {self.scale} on 0-255 pixels"
        return "none in the model"

    def to_dict(self) -> dict[str, Any]:
        """The config as JSON-ready data: defaults left out, the weight id not repeated
        (it is the key of the data file's entry)."""
        data: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "weight_id":
                continue
            if f.name == "hf_hub_id" and value == f"{HUB_ORG}/{self.weight_id}":
                continue
            if _is_default(f, value):
                continue
            if isinstance(value, TrainingPlan):
                value = {g.name: getattr(value, g.name) for g in dataclasses.fields(value)
                         if not _is_default(g, getattr(value, g.name))}
            elif isinstance(value, tuple):
                value = list(value)
            data[f.name] = value
        return data

    @classmethod
    def from_dict(cls, weight_id: str, data: dict[str, Any]) -> PretrainedCfg:
        """The inverse of ``to_dict``; an unknown key is a ValueError naming it."""
        known = {f.name for f in dataclasses.fields(cls)} - {"weight_id"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"{weight_id}: unknown config keys {unknown}; known keys: {sorted(known)}."
            )
        return cls(weight_id=weight_id, **data)
