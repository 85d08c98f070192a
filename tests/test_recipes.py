"""Recipes as data: paper settings, schedule scaling, the optimiser they build."""

import keras
import numpy as np
import pytest

from training.optim import learning_rate_schedule, make_optimizer
from keras_gated.recipes import RECIPES, default_recipe, get_recipe


def test_every_recipe_names_its_table():
    assert {"rg_mnist_fc", "preact_cifar", "wrn_cifar", "highway_cifar"} <= set(RECIPES)
    assert all(("Table" in r.table or "Fig." in r.table) for r in RECIPES.values() if r.name != "finetune")


def test_paper_settings():
    mnist = get_recipe("rg_mnist_fc")
    assert (mnist.optimizer, mnist.learning_rate, mnist.epochs, mnist.batch_size) == ("nadam", 0.002, 100, 128)
    preact = get_recipe("preact_cifar")
    assert preact.nesterov and preact.momentum == 0.9 and preact.lr_boundaries == (0.5, 0.75)
    assert preact.lr_decay == 0.1 and preact.weight_decay == 1e-4
    wrn = get_recipe("wrn_cifar")
    assert wrn.lr_boundaries == (0.3, 0.6, 0.8) and wrn.lr_decay == 0.2
    assert (wrn.weight_decay, wrn.dropout, wrn.epochs, wrn.pad_mode) == (5e-4, 0.3, 200, "reflect")
    assert default_recipe("gresnet").name == "preact_cifar"
    assert default_recipe("gwide_resnet").name == "wrn_cifar"


def test_epochs_scale_the_schedule():
    recipe = get_recipe("preact_cifar").with_epochs(40)
    assert recipe.epochs == 40 and recipe.lr_boundary_epochs() == [20.0, 30.0]
    schedule = learning_rate_schedule(recipe, steps_per_epoch=10)
    # 10 steps per epoch, 0-based steps: step 200 is the first batch of epoch 21.
    steps = (0, 199, 200, 299, 300, 399)
    lr = [float(keras.ops.convert_to_numpy(schedule(step))) for step in steps]
    np.testing.assert_allclose(lr, [0.1, 0.1, 0.01, 0.01, 0.001, 0.001], rtol=1e-6)
    with pytest.raises(ValueError, match="positive"):
        recipe.with_epochs(0)


def test_optimizers():
    sgd = make_optimizer(get_recipe("wrn_cifar"), 391)
    assert isinstance(sgd, keras.optimizers.SGD) and sgd.nesterov and sgd.momentum == 0.9
    nadam = make_optimizer(get_recipe("rg_mnist_fc"), 469)
    assert isinstance(nadam, keras.optimizers.Nadam) and nadam.beta_1 == 0.9


def test_unknown_recipe():
    with pytest.raises(ValueError, match="preact_cifar"):
        get_recipe("adam")


def test_highway_recipe_decays_the_learning_rate_every_epoch():
    recipe = get_recipe("highway_mnist_fc")
    assert (recipe.optimizer, recipe.nesterov, recipe.lr_epoch_decay) == ("sgd", False, 0.97)
    schedule = learning_rate_schedule(recipe, steps_per_epoch=10)
    rates = [float(keras.ops.convert_to_numpy(schedule(step))) for step in (0, 9, 10, 25)]
    np.testing.assert_allclose(rates, [0.01, 0.01, 0.0097, 0.01 * 0.97**2], rtol=1e-6)
    assert "x0.97 per epoch" in recipe.describe()
