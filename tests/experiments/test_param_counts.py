"""experiments/tools/param_counts.py: the counts it prints are the trainable parameters of
the registered models, here the two 10-layer FC nets of Highway Networks §3.1 and the
gated ResNet-32 of Residual Gates §3.2."""

from experiments.tools.param_counts import DIFFERENCES, MNIST, PAIRS, PLAIN_71, count, difference_line, pair_line


def _dense(inputs: int, units: int) -> int:
    return inputs * units + units


def test_the_fc_counts_are_the_layers_own_weights():
    # A plain first layer on 784 pixels, 10 hidden layers, a 10-way softmax; a highway
    # layer holds two dense layers (H and T), a plain one a single dense layer.
    highway = _dense(784, 50) + 10 * 2 * _dense(50, 50) + _dense(50, 10)
    plain = _dense(784, 71) + 10 * _dense(71, 71) + _dense(71, 10)
    assert count("highwayfc10", MNIST) == highway == 90_760
    assert count("plainnet10", PLAIN_71) == plain == 107_575


def test_a_pair_line_gives_both_counts_and_their_ratio():
    claim, first, a, second, b = PAIRS[0]
    assert (first, second) == ("highwayfc10", "plainnet10")
    assert pair_line(*PAIRS[0]) == (f"| {claim} | highwayfc10: 90,760 | plainnet10: 107,575 "
                                    "| 84.4 % |")


def test_the_gated_resnet_32_adds_one_k_per_block():
    # ResNet-32 has 3 stages of 5 blocks: 15 gates, one scalar k each.
    assert difference_line(*DIFFERENCES[0]) == (
        "| RG §3.2: G-ResNet (n = 5) adds 15 | gresnet32: 466,729 | preactresnet32: 466,714 "
        "| +15 parameters |")
