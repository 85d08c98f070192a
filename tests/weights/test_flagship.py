"""The flagship release, G-WRN-28-10 on CIFAR-10 (trained in one GPU lease), and its
ungated twin WRN-28-10 (another lease): they load by tag from the checkout and from the
Hub, their weights stored in bfloat16 (exactly what the lease evaluated), every shard
pinned and within the shard size."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.cli import main
from keras_gated.weights import get_pretrained_cfg
from keras_gated.release import zoo_folder as kg_zoo
from keras_gated.weights.shards import MAX_SHARD_BYTES, SHARD_INDEX, weight_files
from tests.support.hub_fixtures import go_offline, hf_home, hub  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
WEIGHT_ID = "gwrn_28_10.cifar10"
FOLDER = ROOT / "zoo" / WEIGHT_ID


@pytest.mark.parametrize("weight_id, paper_number", [(WEIGHT_ID, "96.35 %"), ("wrn_28_10.cifar10", "3.89 %")])
def test_the_lease_releases_are_sharded_in_bfloat16_with_their_lease_record(weight_id, paper_number):
    folder = ROOT / "zoo" / weight_id
    cfg = get_pretrained_cfg(weight_id)
    assert cfg.released and cfg.file_name == SHARD_INDEX and len(cfg.shards) >= 2
    shards = weight_files(folder / SHARD_INDEX)
    assert all(s.stat().st_size <= MAX_SHARD_BYTES for s in shards)
    dtypes = {}
    for shard in shards:
        with h5py.File(shard) as h5:
            h5.visititems(lambda name, obj: dtypes.__setitem__(name, obj.attrs.get("dtype", str(obj.dtype)))
                          if isinstance(obj, h5py.Dataset) else None)
    kernels = [n for n in dtypes if "conv" in n or "projection" in n]
    assert kernels and all(dtypes[n] == "bfloat16" for n in kernels)
    assert "float32" in dtypes.values()  # the BatchNorm moving statistics
    assert sum(s.stat().st_size for s in shards) < 80_000_000  # 36.5 M parameters, 2 bytes each
    metrics = json.loads((folder / "metrics.json").read_text())
    assert abs(metrics["test_accuracy"] - metrics["gpu_test_accuracy"]) <= 0.003
    assert metrics["test_accuracy"] == cfg.metrics["test_accuracy"]
    assert metrics["command"].startswith(f"python -m training.lease run --model {cfg.arch} ")
    card = (folder / "README.md").read_text()
    assert paper_number in card and "JPEG q75" in card  # the paper's number beside ours


def test_the_product_card_line_loads_the_flagship_in_a_fresh_process():
    code = ("from keras_gated import GWideResNet\n"
            "from keras_gated.evaluation import demo_images\n"
            "model = GWideResNet(weights='cifar10')\n"
            "x, y, _ = demo_images()\n"
            "p = model.predict(x.astype('float32'), verbose=0)\n"
            "print(model.pretrained_cfg['weight_id'], int((p.argmax(-1) == y).sum()), len(y))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    weight_id, right, total = out.stdout.split()[-3:]
    assert weight_id == WEIGHT_ID and int(total) == 20
    assert int(right) >= 17  # a 92.9 % net on the 20 bundled test images


@pytest.mark.slow
def test_the_flagship_published_to_the_hub_loads_from_there(hub, capsys, monkeypatch):  # noqa: F811
    """Published with `keras-gated publish` to the project's Hub-protocol server, then
    loaded by tag with no zoo/ copy (the fixture's zoo/ is empty): every shard from the Hub."""
    from keras_gated.weights.registered import pretrained_cfgs_overlay

    assert main(["publish", str(FOLDER), "--repo-id", "keras-gated/gwrn_28_10.cifar10"]) == 0
    commit = re.search(r"^commit: ([0-9a-f]{40})$", capsys.readouterr().out, re.M).group(1)
    cfg = kg_zoo.pretrained_cfg_from_folder(FOLDER, revision=commit)
    reference = kg.GWideResNet(4, 10, weights=str(FOLDER))
    x = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype("float32")
    with pretrained_cfgs_overlay(cfg):
        model = kg.GWideResNet(weights="cifar10")
        np.testing.assert_array_equal(model.predict(x, verbose=0), reference.predict(x, verbose=0))
        go_offline(monkeypatch)
        kg.GWideResNet(weights="cifar10")  # now from the cache
