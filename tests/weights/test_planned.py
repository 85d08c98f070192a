"""Planned checkpoints: a clear error with command, recipe, expected number and an
estimate from counted MACs; never a weight file."""

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.flops import count_macs
from keras_gated.weights import PlannedWeightsError, get_pretrained_cfg, list_pretrained
from keras_gated.training.recipes import get_recipe

PLANNED = list_pretrained(planned=True)


def test_planned_ids_are_registered_models_with_known_recipes():
    assert {"highwaynet.cifar10", "gresnet110.cifar10", "highwaynet50.imagenet2012"} <= set(PLANNED)
    for weight_id in PLANNED:
        planned = get_pretrained_cfg(weight_id)
        assert kg.is_model(planned.arch) and not planned.released
        get_recipe(planned.plan.recipe)
        assert weight_id not in kg.list_models(pretrained=True)


@pytest.mark.parametrize("weight_id", PLANNED)
def test_asking_for_planned_weights_gives_a_command_that_trains_them(weight_id):
    """The error carries a training command that the training CLI accepts and that trains
    this architecture on this data with the plan's recipe and budget, plus the plan's
    expected number and its compute estimate."""
    import shlex

    from keras_gated.weights.planned import compute_estimate
    from training.train import build_parser

    cfg = get_pretrained_cfg(weight_id)
    with pytest.raises(PlannedWeightsError) as error:
        kg.create_model(cfg.arch, weights=cfg.tag, **cfg.plan.model_kwargs)
    message = str(error.value)
    command = next(line for line in message.splitlines() if "python -m training.train" in line)
    argv = shlex.split(command.split("python -m training.train", 1)[1])
    args = build_parser().parse_args(argv)
    assert (args.model, args.dataset, args.recipe) == (cfg.arch, cfg.tag, cfg.plan.recipe)
    assert args.epochs == cfg.plan.epochs and args.strategy == cfg.plan.strategy
    assert f"recipe: {cfg.plan.recipe}, {cfg.plan.epochs} epochs" in message
    assert f"keras-gated info {weight_id}" in message
    assert cfg.plan.expect in message and compute_estimate(cfg).describe() in message
    assert cfg.plan.missing in message


@pytest.mark.parametrize("weight_id", [
    pytest.param(w, marks=pytest.mark.slow) if "1001" in w or "imagenet" in w else w for w in sorted(PLANNED)
])
def test_stored_macs_are_the_counted_ones(weight_id):
    planned = get_pretrained_cfg(weight_id)
    if planned.plan.forward_macs > 1e9 and keras.backend.backend() != "tensorflow":
        pytest.skip("large nets counted in the TF pass only (eager JAX is slow)")
    model = kg.create_model(planned.arch, **planned.plan.model_kwargs)
    assert count_macs(model) == planned.plan.forward_macs


def test_imagenet_plans_say_what_is_missing():
    with pytest.raises(PlannedWeightsError, match="no ImageNet input pipeline"):
        kg.HighwayNet50(weights="imagenet2012")


def test_highwaynet_names_the_paper_number():
    with pytest.raises(ValueError, match=r"7\.76 %.*Highway Networks Table 1") as error:
        kg.HighwayNet(weights="cifar10")
    assert "--recipe highway_cifar" in str(error.value)
    macs = count_macs(kg.HighwayNet(weights=None)) / 1e9
    assert f"{macs:.2f} GMACs" in str(error.value)


def test_wide_resnets_default_to_the_papers_headline_net():
    """``GWideResNet()`` / ``WideResNet()`` are (n, w) = (4, 10), so the product card's
    ``GWideResNet(weights="cifar10")`` names gwrn_28_10.cifar10 (released: see
    tests/weights/test_flagship.py) and ``WideResNet(weights="cifar10")`` wrn_28_10.cifar10,
    its ungated twin (released too)."""
    import inspect

    for constructor in (kg.GWideResNet, kg.WideResNet):
        parameters = inspect.signature(constructor).parameters
        assert (parameters["n"].default, parameters["widen_factor"].default) == (4, 10)
    for weight_id in ("gwrn_28_10.cifar10", "wrn_28_10.cifar10"):
        cfg = kg.get_pretrained_cfg(weight_id)
        assert cfg.released and cfg.arch == weight_id.split(".")[0]


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="36 M parameters: TF pass only")
def test_gwide_resnet_without_arguments_is_g_wrn_28_10():
    trainable = lambda model: sum(int(np.prod(w.shape)) for w in model.trainable_weights)  # noqa: E731
    gated, ungated = kg.GWideResNet(), kg.WideResNet()
    assert (gated.name, trainable(gated)) == ("gwrn_28_10", 36_479_206)
    assert (ungated.name, trainable(ungated)) == ("wrn_28_10", 36_479_194)


def test_cli_info_lists_planned_weights(capsys):
    from keras_gated.cli import main

    assert main(["info", "highwaynet"]) == 0
    out = capsys.readouterr().out
    assert "planned weights: highwaynet.cifar10" in out and "7.76 %" in out
    plan = get_pretrained_cfg("highwaynet.cifar10").plan
    assert f"  recipe: {get_recipe(plan.recipe).with_epochs(plan.epochs).describe()}" in out


def test_cli_lists_planned_checkpoints(capsys):
    from keras_gated.cli import main

    assert main(["list", "--planned", "highwaynet.*"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("highwaynet.cifar10") and "7.76 %" in lines[0]


def test_planned_error_names_the_released_weights_of_the_same_family():
    with pytest.raises(PlannedWeightsError) as error:
        kg.create_model("gresnet110", weights="cifar10")
    assert "gresnet20.cifar10" in str(error.value)


@pytest.mark.parametrize("argv", [["pull", "gresnet110.cifar10"],
                                  ["evaluate", "gresnet110", "--weights", "cifar10",
                                   "--dataset", "cifar10"]])
def test_cli_planned_error_is_one_short_paragraph_naming_the_family_releases(argv, capsys):
    from keras_gated.cli import main

    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error and error.count("\n") == 1, error
    assert "'gresnet110.cifar10' are planned, not released" in error
    assert "gresnet20.cifar10" in error and "keras-gated info gresnet110.cifar10" in error
    assert len(error) < 600, error


def test_cli_planned_error_without_released_relatives_names_those_of_its_data_set(capsys):
    from keras_gated.cli import main

    assert main(["pull", "highwaynet.cifar10"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "highway_net" in error
    assert "gwrn_28_10.cifar10" in error and "gresnet20.cifar10" in error
    assert "highwayfc50.fashion_mnist" not in error
