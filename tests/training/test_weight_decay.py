"""Weight decay as in the reference: Torch λ => L2(λ/2) on what the reference decays,
never on k (unless the recipe's "k decay" variant says so)."""

import keras
import numpy as np

import keras_gated as kg
from keras_gated.training.optimizers import apply_weight_decay, decayed_variables
from keras_gated.training.recipes import get_recipe


def _sum_sq(variables):
    return sum(float(np.sum(keras.ops.convert_to_numpy(v) ** 2)) for v in variables)


def test_k_is_never_decayed_and_everything_else_is_with_half_lambda():
    model = kg.GResNet20()
    recipe = get_recipe("preact_cifar")
    count = apply_weight_decay(model, recipe)
    gates = kg.gating.gate_variables(model)
    assert len(gates) == 9
    assert all(k.regularizer is None for k in gates)
    others = [v for v in model.trainable_weights if all(v is not k for k in gates)]
    assert count == len(others)
    for v in others:
        assert isinstance(v.regularizer, keras.regularizers.L2)
        assert np.isclose(v.regularizer.l2, recipe.weight_decay / 2)
    # The loss Keras adds is (λ/2)·Σw² over exactly those variables.
    total = sum(float(keras.ops.convert_to_numpy(loss)) for loss in model.losses)
    np.testing.assert_allclose(total, recipe.weight_decay / 2 * _sum_sq(others), rtol=1e-4)


def test_gradient_of_the_decay_is_lambda_w():
    """d/dw (λ/2)·w² = λ·w: the term Torch's weight_decay=λ adds to the gradient."""
    recipe = get_recipe("wrn_cifar")
    model = kg.GWideResNet(1, 1)
    apply_weight_decay(model, recipe)
    v = model.get_layer("predictions").kernel
    w = keras.ops.convert_to_numpy(v)
    reg = v.regularizer
    eps = 1e-3
    bumped = w.copy()
    bumped[0, 0] += eps
    numeric = (float(reg(bumped)) - float(reg(w))) / eps
    np.testing.assert_allclose(numeric, recipe.weight_decay * w[0, 0] + recipe.weight_decay / 2 * eps, rtol=1e-2, atol=1e-6)


def test_k_decay_recipe_includes_k():
    model = kg.GResNet20()
    apply_weight_decay(model, get_recipe("preact_cifar_kdecay"))
    assert all(isinstance(k.regularizer, keras.regularizers.L2) for k in kg.gating.gate_variables(model))


def test_weights_only_decay_skips_biases():
    model = kg.HighwayNet()
    recipe = get_recipe("highway_cifar")
    chosen = decayed_variables(model, recipe)
    assert chosen and all(v.path.endswith("kernel") for v in chosen)
    assert len(chosen) == sum(v.path.endswith("kernel") for v in model.trainable_weights)


def test_no_decay_recipe_attaches_nothing():
    model = kg.GResNetFC(2)
    assert apply_weight_decay(model, get_recipe("rg_mnist_fc")) == 0
    assert model.losses == []
