"""Checkpoints that are planned but not released: the machines this project is built on
have 2 CPU cores and no GPU, which cannot train them. Asking for one raises
``PlannedWeightsError`` with the exact training command, the recipe, the paper's number
to expect and a GPU-hours figure computed from the model's counted MACs (labelled as an
estimate). No random or borrowed weight file ever stands in for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from keras_gated.weight_ids import WeightIdParts

IMAGENET_TRAIN_IMAGES = 1_281_167
CIFAR_TRAIN_IMAGES = 50_000


class PlannedWeightsError(ValueError):
    """The weights are planned, not released; the message says how to train them."""


@dataclass(frozen=True)
class PlannedWeights(WeightIdParts):
    weight_id: str
    recipe: str
    epochs: int
    expect: str  # the paper's number and where it is from
    forward_macs: int  # counted with keras_gated.flops.count_macs (tests/test_planned.py)
    train_images: int = CIFAR_TRAIN_IMAGES
    strategy: str = "mirrored"
    model_kwargs: dict = field(default_factory=dict)  # as the recipe builds it
    caveat: str = ""  # what is still missing before the command can run

    def command(self) -> str:
        return (
            f"KERAS_BACKEND=tensorflow python -m training.train --model {self.arch} "
            f"--dataset {self.tag} --recipe {self.recipe} --epochs {self.epochs} "
            f"--strategy {self.strategy} --out runs/{self.weight_id}"
        )

    def compute_estimate(self):
        from keras_gated.flops import ComputeEstimate

        return ComputeEstimate(self.forward_macs, self.train_images, self.epochs)

    def message(self) -> str:
        from keras_gated.recipes import get_recipe

        recipe = get_recipe(self.recipe).with_epochs(self.epochs)
        lines = [
            f"Weights {self.weight_id!r} are planned, not released: training them needs a "
            "GPU/TPU host, and this project's machines have 2 CPU cores and no GPU. No "
            "stand-in weights are shipped.",
            f"  train them with: {self.command()}",
            f"  recipe: {recipe.describe()}",
            f"  expect: {self.expect}",
            f"  compute: {self.compute_estimate().describe()}",
        ]
        if self.caveat:
            lines.append(f"  missing first: {self.caveat}")
        lines.append(
            f"  then: keras_gated.hub.save_zoo_folder(...) and `keras-gated publish "
            f"zoo/{self.weight_id}` (see keras_gated/pretrained_cfgs.py)."
        )
        return "\n".join(lines)


def check_not_planned(arch: str, tag: str) -> None:
    """Raise ``PlannedWeightsError`` if ``arch.tag`` is a planned checkpoint."""
    planned = PLANNED.get(f"{arch}.{tag}")
    if planned is not None:
        raise PlannedWeightsError(planned.message())


PLANNED: dict[str, PlannedWeights] = {
    p.weight_id: p
    for p in (
        PlannedWeights(
            "gwrn_28_10.cifar10", "wrn_cifar", 200,
            "3.65 % test error (96.35 % accuracy), G-WRN (4,10) + dropout, Residual Gates "
            "Table 3 (original CIFAR-10; this project's copy is JPEG q75)",
            forward_macs=5_243_328_768, model_kwargs={"dropout": 0.3},
        ),
        PlannedWeights(
            "wrn_28_10.cifar10", "wrn_cifar", 200,
            "3.89 % test error, WRN-28-10 + dropout, Zagoruyko & Komodakis 2016 Table 6",
            forward_macs=5_243_328_768, model_kwargs={"dropout": 0.3},
        ),
        PlannedWeights(
            "gresnet110.cifar10", "preact_cifar", 164,
            "about 6.4 % test error for the ungated pre-act ResNet-110 (He et al. 2016); the "
            "Residual Gates paper reports G-ResNet only as 'ResNets 5' (6.67 %, Table 3)",
            forward_macs=253_149_824,
        ),
        PlannedWeights(
            "gresnet1001.cifar10", "preact_cifar", 200,
            "4.92 % test error for the ungated pre-act ResNet-1001 at batch 128 (He et al. "
            "2016; resnet-1k-layers README)",
            forward_macs=1_487_849_984,
        ),
        PlannedWeights(
            "highwaynet.cifar10", "highway_cifar", 400,
            "7.54 % test error (92.46 % accuracy), Highway Networks Table 1 ('Highway 2', "
            "19 layers)",
            forward_macs=330_826_728,
        ),
        PlannedWeights(
            "highwaynet50.imagenet2012", "imagenet_resnet", 90,
            "7.53 % top-5 error on ILSVRC-2012 validation, Greff et al. 2017 Table 1b "
            "(Highway + BN; the paper's top-1 is not given)",
            forward_macs=4_221_732_096, train_images=IMAGENET_TRAIN_IMAGES,
            caveat="training/data.py has no ImageNet input pipeline yet (resize and "
            "random-resized crops of variable-size images, no in-memory cache): the command "
            "fails until it has one",
        ),
        PlannedWeights(
            "resnet50.imagenet2012", "imagenet_resnet", 90,
            "7.17 % top-5 error, Greff et al. 2017 Table 1b (ResNet + BN)",
            forward_macs=4_089_184_256, train_images=IMAGENET_TRAIN_IMAGES,
            caveat="training/data.py has no ImageNet input pipeline yet (resize and "
            "random-resized crops of variable-size images, no in-memory cache): the command "
            "fails until it has one",
        ),
    )
}
