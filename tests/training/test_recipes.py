"""Recipes as data: paper settings, schedule scaling, the optimiser they build."""

import keras
import numpy as np
import pytest

from keras_gated.training.optimizers import learning_rate_schedule, make_optimizer
import keras_gated as kg
from keras_gated.training.recipes import RECIPES, Recipe, get_recipe
from training.train import recipe_settings


def test_every_recipe_names_its_table():
    assert {"rg_mnist_fc", "preact_cifar", "wrn_cifar", "highway_cifar"} <= set(RECIPES)
    # Engineering recipes (fine-tuning, a fixed budget) say they have no paper table.
    assert all(("Table" in r.table or "Fig." in r.table) for r in RECIPES.values()
               if "no paper table" not in r.table)
    assert "no paper table" in get_recipe("finetune").table


def test_paper_settings():
    mnist = get_recipe("rg_mnist_fc")
    assert (mnist.optimizer, mnist.learning_rate, mnist.epochs, mnist.batch_size) == ("nadam", 0.002, 100, 128)
    preact = get_recipe("preact_cifar")
    assert preact.nesterov and preact.momentum == 0.9 and preact.lr_boundaries == (0.5, 0.75)
    assert preact.lr_decay == 0.1 and preact.weight_decay == 1e-4
    wrn = get_recipe("wrn_cifar")
    assert wrn.lr_boundaries == (0.3, 0.6, 0.8) and wrn.lr_decay == 0.2
    assert (wrn.weight_decay, wrn.dropout, wrn.epochs, wrn.pad_mode) == (5e-4, 0.3, 200, "reflect")
    assert kg.get_model_entry("gresnet20").default_recipe == "preact_cifar"
    assert kg.get_model_entry("gwrn_16_2").default_recipe == "wrn_cifar"


@pytest.mark.parametrize("name", kg.list_models())
def test_every_model_has_an_existing_default_recipe(name):
    assert get_recipe(kg.get_model_entry(name).default_recipe).name in RECIPES


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
    # SGD's momentum and Nadam's β1 are separate fields: each optimiser reads its own.
    both = dict(batch_size=8, epochs=1, learning_rate=0.1, momentum=0.5, beta_1=0.7, table="")
    assert make_optimizer(Recipe(name="s", optimizer="sgd", **both), 1).momentum == 0.5
    assert make_optimizer(Recipe(name="n", optimizer="nadam", **both), 1).beta_1 == 0.7
    assert "Nadam(beta_1=0.7)" in Recipe(name="n", optimizer="nadam", **both).describe()


@pytest.mark.parametrize("optimizer", ["sgd", "nadam"])
def test_gradient_clipping_bounds_the_global_norm(optimizer):
    """With gradient_clip_norm c, the gradient of all variables together is rescaled to
    norm c (torch.nn.utils.clip_grad_norm_): a plain SGD step then moves the variables by
    lr·c along the gradient's direction."""
    recipe = Recipe(name="c", table="", epochs=1, batch_size=8, optimizer=optimizer,
                    learning_rate=1.0, momentum=0.0, nesterov=False, gradient_clip_norm=0.5)
    opt = make_optimizer(recipe, 1)
    assert opt.global_clipnorm == 0.5
    if optimizer == "nadam":
        return
    a, b = keras.Variable(np.zeros(3, "float32")), keras.Variable(np.zeros(1, "float32"))
    grads = [np.array([30.0, 0.0, 40.0], "float32"), np.array([0.0], "float32")]  # norm 50
    opt.apply_gradients(zip([keras.ops.convert_to_tensor(g) for g in grads], [a, b]))
    np.testing.assert_allclose(keras.ops.convert_to_numpy(a), [-0.3, 0.0, -0.4], rtol=1e-5)
    unclipped = make_optimizer(get_recipe("wrn_cifar"), 1)
    assert unclipped.global_clipnorm is None and get_recipe("wrn_cifar").gradient_clip_norm is None


def test_recorded_recipe_settings_keep_their_keys():
    """Runs record the recipe under the keys they always had (a run resumes only when its
    settings equal the recorded ones): the optimiser's coefficient is "momentum"."""
    for name in ("rg_mnist_fc", "preact_cifar"):
        settings = recipe_settings(get_recipe(name))
        assert "beta_1" not in settings and settings["momentum"] == 0.9
    nadam = Recipe(name="n", table="", epochs=1, batch_size=8, optimizer="nadam",
                   learning_rate=0.1, beta_1=0.7)
    assert recipe_settings(nadam)["momentum"] == 0.7
    # A setting added later is recorded only when used.
    assert "gradient_clip_norm" not in recipe_settings(get_recipe("wrn_cifar"))
    assert "label_smoothing" not in recipe_settings(get_recipe("wrn_cifar_budget"))
    assert recipe_settings(get_recipe("wrn_cifar_budget_ls"))["label_smoothing"] == 0.1


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
