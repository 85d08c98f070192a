"""The pre-activation residual FC nets (``ResNetFC(preactivation=True)``, the variant
Residual Gates §3.1 tried and set aside) against a PyTorch net written here from He et
al. 2016's unit on dense layers: u = x + W2·ReLU(BN(W1·ReLU(BN(x)))) per block
(gated: u = x + relu(k)·f_r(x)), then BN-ReLU and the classifier. Random weights and BN
statistics copied into the Keras model give the same logits."""

from __future__ import annotations

import numpy as np
import pytest

import keras_gated as kg
from tests.support.helpers import to_numpy

DEPTH, UNITS = 6, 12


@pytest.mark.needs("torch")
@pytest.mark.parametrize("gated", [False, True])
def test_the_preactivation_net_computes_he_et_als_unit_on_dense_layers(gated):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn1, self.fc1 = nn.BatchNorm1d(UNITS, eps=1e-3), nn.Linear(UNITS, UNITS, bias=False)
            self.bn2, self.fc2 = nn.BatchNorm1d(UNITS, eps=1e-3), nn.Linear(UNITS, UNITS, bias=False)
            self.k = nn.Parameter(torch.tensor(0.7))

        def forward(self, x):
            r = self.fc2(torch.relu(self.bn2(self.fc1(torch.relu(self.bn1(x))))))
            return x + (torch.relu(self.k) * r if gated else r)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Linear(28 * 28, UNITS)
            self.blocks = nn.Sequential(*(Block() for _ in range(DEPTH // 2)))
            self.bn = nn.BatchNorm1d(UNITS, eps=1e-3)
            self.fc = nn.Linear(UNITS, 10)

        def forward(self, x):
            return self.fc(torch.relu(self.bn(self.blocks(self.stem(x.flatten(1))))))

    torch.manual_seed(0)
    reference = Net().eval()
    with torch.no_grad():
        for bn in (m for m in reference.modules() if isinstance(m, nn.BatchNorm1d)):
            bn.weight.uniform_(0.5, 1.5), bn.bias.uniform_(-0.2, 0.2)
            bn.running_mean.uniform_(-0.2, 0.2), bn.running_var.uniform_(0.5, 1.5)
    constructor = kg.GResNetFC if gated else kg.ResNetFC
    model = constructor(DEPTH, units=UNITS, preactivation=True, include_preprocessing=False,
                        classifier_activation=None)

    def dense(name, linear):
        layer = model.get_layer(name)
        layer.kernel.assign(linear.weight.detach().numpy().T)
        if linear.bias is not None:
            layer.bias.assign(linear.bias.detach().numpy())

    def bn(name, norm):
        layer = model.get_layer(name)
        for variable, tensor in ((layer.gamma, norm.weight), (layer.beta, norm.bias),
                                 (layer.moving_mean, norm.running_mean),
                                 (layer.moving_variance, norm.running_var)):
            variable.assign(tensor.detach().numpy())

    dense("stem", reference.stem)
    for i, block in enumerate(reference.blocks, start=1):
        for j in (1, 2):
            bn(f"block{i}_layer{j}_bn", getattr(block, f"bn{j}"))
            dense(f"block{i}_layer{j}_dense", getattr(block, f"fc{j}"))
        if gated:
            model.get_layer(f"block{i}").k.assign(float(block.k.detach()))
    bn("post_bn", reference.bn)
    dense("predictions", reference.fc)
    x = np.random.default_rng(0).standard_normal((4, 28, 28, 1)).astype("float32")
    with torch.no_grad():
        expected = reference(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(to_numpy(model(x, training=False)), expected, rtol=1e-5, atol=1e-5)


def test_the_variant_is_named_and_checked_and_the_paper_unit_stays_the_default():
    plain = kg.ResNetFC(4)
    assert plain.name == "resnetfc4" and not any(l.name == "post_bn" for l in plain.layers)
    assert plain.get_layer("block1_layer1_dense").input.shape[-1] == 50  # Dot first
    pre = kg.GResNetFC(4, preactivation=True)
    assert pre.name == "gresnetfc4_preact" and pre.get_layer("post_relu") is not None
    assert len(kg.gating.gate_variables(pre)) == 2
    # Each layer keeps its dense and BN, in the other order; the BN after the last block
    # (γ, β and the two moving statistics of 50 units) is the one addition.
    assert kg.ResNetFC(4, preactivation=True).count_params() == plain.count_params() + 4 * 50
    with pytest.raises(ValueError, match="`preactivation` must be True or False"):
        kg.ResNetFC(4, preactivation="yes")
