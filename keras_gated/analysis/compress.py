"""Gate-guided compression: a gated net made smaller at a budget, by its own gates.

A Residual Gate computes u = g(k)·f_r(x) + x with g = ReLU, so g(k) = 0 turns a block
into the identity and ``prune`` can then drop it with no change to the function.
``compress`` makes the least useful blocks reach that point:

1. *pressure*: train the net with the loss

       L = CE(y, ŷ) + λ · Σ_{b removable} g(k_b)          (g(k) = relu(k) ≥ 0: an L1 penalty)

   for ``pressure_epochs`` (``GatePressure``, a Keras regulariser on every removable k,
   so that plain ``fit`` minimises it on every backend). Each gate is pushed down at the
   same rate λ; only the gates the data defends stay open, and a ReLU gate pushed to
   k ≤ 0 stays shut (no gradient flows through relu(k) there);
2. *choose*: the removable blocks by increasing g(k), taken until the budget (a
   fraction of the source's counted MACs, or a number of blocks) is met;
3. *prune* those blocks (exactly the pressured net with their g(k) = 0);
4. *fine-tune* the smaller net for ``epochs`` with plain ``fit``, its learning rate
   (the pressure's, or ``finetune_learning_rate``) decayed to 0 along a half cosine; with
   ``distill`` = α > 0 the source teaches it (``keras_gated.training.distill``):

       L = (1 − α) · CE(y, ŷ) + α · T² · KL(softmax(z_source / T) ‖ softmax(z / T)).

Baselines, for measuring what the pressure is worth at the same budget:
``"lowest"`` (step 2 on the source's own gates, no pressure), ``"random"`` (seeded
random blocks) and ``"scratch"`` (the smaller architecture the method chooses, or the one
``remove=`` names, freshly initialised and trained for ``pressure_epochs + epochs``).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import keras
import numpy as np

from keras_gated.flops import count_macs
from keras_gated.gating import gated_blocks, residual_gate_of
from keras_gated.models.prune import prune, removable_blocks
from keras_gated.training.distill import DEFAULT_TEMPERATURE, Distillation
from keras_gated.training.phases import PhaseBackup, data_digest, train_phase, weights_digest

BASELINES = ("lowest", "random", "scratch")
METHOD = "pressure"


def not_compressible(model: keras.Model) -> str:
    """The one sentence that says why ``model`` cannot be compressed and what to do."""
    return (f"{model.name} has no Residual-Gated blocks that can be removed: compress works "
            "on gated nets (GResNet, GWideResNet, GResNetFC, GPlainNet); gate a pre-activation "
            "ResNet, Wide ResNet or residual FC net first with keras_gated.gate(model) and "
            "compress the gated twin.")


def compressible_blocks(model: keras.Model) -> list[str]:
    """The blocks of ``model`` itself whose Residual Gate can be closed and the block
    pruned to the identity, in model order (an ungated net has none)."""
    gated = gated_blocks(model)
    return [name for name in removable_blocks(model)
            if name in gated and residual_gate_of(gated[name]) is not None
            and residual_gate_of(gated[name]).gate in ("relu", "identity")]


@keras.saving.register_keras_serializable(package="keras_gated")
class GatePressure(keras.regularizers.Regularizer):
    """L1 pressure on one gate: λ·g(k), g = relu (λ·|k| for the identity gate)."""

    def __init__(self, strength: float, gate: str = "relu") -> None:
        self.strength = float(strength)
        self.gate = gate

    def __call__(self, k):
        g = keras.ops.relu(k) if self.gate == "relu" else keras.ops.abs(k)
        return self.strength * g

    def get_config(self) -> dict:
        return {"strength": self.strength, "gate": self.gate}


def gate_openings(model: keras.Model, blocks: Sequence[str]) -> dict[str, float]:
    """Block -> g(k) (the gate's value, not k)."""
    layers = gated_blocks(model)
    return {name: float(keras.ops.convert_to_numpy(residual_gate_of(layers[name]).gate_value()))
            for name in blocks}


def block_macs(model: keras.Model, blocks: Sequence[str]) -> dict[str, int]:
    """Block -> the counted MACs its removal saves (blocks are independent: the savings add)."""
    total = count_macs(model)
    return {name: total - count_macs(prune(model, [name])) for name in blocks}


def check_budget(removed: Sequence[str], saved: dict[str, int], total: int, *,
                 macs: float | None = None, blocks: int | None = None) -> list[str]:
    """``removed`` (blocks named by the caller), refused unless it meets the budget."""
    left = total - sum(saved[name] for name in removed)
    if blocks is not None and len(removed) != blocks:
        raise ValueError(f"remove= names {len(removed)} blocks but the budget is blocks={blocks}: "
                         "name as many as the budget asks.")
    if macs is not None and left > macs * total:
        raise ValueError(f"Removing {', '.join(removed)} leaves {left / total:.3f} of the MACs, "
                         f"above the budget macs={macs}: name more blocks or raise the budget.")
    return list(removed)


def choose_blocks(order: Sequence[str], saved: dict[str, int], total: int, *,
                  macs: float | None = None, blocks: int | None = None) -> list[str]:
    """The first blocks of ``order`` that meet the budget: ``blocks`` of them, or as many
    as it takes for the counted MACs to fall to ``macs`` × ``total`` or below."""
    if blocks is not None:
        if blocks > len(order):
            raise ValueError(f"blocks={blocks} asks for more than the {len(order)} removable "
                             "blocks of this net: ask for fewer.")
        return list(order[:blocks])
    chosen, remaining = [], total
    for name in order:
        if remaining <= macs * total:
            break
        chosen.append(name)
        remaining -= saved[name]
    if remaining > macs * total:
        raise ValueError(f"macs={macs} is out of reach: removing all {len(order)} removable "
                         f"blocks leaves {remaining / total:.3f} of the MACs; ask for "
                         f"macs >= {math.ceil(remaining / total * 1000) / 1000}.")
    return chosen


def check_hyperparameters(*, strength: float, learning_rate: float | None,
                          batch_size: int, finetune_learning_rate: float | None = None) -> None:
    """Refuse (``ValueError``, one sentence) a pressure strength that is not a finite
    number >= 0, a learning rate that is not a finite number > 0, or a batch size < 1:
    with them training diverges or does nothing, and a folder of NaN weights would be
    written."""
    if not (isinstance(strength, numbers.Real) and math.isfinite(strength) and strength >= 0):
        raise ValueError(f"strength={strength} must be a finite number >= 0 (the pressure λ, "
                         "e.g. 0.01).")
    for name, rate, example in (("learning_rate", learning_rate, "(e.g. 0.01)."),
                                ("finetune_learning_rate", finetune_learning_rate,
                                 "(e.g. 0.05), or None for the learning rate's.")):
        if rate is not None and not (isinstance(rate, numbers.Real) and math.isfinite(rate)
                                     and rate > 0):
            raise ValueError(f"{name}={rate} must be a finite number > 0 {example}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size={batch_size} must be a whole number >= 1.")


@dataclass
class CompressionResult:
    """What ``compress`` returns: ``model, record = compress(...)`` unpacks it.

    ``gated`` is the gated net (after the pressure phase) with the removed blocks'
    g(k) = 0: ``prune(gated, record["removed"])`` computes exactly what it computes, and
    ``before_finetune`` is that pruned net before fine-tuning.
    """

    model: keras.Model
    record: dict[str, Any]
    gated: keras.Model = field(repr=False)
    before_finetune: keras.Model = field(repr=False)

    def __iter__(self):
        return iter((self.model, self.record))


def _copy(model: keras.Model) -> keras.Model:
    """A separate model with the same config and weights (``model`` stays untouched)."""
    copy = model.__class__.from_config(model.get_config())
    copy.set_weights(model.get_weights())
    copy.class_names = getattr(model, "class_names", None)
    return copy


def apply_pressure(model: keras.Model, data, blocks: Sequence[str], *, strength: float,
                   epochs: int, **fit_args: Any) -> list[dict]:
    """Train ``model`` in place under ``GatePressure(strength)`` on the gates of ``blocks``
    at a constant learning rate (``train_phase``' arguments in ``fit_args``); the penalty
    is taken off afterwards (nothing of it is saved with the model)."""
    layers = gated_blocks(model)
    gates = [residual_gate_of(layers[name]) for name in blocks]
    for gate in gates:
        gate.k.regularizer = GatePressure(strength, gate.gate)
    try:
        return train_phase(model, data, epochs=epochs, schedule="constant", phase="pressure",
                            **fit_args)
    finally:
        for gate in gates:
            gate.k.regularizer = None


def _check_arguments(*, macs, blocks, baseline, epochs, pressure_epochs) -> None:
    """A ValueError naming the first argument of ``compress`` that cannot be used."""
    if (macs is None) == (blocks is None):
        raise ValueError("Give one budget: macs=<fraction of the source MACs> or blocks=<count>.")
    if macs is not None and not 0 < macs < 1:
        raise ValueError(f"macs={macs} must be a fraction between 0 and 1 (0.5: half the MACs).")
    if blocks is not None and blocks < 1:
        raise ValueError(f"blocks={blocks} must be at least 1.")
    if baseline is not None and baseline not in BASELINES:
        raise ValueError(f"Unknown baseline {baseline!r}; choose one of {', '.join(BASELINES)}.")
    if epochs < 0 or (pressure_epochs is not None and pressure_epochs < 0):
        raise ValueError("epochs and pressure_epochs must be 0 or more.")


@dataclass(frozen=True)
class CompressSettings:
    """The arguments of one ``compress`` run, checked, with their defaults filled in
    (``resolve``): what its backup records and its record reports."""

    macs: float | None
    blocks: int | None
    epochs: int
    pressure_epochs: int
    strength: float
    baseline: str | None
    remove: list[str] | None
    batch_size: int
    learning_rate: float
    augment: bool
    seed: int
    finetune_learning_rate: float | None = None
    distill: float | None = None
    temperature: float = DEFAULT_TEMPERATURE

    @classmethod
    def resolve(cls, *, macs: float | None, blocks: int | None, epochs: int,
                pressure_epochs: int | None, strength: float, baseline: str | None,
                remove: Sequence[str] | None, batch_size: int, learning_rate: float | None,
                augment: bool, seed: int, finetune_learning_rate: float | None = None,
                distill: float | None = None,
                temperature: float | None = None) -> CompressSettings:
        """``compress``'s arguments checked (``ValueError``, one sentence) and completed:
        ``pressure_epochs`` defaults to ``epochs``, the learning rate to 0.01 (0.1 for
        ``"scratch"``); the fine-tuning starts at the learning rate unless
        ``finetune_learning_rate`` is given; the temperature of a distillation is 4 unless
        given (and given without ``distill``, it is refused)."""
        _check_arguments(macs=macs, blocks=blocks, baseline=baseline, epochs=epochs,
                         pressure_epochs=pressure_epochs)
        check_hyperparameters(strength=strength, learning_rate=learning_rate,
                              batch_size=batch_size, finetune_learning_rate=finetune_learning_rate)
        if distill is None and temperature is not None:
            raise ValueError(f"temperature={temperature} sets the distillation's temperature: "
                             "give distill too (e.g. distill=0.9), or leave the temperature out.")
        if temperature is None:
            temperature = DEFAULT_TEMPERATURE
        if distill is not None:
            Distillation(distill, temperature)  # checked here, before anything is trained
        if learning_rate is None:
            learning_rate = 0.1 if baseline == "scratch" else 0.01
        return cls(macs=macs, blocks=blocks, epochs=epochs,
                   pressure_epochs=epochs if pressure_epochs is None else pressure_epochs,
                   strength=strength, baseline=baseline,
                   remove=list(remove) if remove is not None else None, batch_size=batch_size,
                   learning_rate=learning_rate, augment=augment, seed=seed,
                   finetune_learning_rate=finetune_learning_rate, distill=distill,
                   temperature=temperature)

    @property
    def distillation(self) -> Distillation | None:
        """The fine-tuning's distillation from the source (None: the labels alone)."""
        return None if self.distill is None else Distillation(self.distill, self.temperature)

    @property
    def pressed(self) -> bool:
        """Whether the run has a pressure phase (the method's; for ``"scratch"`` it only
        chooses the architecture)."""
        return self.baseline in (None, "scratch") and self.remove is None

    @property
    def finetune_rate(self) -> float:
        """The rate the fine-tuning starts at (then decayed to 0 along a half cosine)."""
        return self.learning_rate if self.finetune_learning_rate is None else \
            self.finetune_learning_rate

    @property
    def finetune_epochs(self) -> int:
        """The epochs of the smaller net: ``"scratch"`` trains it for all of them."""
        return self.pressure_epochs + self.epochs if self.baseline == "scratch" else self.epochs

    def backup_settings(self, model: keras.Model, data, digests: bool) -> dict[str, Any]:
        """What a backup of the run records, and a resume must give again; with
        ``digests``, what it trains on and from too (a backup of other data is refused)."""
        settings = dict(source=model.name, **dataclasses.asdict(self))
        # Options added later are recorded only when used, as backups made before them
        # record them: those backups still resume.
        if settings["finetune_learning_rate"] is None:
            del settings["finetune_learning_rate"]
        if settings["distill"] is None:
            del settings["distill"], settings["temperature"]
        if digests:
            settings.update(source_weights=weights_digest(model), training_data=data_digest(data))
        return settings

    def chosen_by(self) -> str:
        """How the removed blocks were chosen, in the record's words."""
        if self.remove is not None:
            return "caller"
        if self.baseline == "random":
            return "random"
        return "lowest g(k) after pressure" if self.pressed else "lowest g(k) of the source"


def _blocks_to_remove(candidates: list[str], openings: dict, saved: dict, total: float, *,
                      remove, baseline, seed: int, macs, blocks) -> list[str]:
    """The blocks a run removes: the caller's (checked against the budget), seeded random
    ones (``baseline="random"``), or those of the lowest g(k) in ``openings`` (ties in
    model order), as few as meet the budget."""
    if remove is not None:
        unknown = [name for name in remove if name not in candidates]
        if unknown:
            raise ValueError(f"Block {unknown[0]!r} cannot be removed; removable blocks: "
                             f"{', '.join(candidates)}.")
        return check_budget(list(dict.fromkeys(remove)), saved, total, macs=macs, blocks=blocks)
    if baseline == "random":
        order = [candidates[i] for i in np.random.default_rng(seed).permutation(len(candidates))]
    else:
        order = sorted(candidates, key=lambda n: (openings[n], candidates.index(n)))
    return choose_blocks(order, saved, total, macs=macs, blocks=blocks)


@dataclass
class _Choice:
    """The pressure phase's outcome: the source's counted MACs, g(k) of every removable
    block before and after the pressure, the blocks chosen, and the training history."""

    total: int
    before: dict[str, float]
    after: dict[str, float]
    removed: list[str]
    history: dict[str, list[dict]]


def _press_and_choose(work: keras.Model, data, candidates: list[str], run: CompressSettings,
                      fit_args: dict[str, Any]) -> _Choice:
    """Steps 1 and 2: ``work`` trained under the pressure (in place, when the run has the
    phase), then the blocks to remove chosen."""
    total = count_macs(work)
    saved = block_macs(work, candidates)
    before = gate_openings(work, candidates)
    history: dict[str, list[dict]] = {}
    if run.pressed:  # the method's phase; for "scratch" it only chooses the architecture
        history["pressure"] = apply_pressure(
            work, data, candidates, strength=run.strength, epochs=run.pressure_epochs,
            learning_rate=0.01 if run.baseline == "scratch" else run.learning_rate, **fit_args)
    after = gate_openings(work, candidates)
    removed = _blocks_to_remove(candidates, after, saved, total, remove=run.remove,
                                baseline=run.baseline, seed=run.seed, macs=run.macs,
                                blocks=run.blocks)
    return _Choice(total, before, after, removed, history)


def _close_and_prune(work: keras.Model, removed: list[str], source: keras.Model,
                     run: CompressSettings) -> tuple[keras.Model, keras.Model]:
    """``(net to fine-tune, the pruned net before fine-tuning)``: the removed blocks'
    gates shut (g(k) = 0) in ``work`` and the blocks pruned; for ``"scratch"`` the net to
    fine-tune is the same architecture freshly initialised."""
    for name in removed:
        gate = residual_gate_of(gated_blocks(work)[name])
        gate.k.assign(gate.removal_k())
    smaller = prune(work, removed, name=source.name)
    before_finetune = _copy(smaller)
    if run.baseline == "scratch":  # the same architecture, new weights
        smaller = smaller.__class__.from_config(smaller.get_config())
        smaller.class_names = getattr(source, "class_names", None)
    return smaller, before_finetune


def _record(run: CompressSettings, source: keras.Model, smaller: keras.Model,
            candidates: list[str], choice: _Choice) -> dict[str, Any]:
    """What ``compress`` reports of a run (``CompressionResult.record``)."""
    removed = choice.removed
    return {
        "method": run.baseline or METHOD,
        "budget": {"macs": run.macs} if run.macs is not None else {"blocks": run.blocks},
        "removed": removed,
        "kept": [n for n in candidates if n not in removed],
        "gates_before": choice.before,
        "gates_after_pressure": choice.after,
        "macs_before": int(choice.total),
        "macs_after": int(count_macs(smaller)),
        "parameters_before": int(source.count_params()),
        "parameters_after": int(smaller.count_params()),
        "chosen_by": run.chosen_by(),
        "pressure": {"strength": run.strength, "epochs": run.pressure_epochs if run.pressed else 0},
        "finetune_epochs": run.finetune_epochs,
        "finetune_schedule": "cosine",
        "batch_size": run.batch_size,
        "learning_rate": run.learning_rate,
        "finetune_learning_rate": run.finetune_rate,
        **({"distillation": {"teacher": "source", "weight": run.distill,
                             "temperature": run.temperature}} if run.distill is not None else {}),
        "augment": run.augment,
        "seed": run.seed,
        "history": choice.history,
    }


def compress(
    model: keras.Model,
    data,
    *,
    macs: float | None = None,
    blocks: int | None = None,
    epochs: int = 5,
    pressure_epochs: int | None = None,
    strength: float = 1e-2,
    baseline: str | None = None,
    remove: Sequence[str] | None = None,
    batch_size: int = 128,
    learning_rate: float | None = None,
    finetune_learning_rate: float | None = None,
    distill: float | None = None,
    temperature: float | None = None,
    augment: bool = False,
    seed: int = 0,
    verbose: int = 0,
    backup_dir: str | Path | None = None,
    delete_backup: bool = True,
) -> CompressionResult:
    """A smaller net from a gated one, at a budget, by gate-guided block removal.

    Args:
        model: a gated net with removable blocks (``compressible_blocks``); left untouched.
        data: the training data: ``(x, y)`` arrays (raw 0-255 images, integer labels), or
            anything ``fit`` takes as ``x`` (a ``tf.data.Dataset``, a ``PyDataset``).
        macs: the budget as a fraction of the source's counted MACs (0.5: at most half).
        blocks: the budget as a number of blocks to remove (give ``macs`` or ``blocks``).
        epochs: fine-tuning epochs of the smaller net (0: none).
        pressure_epochs: epochs under the gate pressure (default ``epochs``).
        strength: λ of the pressure λ·Σ g(k) (per gate, added to the mean cross-entropy).
        baseline: None for the method; ``"lowest"`` (lowest g(k) of the source, no
            pressure), ``"random"`` (seeded random blocks) or ``"scratch"`` (the smaller
            architecture the method chooses, freshly initialised, trained
            ``pressure_epochs + epochs``).
        remove: the blocks to remove, chosen by the caller (e.g. those of an earlier
            run, so that ``"scratch"`` trains exactly that architecture); they must meet
            the budget, and no pressure phase runs to choose them.
        batch_size: of SGD (momentum 0.9, Nesterov), both phases.
        learning_rate: SGD's rate, held during the pressure and decayed to 0 along a half
            cosine during fine-tuning (default 0.01; 0.1 for ``"scratch"``, the rate a
            fresh pre-activation net is trained at).
        finetune_learning_rate: the rate the fine-tuning starts at instead (then decayed
            to 0 along the same half cosine), e.g. a larger one that lets the smaller net
            move further from the source's weights; the pressure keeps ``learning_rate``.
        distill: α in (0, 1]: the fine-tuning learns from the source too (knowledge
            distillation, the loss of step 4 above); None: from the labels alone.
        temperature: T of the distillation (default 4).
        augment: random flips and padded crops of ``(x, y)`` images during training.
        seed: seeds Keras (initialisation), each epoch's order, the random baseline and
            the augmentation.
        backup_dir: a new or empty folder for a backup after every epoch (weights,
            optimizer state, epochs done, per phase); calling again with the same arguments
            resumes there. A folder of other files, or a link, is refused.
        delete_backup: remove the backup's files when the run has ended (and
            ``backup_dir`` itself when nothing else is left in it).
    Returns:
        ``CompressionResult``: the smaller model and a record (blocks removed, g(k) of
        every removable block before and after the pressure, MACs before and after).
    """
    run = CompressSettings.resolve(
        macs=macs, blocks=blocks, epochs=epochs, pressure_epochs=pressure_epochs,
        strength=strength, baseline=baseline, remove=remove, batch_size=batch_size,
        learning_rate=learning_rate, augment=augment, seed=seed,
        finetune_learning_rate=finetune_learning_rate, distill=distill, temperature=temperature)
    candidates = compressible_blocks(model)
    if not candidates:
        raise ValueError(not_compressible(model))
    backup = PhaseBackup(backup_dir, run.backup_settings(model, data, backup_dir is not None))
    keras.utils.set_random_seed(seed)
    fit_args = dict(batch_size=batch_size, augment=augment, seed=seed, verbose=verbose,
                    backup=backup)
    work = _copy(model)
    choice = _press_and_choose(work, data, candidates, run, fit_args)
    smaller, before_finetune = _close_and_prune(work, choice.removed, model, run)
    distillation = run.distillation
    teacher = _copy(model) if distillation is not None else None  # frozen by the phase
    choice.history["finetune"] = train_phase(
        smaller, data, epochs=run.finetune_epochs, learning_rate=run.finetune_rate,
        schedule="cosine", phase="finetune", teacher=teacher, distillation=distillation,
        **fit_args)
    record = _record(run, model, smaller, candidates, choice)
    if delete_backup:
        backup.delete()
    return CompressionResult(smaller, record, work, before_finetune)
