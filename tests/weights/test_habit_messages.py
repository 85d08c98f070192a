"""Where a habit meets keras-gated's own vocabulary, one sentence says what to do:
``weights="imagenet"``, 1-channel 28x28 inputs for CIFAR weights, ``pull`` offline or of
planned weights."""

from pathlib import Path

import pytest

import keras_gated as kg

ZOO = Path(__file__).resolve().parents[2] / "zoo"


def test_weights_imagenet_names_the_planned_imagenet2012_tag():
    with pytest.raises(ValueError, match="imagenet2012") as raised:
        kg.GResNet20(weights="imagenet")
    assert "planned, not released yet" in str(raised.value)


def test_one_channel_inputs_for_cifar_weights_say_how_to_adapt_them():
    with pytest.raises(ValueError) as raised:
        kg.GResNet20(weights="cifar10", input_shape=(28, 28, 1))
    message = str(raised.value)
    assert "in_chans=1" in message and "training.finetune" in message
    assert "mean" not in message and message.count(". ") == 0


def _unreachable(*args, **kwargs):
    raise ConnectionError("[Errno 111] Connection refused")  # as the Hub client's own


@pytest.mark.parametrize("zoo", ["checkout", "empty"])
def test_pull_offline_names_the_local_copy_that_serves_the_weights(zoo, tmp_path, monkeypatch):
    import huggingface_hub

    from keras_gated.weights.hub import HubDownloadError, pull

    monkeypatch.setenv("KERAS_GATED_ZOO", str(ZOO if zoo == "checkout" else tmp_path))
    monkeypatch.setattr(huggingface_hub, "snapshot_download", _unreachable)
    with pytest.raises(HubDownloadError) as raised:
        pull("gresnet20.cifar10")
    message = str(raised.value)
    assert "Cannot reach the Hub" in message and "\n" not in message
    if zoo == "checkout":
        assert "zoo/ copy" in message and "no download is needed" in message
    else:
        assert "no local copy serves it" in message and "KERAS_GATED_ZOO" in message


def test_cli_pull_of_weights_a_local_copy_serves_exits_0_saying_so(monkeypatch, capsys):
    import huggingface_hub

    from keras_gated.cli import main

    monkeypatch.setenv("KERAS_GATED_ZOO", str(ZOO))
    monkeypatch.setattr(huggingface_hub, "snapshot_download", _unreachable)
    assert main(["pull", "gresnet20.cifar10"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "already here" in captured.out and str(ZOO / "gresnet20.cifar10") in captured.out


def test_cli_pull_of_planned_weights_says_they_are_planned(monkeypatch, capsys):
    import huggingface_hub

    from keras_gated.cli import main

    monkeypatch.setattr(huggingface_hub, "snapshot_download", _unreachable)
    assert main(["pull", "highwaynet.cifar10"]) == 2
    error = capsys.readouterr().err
    assert "internal error" not in error and "IndexError" not in error
    assert "'highwaynet.cifar10' are planned, not released" in error
