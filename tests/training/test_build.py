"""keras_gated.training.build: the settings a run is built from, read back from fingerprint.json, and
the recipe as the run uses it."""

from __future__ import annotations

import json
from pathlib import Path

from keras_gated.training.build import RunSettings, build_run, run_recipe
from keras_gated.training.losses import SmoothedSparseCrossentropy
from tests.support.helpers import make_image_folder

ROOT = Path(__file__).resolve().parents[2]
TABLE7 = ROOT / "experiments/residual_gates/results/table7.gwrn_16_2_nobn.clip1.seed1.e5"


def test_settings_are_read_back_from_a_recorded_fingerprint():
    fingerprint = json.loads((TABLE7 / "fingerprint.json").read_text())
    settings = RunSettings.from_fingerprint(fingerprint)
    assert settings == RunSettings(model="gwrn_16_2", dataset="cifar10", recipe="wrn_cifar",
                                   epochs=5, batch_size=128, clip_norm=1.0, seed=1,
                                   model_args={"batch_norm": False})


def test_run_recipe_applies_the_run_settings_to_the_named_or_default_recipe():
    recipe = run_recipe(RunSettings(model="gwrn_16_2", dataset="cifar10", epochs=5, lr=0.01,
                                    clip_norm=1.0, batch_size=64))
    assert (recipe.name, recipe.epochs, recipe.batch_size) == ("wrn_cifar", 5, 64)
    assert (recipe.learning_rate, recipe.gradient_clip_norm) == (0.01, 1.0)
    plain = run_recipe(RunSettings(model="gresnetfc10", dataset="fashion_mnist", recipe="rg_mnist_fc"))
    assert plain.name == "rg_mnist_fc" and plain.gradient_clip_norm is None


def test_a_run_compiles_its_recipes_loss(tmp_path):
    data = make_image_folder(tmp_path / "tiny", per_class=(8, 2))
    smoothed = build_run(RunSettings(model="gresnetfc2", dataset=str(data),
                                     recipe="wrn_cifar_budget_ls", epochs=1))
    assert isinstance(smoothed.model.loss, SmoothedSparseCrossentropy)
    assert smoothed.model.loss.label_smoothing == smoothed.recipe.label_smoothing == 0.1
    plain = build_run(RunSettings(model="gresnetfc2", dataset=str(data), recipe="wrn_cifar_budget",
                                  epochs=1))
    assert plain.model.loss == "sparse_categorical_crossentropy"
