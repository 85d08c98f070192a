"""Training recipes as data, one per paper setting.

Every recipe names the table it reproduces. Schedules are written as fractions of the
run, so ``--epochs N`` compresses or stretches a recipe without editing it (the CIFAR
recipe compressed to 40 epochs drops the learning rate at epochs 20 and 30).

Weight decay is written as in the reference code: Torch/Caffe ``weight_decay=λ`` adds
λ·w to the gradient, which is Keras ``L2(λ/2)`` on each decayed variable (Keras's own
``SGD(weight_decay=...)`` is decoupled and not equivalent). It covers the parameters the
reference decays (``decay="all"``: every weight and bias, BN included; ``"weights"``:
all but biases, Caffe's ``decay_mult: 0`` on biases) and never a Residual Gate's k unless
``decay_gates=True`` (the "k decay" column of Residual Gates Table 3).

Padding before the random crop is ``"constant"`` (zero pixels), ``"reflect"`` (the WRN
code) or ``"mean"``: the per-channel mean the model normalises with, i.e. the Torch
references' zero padding of already-normalised images.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Recipe:
    """An optimiser, schedule, regularisation and augmentation setting."""

    name: str
    table: str  # the paper table this recipe reproduces
    epochs: int
    batch_size: int
    optimizer: str  # "sgd" (momentum, optionally Nesterov) or "nadam"
    learning_rate: float
    momentum: float = 0.9  # SGD's momentum (Nadam recipes do not use it)
    nesterov: bool = True  # SGD with Nesterov momentum (Nadam's is always Nesterov)
    beta_1: float = 0.9  # Nadam's β1, its first-moment decay (SGD recipes do not use it)
    lr_boundaries: tuple[float, ...] = ()  # fractions of the run where the LR changes
    lr_decay: float = 1.0  # the LR is multiplied by this at every boundary
    lr_epoch_decay: float = 1.0  # and by this after every epoch (exponential decay)
    lr_schedule: str = "step"  # "step" (boundaries / epoch decay) or "warmup_linear"
    warmup: float = 0.0  # "warmup_linear": fraction of the steps spent rising from 0
    weight_decay: float = 0.0  # Torch λ; applied as L2(λ / 2)
    decay: str = "all"  # "all" parameters or "weights" (all but biases)
    decay_gates: bool = False  # also decay Residual Gates' k
    pad: int = 0  # pixels of padding before the random crop (0: no crop)
    pad_mode: str = "constant"  # "constant" (zeros), "reflect", or "mean" (see below)
    flip: bool = False  # random horizontal flips
    dropout: float | None = None  # passed to models that take `dropout`
    gradient_clip_norm: float | None = None  # rescale the gradient to this global L2 norm at most
    label_smoothing: float = 0.0  # ε of the cross-entropy's targets (keras_gated.training.losses)
    notes: str = ""

    def __post_init__(self):
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError(f"label_smoothing={self.label_smoothing} must be in [0, 1): 0.1 is usual.")

    def with_epochs(self, epochs: int | None) -> "Recipe":
        """The same recipe over ``epochs`` (the schedule's fractions scale with it)."""
        if epochs is None:
            return self
        if epochs < 1:
            raise ValueError(f"`epochs` must be a positive integer, got {epochs}.")
        return replace(self, epochs=int(epochs))

    def lr_boundary_epochs(self) -> list[float]:
        return [round(f * self.epochs, 4) for f in self.lr_boundaries]

    def describe(self) -> str:
        """One line for logs and model cards."""
        opt = (
            f"SGD(momentum={self.momentum}{', nesterov' if self.nesterov else ''})"
            if self.optimizer == "sgd"
            else f"Nadam(beta_1={self.beta_1})"
        )
        if self.lr_schedule == "warmup_linear":
            schedule = (f"lr 0 -> {self.learning_rate} over the first {self.warmup:.0%} of the "
                        "steps, then linearly to 0 at the last step")
        elif self.lr_boundaries:
            schedule = f"lr {self.learning_rate} x{self.lr_decay} at epochs {self.lr_boundary_epochs()}"
        elif self.lr_epoch_decay != 1.0:
            schedule = f"lr {self.learning_rate} x{self.lr_epoch_decay} per epoch"
        else:
            schedule = f"lr {self.learning_rate} constant"
        decay = (
            f"weight decay {self.weight_decay} (L2 {self.weight_decay / 2} on {self.decay}"
            f"{', k included' if self.decay_gates else ', k excluded'})"
            if self.weight_decay
            else "no weight decay"
        )
        aug = (
            f"pad {self.pad} ({self.pad_mode}) + random crop" if self.pad else "no crop"
        ) + (", horizontal flip" if self.flip else "")
        extra = f", dropout {self.dropout}" if self.dropout else ""
        if self.label_smoothing:
            extra += f", label smoothing {self.label_smoothing}"
        if self.gradient_clip_norm is not None:
            extra += f", gradient clipped to global norm {self.gradient_clip_norm}"
        return (
            f"{self.name} [{self.table}]: {opt}, {schedule}, {decay}, {self.epochs} epochs, "
            f"batch {self.batch_size}, {aug}{extra}"
        )


RECIPES: dict[str, Recipe] = {}


def _add(recipe: Recipe) -> Recipe:
    RECIPES[recipe.name] = recipe
    return recipe


RG_MNIST_FC = _add(Recipe(
    name="rg_mnist_fc",
    table="Residual Gates (Savarese & Figueiredo 2017) §3.1, Table 1: FC nets on MNIST",
    epochs=100,
    batch_size=128,
    optimizer="nadam",
    learning_rate=0.002,
    beta_1=0.9,
    notes="Adam with Nesterov momentum (Nadam), lr 0.002 and momentum (β1) 0.9 fixed, no decay; "
    "pixels / 255.",
))

HIGHWAY_MNIST_FC = _add(Recipe(
    name="highway_mnist_fc",
    table="Highway Networks (Srivastava et al. 2015) §4.1, Fig. 1: FC plain and highway nets on MNIST",
    epochs=100,
    batch_size=128,
    optimizer="sgd",
    learning_rate=0.01,
    momentum=0.9,
    nesterov=False,
    lr_epoch_decay=0.97,
    notes="SGD with momentum and an exponentially decaying learning rate, He-initialised "
    "weights, transform-gate bias b_T = -2 (the paper's 50-layer MNIST net). The paper "
    "picked lr, momentum, decay rate and b_T per depth by a 40-run random search and does "
    "not list the values: lr 0.01, momentum 0.9 and decay 0.97 per epoch are this "
    "project's starting point; search lr on a held-out split before a release.",
))

PREACT_CIFAR = _add(Recipe(
    name="preact_cifar",
    table="Residual Gates §3.2, Table 3 (ResNets): pre-act ResNets, He et al. 2016",
    epochs=164,
    batch_size=128,
    optimizer="sgd",
    learning_rate=0.1,
    momentum=0.9,
    nesterov=True,
    lr_boundaries=(0.5, 0.75),
    lr_decay=0.1,
    weight_decay=1e-4,
    decay="all",
    pad=4,
    pad_mode="mean",
    flip=True,
    notes="Padding with the normalisation mean = fb.resnet.torch's zero padding of "
    "normalised images. BN momentum 0.9 (the models' default). 164 epochs as fb.resnet.torch; the "
    "paper divides the LR by 10 at 50 % and 75 % of training.",
))

PREACT_CIFAR_KDECAY = _add(replace(
    PREACT_CIFAR, name="preact_cifar_kdecay", decay_gates=True,
    table="Residual Gates Table 3, 'k decay' column (G-ResNet)",
))

PREACT_CIFAR_BUDGET = _add(replace(
    PREACT_CIFAR,
    name="preact_cifar_budget",
    table="Residual Gates §3.2 (ResNets) on a fixed budget of epochs (no paper table)",
    lr_boundaries=(),
    lr_decay=1.0,
    lr_schedule="warmup_linear",
    warmup=0.05,
    notes="The paper's optimiser, batch, weight decay and augmentation; the learning rate "
    "rises from 0 to 0.1 over the first 5 % of the steps and falls linearly to 0 at the last "
    "one, so a run of any `--epochs` ends annealed. An engineering choice for a budget, not a "
    "paper setting.",
))

WRN_CIFAR = _add(Recipe(
    name="wrn_cifar",
    table="Residual Gates §3.2, Tables 3-6 (Wide ResNets), Zagoruyko & Komodakis 2016",
    epochs=200,
    batch_size=128,
    optimizer="sgd",
    learning_rate=0.1,
    momentum=0.9,
    nesterov=True,
    lr_boundaries=(0.3, 0.6, 0.8),
    lr_decay=0.2,
    weight_decay=5e-4,
    decay="all",
    pad=4,
    pad_mode="reflect",
    flip=True,
    dropout=0.3,
    notes="Reflection padding as in the WRN code; dropout 0.3 between the convolutions.",
))

WRN_CIFAR_BUDGET = _add(replace(
    WRN_CIFAR,
    name="wrn_cifar_budget",
    table="Residual Gates §3.2 (Wide ResNets) on a fixed budget of steps (no paper table)",
    batch_size=512,
    learning_rate=0.4,
    lr_boundaries=(),
    lr_decay=1.0,
    lr_schedule="warmup_linear",
    warmup=0.05,
    notes="The paper's optimiser, weight decay, augmentation and dropout; batch 512 with the "
    "learning rate scaled linearly from 0.1 at batch 128 (Goyal et al. 2017), rising from 0 over "
    "the first 5 % of the steps and falling linearly to 0 at the last one, so that a run sized "
    "to the time it has (`--epochs`, or the lease's deadline) ends annealed. An engineering "
    "choice for a budget, not a paper setting.",
))

WRN_CIFAR_BUDGET_LS = _add(replace(
    WRN_CIFAR_BUDGET,
    name="wrn_cifar_budget_ls",
    table="Residual Gates §3.2 (Wide ResNets) on a fixed budget of steps, label smoothing "
    "(no paper table)",
    label_smoothing=0.1,
    notes="wrn_cifar_budget with the cross-entropy's targets smoothed by ε = 0.1 (Szegedy et "
    "al. 2016): a candidate against the overfitting of a net that ends its budget at 100 % "
    "training accuracy. An engineering choice for a budget, not a paper setting.",
))

WRN_CIFAR_KDECAY = _add(replace(
    WRN_CIFAR, name="wrn_cifar_kdecay", decay_gates=True,
    table="Residual Gates Table 3, 'k decay' column (G-WRN (4,10) + dropout)",
))

HIGHWAY_CIFAR = _add(Recipe(
    name="highway_cifar",
    table="Highway Networks (Srivastava et al. 2015) Table 1: 19-layer Highway net, CIFAR-10",
    epochs=400,
    batch_size=100,
    optimizer="sgd",
    learning_rate=0.025,
    momentum=0.9,
    nesterov=True,
    lr_boundaries=(0.5, 0.75, 0.875),
    lr_decay=0.1,
    weight_decay=1e-3,
    decay="weights",
    pad=8,
    pad_mode="mean",
    flip=True,
    notes="Caffe solver: 200k iterations at batch 100 (400 epochs), x0.1 at 100k/150k/175k; "
    "biases have decay_mult 0. Dropout is part of the architecture.",
))

HIGHWAY_CIFAR_BUDGET = _add(replace(
    HIGHWAY_CIFAR,
    name="highway_cifar_budget",
    table="Highway Networks Table 1 (19-layer Highway net, CIFAR-10) on a fixed budget of steps "
    "(no paper table)",
    batch_size=512,
    learning_rate=0.128,
    lr_boundaries=(),
    lr_decay=1.0,
    lr_schedule="warmup_linear",
    warmup=0.05,
    notes="The paper's optimiser, weight decay (weights only) and augmentation; batch 512 with "
    "the learning rate scaled linearly from 0.025 at batch 100 (Goyal et al. 2017), rising from "
    "0 over the first 5 % of the steps and falling linearly to 0 at the last one, so that a run "
    "sized to the time it has ends annealed. An engineering choice for a budget, not a paper "
    "setting.",
))

IMAGENET_RESNET = _add(Recipe(
    name="imagenet_resnet",
    table="Greff et al. 2017 Table 1b: 50-layer Highway vs ResNet on ImageNet (fb.resnet.torch)",
    epochs=90,
    batch_size=256,
    optimizer="sgd",
    learning_rate=0.1,
    momentum=0.9,
    nesterov=True,
    lr_boundaries=(1 / 3, 2 / 3),
    lr_decay=0.1,
    weight_decay=1e-4,
    decay="all",
    flip=True,
    notes="fb.resnet.torch ImageNet defaults (x0.1 every 30 epochs). Its scale augmentation "
    "(random-resized crops, colour jitter) is not implemented in keras_gated/training/pipeline.py: planned.",
))

FINETUNE = _add(Recipe(
    name="finetune",
    table="fine-tuning (no paper table): a new head on a pretrained backbone",
    epochs=10,
    batch_size=128,
    optimizer="sgd",
    learning_rate=0.01,
    momentum=0.9,
    nesterov=True,
    lr_boundaries=(0.75,),
    lr_decay=0.1,
    notes="A tenth of the from-scratch CIFAR learning rate, no weight decay, no augmentation; "
    "override with --recipe.",
))

def get_recipe(name: str) -> Recipe:
    """The recipe called ``name``. A model's default is its registry entry's
    ``default_recipe`` (``keras_gated.get_model_entry(name).default_recipe``)."""
    if name not in RECIPES:
        raise ValueError(f"Unknown recipe {name!r}. Recipes: {', '.join(RECIPES)}.")
    return RECIPES[name]
