"""Several nets in one lease call (training.lease.several) and the packed bundle each one
comes back as (``DIR/<model>.tar``)."""

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from training.lease import bundle as bundle_io
from training.lease import several
from training.lease.run import add_arguments

ROOT = Path(__file__).resolve().parents[3]


def weights(seed=0):
    rng = np.random.default_rng(seed)
    return [("a/kernel", rng.normal(size=(3, 3, 4, 8)).astype(np.float32), True),
            ("a/moving_mean", rng.normal(size=(8,)).astype(np.float32), False)]


def parse(*argv):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([str(a) for a in argv])


# -- the packed bundle ---------------------------------------------------------------------
def test_a_packed_bundle_is_one_file_that_unpacks_to_the_same_weights(tmp_path):
    named = weights()
    tar_path = tmp_path / "gresnet20.tar"
    bundle_io.write_packed_bundle(tar_path, named, {"status": "finished"}, [{"epoch": 1}])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gresnet20.tar"]
    assert bundle_io.is_packed_bundle(tar_path)
    with bundle_io.unpacked_bundle(tar_path) as folder:
        values, _, metrics = bundle_io.read_bundle(folder)
        unpacked = folder
    assert not unpacked.exists()  # the temporary copy is gone
    assert metrics == {"status": "finished"}
    kernel = named[0][1].astype(ml_dtypes.bfloat16).astype(np.float32)
    assert np.array_equal(values["a/kernel"], kernel)
    assert np.array_equal(values["a/moving_mean"], named[1][1])
    bundle_io.write_packed_bundle(tar_path, weights(1), {"status": "in progress"}, [])  # replaced
    with bundle_io.unpacked_bundle(tar_path) as folder:
        assert bundle_io.read_bundle(folder)[2] == {"status": "in progress"}


def test_a_packed_bundle_never_replaces_another_file_and_a_foreign_tar_is_refused(tmp_path):
    thesis = tmp_path / "thesis.tar"
    with tarfile.open(thesis, "w") as tar:
        data = b"chapter 1"
        info = tarfile.TarInfo("chapter1.tex")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    before = thesis.read_bytes()
    with pytest.raises(SystemExit, match="not a packed lease bundle"):
        bundle_io.write_packed_bundle(thesis, weights(), {}, [])
    assert thesis.read_bytes() == before
    with pytest.raises(ValueError, match="not a packed lease bundle"):
        with bundle_io.unpacked_bundle(thesis):
            pass


def test_a_packed_bundle_with_a_member_outside_its_folder_or_a_link_is_refused(tmp_path):
    for name, kind in (("../manifest.json", tarfile.REGTYPE), ("manifest.json", tarfile.SYMTYPE)):
        path = tmp_path / "evil.tar"
        with tarfile.open(path, "w") as tar:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "/etc/passwd"
                tar.addfile(info)
            else:
                info.size = 2
                tar.addfile(info, io.BytesIO(b"{}"))
        assert not bundle_io.is_packed_bundle(path), name
        with pytest.raises(ValueError, match="not a packed lease bundle"):
            with bundle_io.unpacked_bundle(path):
                pass


def test_the_release_tool_takes_a_packed_bundle(tmp_path, monkeypatch):
    from training import release_bundle

    bundle_io.write_packed_bundle(tmp_path / "a.tar", weights(), {"status": "finished"}, [])
    bundle_io.write_bundle(tmp_path / "folder", weights(), {"status": "finished"}, [])
    (tmp_path / "other.tar").write_bytes(b"not a tar")
    assert release_bundle.is_bundle(tmp_path / "a.tar") and release_bundle.is_bundle(tmp_path / "folder")
    assert not release_bundle.is_bundle(tmp_path / "other.tar")

    class Read(Exception):
        pass

    def read_instead_of_building(folder):  # what the release reads, before any model
        raise Read(bundle_io.read_bundle(folder)[2], folder)

    monkeypatch.setattr(release_bundle, "bundle_model", read_instead_of_building)
    with pytest.raises(Read) as read:
        release_bundle.release_bundle(tmp_path / "a.tar", zoo=tmp_path / "zoo", out=tmp_path / "o")
    metrics, folder = read.value.args
    assert metrics == {"status": "finished"} and folder != tmp_path / "a.tar"
    assert not folder.exists() and not (tmp_path / "zoo").exists() and not (tmp_path / "o").exists()


# -- several nets, in turn or side by side -------------------------------------------------
def test_one_recipe_serves_every_net_or_one_is_given_per_net():
    assert several.recipes_for(["a", "b"], ["r"]) == ["r", "r"]
    assert several.recipes_for(["a", "b"], ["r", "s"]) == ["r", "s"]
    with pytest.raises(SystemExit, match="2 models and 3 recipes"):
        several.recipes_for(["a", "b"], ["r", "s", "t"])


def test_the_bundles_folder_must_be_new_or_hold_only_these_nets_bundles(tmp_path):
    several.check_out(tmp_path / "new", ["a", "b"])
    (tmp_path / "a.tar").write_bytes(b"")
    several.check_out(tmp_path, ["a", "b"])  # the same call run again
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit, match="notes.txt"):
        several.check_out(tmp_path, ["a", "b"])
    with pytest.raises(SystemExit, match="at most 8 files"):
        several.check_out(tmp_path / "new", [f"m{i}" for i in range(9)])
    with pytest.raises(SystemExit, match="twice"):
        several.check_out(tmp_path / "new", ["a", "a"])


def test_each_net_runs_alone_with_its_recipe_packed_and_the_call_recorded(tmp_path):
    args = parse("--model", "gresnet20", "preactresnet20", "--recipe", "preact_cifar",
                 "--minutes", 9, "--out", tmp_path, "--max-steps", 6, "--epochs", 30,
                 "--model-arg", "batch_norm=False", "--model-arg", "k_init=0.5")
    command = several.child_command(args, "gresnet20", "preact_cifar", 4.5,
                                    tmp_path / "gresnet20.tar", "CALL")
    child = parse(*command[4:])
    assert command[1:4] == ["-m", "training.lease", "run"]
    assert child.model == ["gresnet20"] and child.recipe == ["preact_cifar"]
    assert child.pack and child.call == "CALL" and child.out == str(tmp_path / "gresnet20.tar")
    assert (child.minutes, child.max_steps, child.epochs) == (4.5, 6, 30.0)
    assert child.model_arg == ["batch_norm=False", "k_init=0.5"]


def test_a_bundle_of_a_net_with_other_constructor_arguments_is_not_released(tmp_path):
    from training.release_bundle import bundle_model

    bundle_io.write_bundle(tmp_path / "b", weights(), {"status": "finished", "model": "gwrn_16_2",
                                                       "model_args": {"batch_norm": False}}, [])
    with pytest.raises(ValueError, match="another architecture than the registered one"):
        bundle_model(tmp_path / "b")


FAKE_NET = textwrap.dedent("""
    import sys, time
    import numpy as np
    from training.lease.bundle import write_packed_bundle
    model, minutes, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    print(f"started {time.time():.3f} minutes {minutes:.3f}", flush=True)
    time.sleep(1.0)
    write_packed_bundle(out, [("w", np.ones(4, np.float32), True)], {"model": model}, [])
    print(f"ended {time.time():.3f}", flush=True)
    sys.exit(3 if model == "broken" else 0)
""")


def run_fake_call(tmp_path, monkeypatch, *extra, models=("a", "b")):
    """several.main with each net's process replaced by a script that writes a packed
    bundle after a second; returns (exit code, {net: (start, end, minutes)})."""
    script = tmp_path / "fake_net.py"
    script.write_text(FAKE_NET)
    monkeypatch.setattr(several, "child_command", lambda args, model, recipe, minutes, out, call: [
        sys.executable, str(script), model, str(minutes), str(out)])
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    out = tmp_path / "bundles"
    args = parse("--model", *models, "--minutes", 2, "--out", out, *extra)
    import time

    code = several.main(args, time.time(), "python -m training.lease run ...")
    return code, out


def test_nets_in_turn_share_the_time_and_each_comes_back_as_one_file(tmp_path, monkeypatch, capsys):
    code, out = run_fake_call(tmp_path, monkeypatch)
    printed = capsys.readouterr().out
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["a.tar", "b.tar"]
    lines = {m: [l.split() for l in printed.splitlines() if l.startswith(f"[{m}] ")] for m in "ab"}
    start_a, minutes_a = float(lines["a"][0][2]), float(lines["a"][0][4])
    start_b, minutes_b = float(lines["b"][0][2]), float(lines["b"][0][4])
    end_a = float(lines["a"][1][2])
    assert start_b >= end_a  # in turn
    assert minutes_a < 1.0 and minutes_b > minutes_a  # half of what is left, then all of it


def test_nets_side_by_side_start_together_and_a_failed_net_fails_the_call(tmp_path, monkeypatch, capsys):
    code, out = run_fake_call(tmp_path, monkeypatch, "--side-by-side", models=("a", "broken"))
    printed = capsys.readouterr().out
    assert code == 1 and "broken exit 3" in printed
    starts = [float(l.split()[2]) for l in printed.splitlines() if " started " in l]
    ends = [float(l.split()[2]) for l in printed.splitlines() if " ended " in l]
    assert len(starts) == 2 and max(starts) < min(ends)  # both ran at once
    assert sorted(p.name for p in out.iterdir()) == ["a.tar", "broken.tar"]


@pytest.mark.slow
def test_two_nets_train_in_one_call_on_cpu_and_each_comes_back_packed(tmp_path):
    """End to end on CPU (JAX): a tiny carried data set, GResNet-20 and PreActResNet-20 in
    turn for one epoch (4 steps) each with the paper's step recipe."""
    from training.lease.compact_data import array_sha256, decode, pack

    from tests.support.data import jpegs

    lease = tmp_path / "lease"
    lease.mkdir()
    entries = []
    for split, n in (("train", 64), ("test", 32)):
        files, labels = jpegs(n, seed=n), (np.arange(n) % 10).astype(np.uint8)
        np.savez(lease / f"{split}.npz", **pack(files, labels))
        entries.append({"split": split, "file": f"{split}.npz", "pixels_sha256": array_sha256(decode(files)),
                        "labels_sha256": array_sha256(labels)})
    (lease / "manifest.json").write_text(json.dumps({"data": entries}))
    out = tmp_path / "bundles"
    env = {**os.environ, "KERAS_BACKEND": "jax"}
    done = subprocess.run(
        [sys.executable, "-m", "training.lease", "run", "--model", "gresnet20", "preactresnet20",
         "--recipe", "preact_cifar", "--epochs", "1", "--batch-size", "16", "--minutes", "20",
         "--reserve", "5", "--measure-seconds", "0.5", "--out", str(out), "--lease-dir", str(lease)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(p.name for p in out.iterdir()) == ["gresnet20.tar", "preactresnet20.tar"]
    with bundle_io.unpacked_bundle(out / "preactresnet20.tar") as folder:
        metrics = bundle_io.read_bundle(folder)[2]
    assert metrics["status"] == "finished" and metrics["recipe"] == "preact_cifar"
    assert metrics["steps"] == metrics["steps_done"] == 4 and metrics["epochs_asked"] == 1.0
    assert metrics["command"].startswith("python -m training.lease run --model gresnet20 preactresnet20")


# -- the GPU probe's PyTorch peer ----------------------------------------------------------
@pytest.mark.needs("torch")
def test_the_torch_probe_trains_the_peer_through_torch_compile(tmp_path):
    """The probe's peer step on CPU through ``torch.compile``'s graph capture (the ``eager``
    compiler backend keeps it quick here; inductor is what ``--compile`` uses)."""
    compile_backend = "eager"
    from training.lease.probe import probe_torch

    out = tmp_path / "probe.jsonl"
    probe_torch("gresnet20", [8], 0.2, out, compile_backend=compile_backend)
    record = json.loads(out.read_text().splitlines()[-1])
    assert record["what"] == "torch_peer_train_step" and record["steps"] >= 5
    assert record["img_per_s"] > 0 and np.isfinite(record["loss"])
    assert record["precision"].endswith("torch.compile (eager)")
