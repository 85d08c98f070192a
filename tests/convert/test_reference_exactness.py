"""Exactness against the reference implementations: random weights and BN statistics in
a PyTorch re-implementation of each reference (``tests/support/torch_references.py``), moved with
``keras_gated.convert``, the same input, inference mode, the same logits."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.needs("torch")
torch = pytest.importorskip("torch", reason="the reference nets are written in PyTorch (pip install torch)")

import keras_gated as kg  # noqa: E402
from keras_gated.models.builder import CIFAR_MEAN, CIFAR_STD  # noqa: E402
from keras_gated.convert import ConversionError, convert, load_state_dict  # noqa: E402
from tests.support.helpers import to_numpy  # noqa: E402
from tests.support.torch_references import (  # noqa: E402
    TorchvisionResNet50,
    fb_preact_resnet,
    randomize_,
    wrn_forward,
    wrn_params,
)

RELATIVE_TOLERANCE = 1e-4


def _inputs(shape, seed=0):
    """Normalised-scale NHWC input and its NCHW copy."""
    x = np.random.default_rng(seed).normal(size=(2, *shape)).astype("float32")
    return x, torch.from_numpy(x.transpose(0, 3, 1, 2).copy())


def assert_same_logits(keras_logits, torch_logits):
    ours, reference = to_numpy(keras_logits), torch_logits.detach().numpy()
    scale = np.abs(reference).max()
    assert scale > 1e-3, "degenerate reference logits"
    difference = np.abs(ours - reference).max()
    assert difference <= RELATIVE_TOLERANCE * scale, f"max |Δlogit| {difference:.3g} on logits up to {scale:.3g}"


def _logits_model(arch, **kwargs):
    return kg.create_model(arch, include_preprocessing=False, classifier_activation=None, **kwargs)


# An even input size, where Keras "same" padding at stride 2 differs from the references.
RESNET50_SHAPE = (64, 64, 3)


@pytest.fixture(scope="module")
def torchvision_resnet50():
    return randomize_(TorchvisionResNet50(num_classes=7), seed=1)


@pytest.mark.parametrize("arch", ["resnet50", "gresnet50"])
def test_resnet50_matches_torchvision(arch, torchvision_resnet50):
    model = _logits_model(arch, input_shape=RESNET50_SHAPE, classes=7)
    load_state_dict(model, torchvision_resnet50.state_dict(), "torchvision")
    x, xt = _inputs(RESNET50_SHAPE)
    assert_same_logits(model(x, training=False), torchvision_resnet50(xt))


def test_wide_resnet_matches_the_wrn_code():
    params = wrn_params(2, 2, seed=2)
    model = convert("wrn_16_2", params, "wrn", include_preprocessing=False, classifier_activation=None)
    x, xt = _inputs((32, 32, 3))
    assert_same_logits(model(x, training=False), wrn_forward(xt, params, n=2))


def test_wide_resnet_with_identity_first_unit_matches():
    # k = 1: the first unit is 16 -> 16, whose shortcut is the raw input in the WRN code.
    params = wrn_params(1, 1, seed=3)
    model = kg.WideResNet(1, 1, include_preprocessing=False, classifier_activation=None)
    load_state_dict(model, params, "wrn")
    x, xt = _inputs((32, 32, 3))
    assert_same_logits(model(x, training=False), wrn_forward(xt, params, n=1))


@pytest.mark.parametrize(
    "arch, shortcut_type",
    [("preactresnet20", "B"), ("preactresnet110", "B"), ("preactresnet110", "A"),
     ("preactresnet164", "B"), ("gresnet20", "A")],
)
def test_preact_resnet_matches_the_torch7_code(arch, shortcut_type):
    depth = int(arch.removeprefix("preact").removeprefix("resnet").removeprefix("gresnet"))
    reference = randomize_(fb_preact_resnet(depth, shortcut_type), seed=depth)
    model = convert(arch, reference.state_dict(), "fbresnet", include_preprocessing=False,
                    classifier_activation=None)
    expected_shortcut = "projection" if shortcut_type == "B" else "zeropad"
    assert model.get_layer("stage2_unit1").shortcut == expected_shortcut
    x, xt = _inputs((32, 32, 3))
    assert_same_logits(model(x, training=False), reference(xt))


def test_bn_epsilon_comes_from_a_source_module():
    reference = randomize_(fb_preact_resnet(20), seed=5)
    for m in reference.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.eps = 1e-3
    model = convert("preactresnet20", reference, "fbresnet", include_preprocessing=False,
                    classifier_activation=None)
    assert model.get_layer("final_bn").epsilon == 1e-3
    x, xt = _inputs((32, 32, 3))
    assert_same_logits(model(x, training=False), reference(xt))


# -- gate(): the gated twin computes the same function --------------------------------
GATE_CASES = [
    ("preactresnet20", (32, 32, 3), "stage1_unit2"),
    ("wrn_16_2", (32, 32, 3), "stage2_unit2"),
    ("resnet50", RESNET50_SHAPE, "conv3_block2"),
]


def _randomize_keras(model, seed=0):
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        if variable.path.endswith(("gamma", "moving_variance")):
            variable.assign(rng.uniform(0.5, 1.5, variable.shape).astype("float32"))
        elif variable.path.endswith(("beta", "moving_mean")):
            variable.assign(rng.uniform(-0.2, 0.2, variable.shape).astype("float32"))
    return model


@pytest.mark.parametrize("arch, shape, block", GATE_CASES)
def test_gate_is_exact_and_removal_drops_the_block(arch, shape, block):
    model = _randomize_keras(kg.create_model(arch, input_shape=shape, classes=5, classifier_activation=None))
    gated = kg.gate(model)
    assert gated.name == kg.gating.twin_name(arch)
    assert set(kg.gate_values(gated).values()) == {1.0}
    x = np.random.default_rng(0).uniform(0, 255, size=(2, *shape)).astype("float32")
    np.testing.assert_allclose(to_numpy(gated(x)), to_numpy(model(x)), atol=1e-6, rtol=0)

    # With the block removed, the gated net equals the net that skips the block.
    kg.remove_block(gated, block)
    skip_input = model.get_layer(block).input
    after = model.layers[model.layers.index(model.get_layer(block)) + 1:]
    import keras

    y = skip_input
    for layer in after:
        y = layer(y)
    without = keras.Model(model.input, y)
    np.testing.assert_allclose(to_numpy(gated(x)), to_numpy(without(x)), atol=1e-6, rtol=0)
    assert not np.allclose(to_numpy(gated(x)), to_numpy(model(x)), atol=1e-4)


def test_gate_refuses_gated_nets_and_nets_without_blocks():
    with pytest.raises(ValueError, match="gated already"):
        kg.gate(kg.GResNet20())
    with pytest.raises(ValueError, match="no residual blocks"):
        kg.gate(kg.PlainNet(4))


def test_a_gated_net_converted_from_published_weights_equals_the_reference():
    reference = randomize_(fb_preact_resnet(20), seed=7)
    ungated = convert("preactresnet20", reference.state_dict(), "fbresnet", include_preprocessing=False,
                      classifier_activation=None)
    gated = kg.gate(ungated)
    x, xt = _inputs((32, 32, 3))
    assert_same_logits(gated(x, training=False), reference(xt))


# -- strictness: every key exactly once, nothing written on failure -------------------
def _broken(kind):
    state = {k: v.clone() for k, v in randomize_(fb_preact_resnet(20), seed=9).state_dict().items()}
    key = "2.1.0.0.2.weight"  # stage 2, unit 2, first convolution
    if kind == "renamed":
        state["2.1.0.0.2.weights"] = state.pop(key)
    elif kind == "missing":
        del state[key]
    else:
        state[key] = state[key][:, :8]
    return state, key


@pytest.mark.parametrize("kind, words", [("renamed", "Unknown key '2.1.0.0.2.weights'"),
                                         ("missing", "Missing key '2.1.0.0.2.weight'"),
                                         ("misshaped", "Key '2.1.0.0.2.weight' has shape")])
def test_a_bad_state_dict_names_the_key_and_writes_nothing(kind, words, tmp_path):
    state, _ = _broken(kind)
    out = tmp_path / "converted"
    with pytest.raises(ConversionError, match=words.replace("(", r"\(")):
        convert("preactresnet20", state, "fbresnet", out=out)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_failed_load_leaves_the_model_untouched():
    model = kg.PreActResNet20()
    before = [to_numpy(v).copy() for v in model.weights]
    state, _ = _broken("misshaped")
    with pytest.raises(ConversionError):
        load_state_dict(model, state, "fbresnet")
    assert all(np.array_equal(a, to_numpy(v)) for a, v in zip(before, model.weights))


def test_wrong_family_for_a_layout_is_refused():
    with pytest.raises(ConversionError, match="torchvision layout feeds"):
        convert("gresnet20", {}, "torchvision")


def test_safetensors_file_and_cli_write_a_folder_that_weights_loads(tmp_path):
    from safetensors.torch import save_file

    reference = randomize_(fb_preact_resnet(20), seed=11)
    source = tmp_path / "preresnet20.safetensors"
    save_file({k: v.contiguous() for k, v in reference.state_dict().items()}, str(source))
    out = tmp_path / "keras-preresnet20"
    result = subprocess.run(
        [sys.executable, "-m", "keras_gated.cli", "convert", "preactresnet20", str(source),
         "--from", "fbresnet", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert str(out) in result.stdout
    model = kg.PreActResNet20(weights=str(out), classifier_activation=None)
    raw = np.random.default_rng(0).uniform(0, 255, size=(2, 32, 32, 3)).astype("float32")
    mean, std = np.array(CIFAR_MEAN, "float32"), np.array(CIFAR_STD, "float32")
    normalised = torch.from_numpy(((raw - mean) / std).transpose(0, 3, 1, 2).copy())
    assert_same_logits(model(raw, training=False), reference(normalised))
    # Published weights, gated: the same logits until k moves.
    assert_same_logits(kg.gate(model)(raw, training=False), reference(normalised))


def test_the_families_declare_the_layouts_and_the_former_tables_still_answer():
    import keras_gated.convert as conversion

    layouts = conversion.source_layouts()
    assert sorted(layouts) == ["fbresnet", "torchvision", "wrn"]
    assert layouts["torchvision"].archs == ("resnet50", "gresnet50")
    with pytest.warns(DeprecationWarning, match="SOURCE_ARCHS"):
        assert conversion.SOURCE_ARCHS["wrn"] == ("wrn_", "gwrn_")
    assert set(conversion.SOURCES) == set(layouts)
    with pytest.raises(ConversionError, match="Unknown source layout"):
        convert("resnet50", {}, "caffe")
