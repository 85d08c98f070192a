"""python -m training.release: run folder -> zoo folder -> registered config."""

import importlib.util
import json

import keras_gated as kg
from keras_gated.weights import PretrainedCfg
from tests.helpers import make_image_folder
from training import release, train


def _load_cfgs(path):
    spec = importlib.util.spec_from_file_location("cfgs_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PRETRAINED_CFGS


def test_release_writes_a_zoo_folder_and_registers_it(tmp_path, monkeypatch):
    folder = make_image_folder(tmp_path / "tiny", per_class=(40, 10))
    run = tmp_path / "runs" / "gresnetfc2.tiny"
    assert train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "1",
                       "--batch-size", "16", "--out", str(run), "--verbose", "0"]) == 0
    cfgs = tmp_path / "pretrained_cfgs.py"  # a copy of the registry file, emptied
    cfgs.write_text(release.CFGS_FILE.read_text().split("PRETRAINED_CFGS")[0]
                    + "PRETRAINED_CFGS: tuple[PretrainedCfg, ...] = (\n)\n")
    from keras_gated import datasets

    original = datasets.load
    monkeypatch.setattr(datasets, "load",
                        lambda tag, split="train", **kw: original(str(folder), split, **kw))
    zoo = release.release(run, notes="Compare with the paper.", zoo=tmp_path / "zoo",
                          register_in=cfgs)
    assert "Compare with the paper." in (zoo / "README.md").read_text()
    release.release(run, zoo=tmp_path / "zoo", register_in=cfgs)  # replaces, not duplicates
    assert json.loads((zoo / "metrics.json").read_text())["test_accuracy"] == json.loads(
        (run / "metrics.json").read_text())["test_accuracy"]
    registered = _load_cfgs(cfgs)
    assert len(registered) == 1 and isinstance(registered[0], PretrainedCfg)
    assert registered[0].weight_id == "gresnetfc2.tiny"
    assert registered[0].sha256 == kg.weights.sha256_of(zoo / "model.weights.h5")
