"""Fixtures shared by the tests of training/ and keras_gated.training."""

import pytest

from tests.support.helpers import make_image_folder
from training import train


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A tiny image folder that every data tag loads, and an emptied copy of the registry
    file; ``tiny.train(model, epochs)`` trains a run folder named ``<model>.tiny``."""
    from types import SimpleNamespace

    from keras_gated import datasets

    folder = make_image_folder(tmp_path / "tiny", per_class=(40, 10))
    original = datasets.load
    monkeypatch.setattr(datasets, "load",
                        lambda tag, split="train", **kw: original(str(folder), split, **kw))
    original_numpy = datasets.load_numpy
    monkeypatch.setattr(datasets, "load_numpy",
                        lambda tag, split="test", **kw: original_numpy(str(folder), split, **kw))
    cfgs = tmp_path / "cfgs"  # an empty folder of family data files
    cfgs.mkdir()

    def train_run(model: str, epochs: int = 1):
        run = tmp_path / "runs" / f"{model}.tiny"
        assert train.main(["--model", model, "--dataset", str(folder), "--epochs", str(epochs),
                           "--batch-size", "16", "--out", str(run), "--verbose", "0"]) == 0
        return run

    return SimpleNamespace(cfgs=cfgs, zoo=tmp_path / "zoo", train=train_run)
