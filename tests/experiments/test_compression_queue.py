"""experiments/compression/queue.sh: the runs of docs/compression.md in order, each kept
once finished and skipped after, the scratch baseline given its method run's blocks, with
a stand-in for keras-gated compress."""

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUEUE = ROOT / "experiments" / "compression" / "queue.sh"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("flock") is None,
                                reason="needs bash and flock")

# A python that answers `-c <code> compress ...` by logging its arguments and writing what
# keras-gated compress writes into --out (or failing when FAIL names the run).
STAND_IN = r'''#!/bin/bash
[ "$1" = "-c" ] || exit 3
shift 2
if [ "$1" = "evaluate" ]; then echo "evaluate $* KERAS_BACKEND=$KERAS_BACKEND" >> "$EVALUATIONS"; echo "test accuracy: 0.5000"; exit 0; fi
echo "KERAS_BACKEND=$KERAS_BACKEND $*" >> "$CALLS"
out=""; prev=""
for arg in "$@"; do [ "$prev" = "--out" ] && out=$arg; prev=$arg; done
# The queue holds the run's lock while its command runs: a new open of it cannot take it.
flock -n "$(dirname "$out")/run.lock" true && echo "UNLOCKED $out" >> "$CALLS"
case "$out" in *"/${FAIL:-none}/"*) exit 1;; esac
mkdir -p "$out"
echo '{"record": {"removed": ["stage1_unit2"]}}' > "$out/compression.json"
echo '{"test_accuracy": 0.5}' > "$out/metrics.json"
echo png > "$out/tradeoff.png"; echo card > "$out/README.md"; echo "epoch lines"
'''


def _queue(tmp_path, source_epochs: int = 40, **extra) -> list[str]:
    """Run the queue with the stand-in; ``source_epochs`` is what the released
    gresnet20.cifar10's metrics.json records (the 100-epoch runs wait for 100)."""
    python = tmp_path / "python"
    python.write_text(STAND_IN)
    python.chmod(0o755)
    source = tmp_path / "source_metrics.json"
    source.write_text(json.dumps({"test_accuracy": 0.88, "epochs": source_epochs}))
    env = {"RUNS": str(tmp_path / "runs"), "RESULTS": str(tmp_path / "results"),
           "PYTHON": str(python), "CALLS": str(tmp_path / "calls"),
           "EVALUATIONS": str(tmp_path / "evaluations"), "PATH": "/usr/bin:/bin",
           "SOURCE_METRICS": str(source), **extra}
    result = subprocess.run(["bash", str(QUEUE)], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    calls = tmp_path / "calls"
    return calls.read_text().splitlines() if calls.exists() else []


def _name(call: str) -> str:
    return call.split("--out ")[1].split()[0].split("/")[-2]


def test_the_queue_runs_every_budget_and_baseline_in_order_and_keeps_the_records(tmp_path):
    calls = _queue(tmp_path)
    names = [_name(c) for c in calls]
    gresnet = [f"gresnet20-{tag}{suffix}" for tag in ("m05", "m075", "m035")
               for suffix in ("", "-lowest", "-random", "-scratch")]
    gresnet.remove("gresnet20-m035-random")  # all six blocks go: (b) is (a)
    assert names == gresnet + ["gresnet20-m05-s1", "gwrn_16_2-m05", "gwrn_16_2-m05-lowest",
                               "gwrn_16_2-m05-scratch", "gresnet20-m05-lowest-e15"]
    # Its --epochs comes last, so it is the one the command takes.
    assert calls[-1].split("--macs 0.5 --baseline lowest --epochs 15 ")[1].startswith("--backup-dir")
    assert "--macs 0.5 --seed 1 " in calls[names.index("gresnet20-m05-s1")]
    assert all("--epochs 3 --pressure-epochs 2" in c and "--augment" in c and "--backup-dir" in c
               for c in calls)
    # One backend per budget: TensorFlow (faster on a CPU) for gresnet20 at 0.35, gwrn_16_2
    # and the longer fine-tuning.
    assert [c.split()[0] for c in calls] == [
        "KERAS_BACKEND=" + ("tensorflow" if name.startswith(("gwrn", "gresnet20-m035"))
                            or name.endswith("-e15") else "jax")
        for name in names]
    assert all(c.split()[1] == "compress" for c in calls)
    scratch = calls[names.index("gresnet20-m05-scratch")]
    assert f"--remove-like {tmp_path}/results/gresnet20-m05 " in scratch
    kept = tmp_path / "results" / "gresnet20-m05"
    assert {p.name for p in kept.iterdir()} == {"compression.json", "metrics.json", "tradeoff.png",
                                               "card.md", "compress.log", "evaluate.log",
                                               "status.json"}
    assert (kept / "evaluate.log").read_text() == "test accuracy: 0.5000\n"
    # The run's in-flight log went with it; its output stays there for a release.
    assert not (tmp_path / "runs" / "gresnet20-m05" / "compress.log").exists()
    assert (tmp_path / "runs" / "gresnet20-m05" / "out" / "compression.json").is_file()
    evaluations = (tmp_path / "evaluations").read_text().splitlines()
    assert len(evaluations) == len(calls)
    assert evaluations[0] == (f"evaluate evaluate gresnet20 --weights {tmp_path}/runs/gresnet20-m05/out "
                              "--dataset cifar10 KERAS_BACKEND=jax")
    assert evaluations[-2].startswith("evaluate evaluate gwrn_16_2 --weights")
    assert evaluations[-2].endswith("KERAS_BACKEND=tensorflow")
    assert json.loads((kept / "status.json").read_text())["status"] == "finished"
    assert "queue 0 done (ONLY=*)" in (tmp_path / "results" / "queue.log").read_text()
    assert not [c for c in calls if c.startswith("UNLOCKED")]
    assert _queue(tmp_path) == calls  # finished runs are skipped: no new call


def test_a_failed_run_is_tried_again_and_its_scratch_baseline_waits(tmp_path):
    calls = _queue(tmp_path, FAIL="gresnet20-m05")
    names = [_name(c) for c in calls]
    assert "gresnet20-m05-scratch" not in names and "gresnet20-m05-lowest" in names
    assert not (tmp_path / "results" / "gresnet20-m05").exists()
    again = [_name(c) for c in _queue(tmp_path)[len(calls):]]
    assert again == ["gresnet20-m05", "gresnet20-m05-scratch"]


def test_the_tradeoff_figure_has_a_point_per_finished_run_and_its_source(tmp_path):
    from experiments.compression.tradeoff import draw, points

    for run, method, accuracy in (("g-m05", "pressure", 0.80), ("g-m05-lowest", "lowest", 0.79)):
        folder = tmp_path / run
        folder.mkdir()
        net = {"accuracy": accuracy, "macs": 17_000_000, "seconds_per_image": 0.0012}
        source = {"accuracy": 0.86, "macs": 40_000_000, "seconds_per_image": 0.0023}
        # The lowest run's two nets of one architecture timed 50 % apart: under a load.
        before = {"accuracy": 0.2, "macs": 17_000_000,
                  "seconds_per_image": 0.0013 if method == "pressure" else 0.0018}
        (folder / "compression.json").write_text(json.dumps({
            "record": {"method": method, "budget": {"macs": 0.5}, "removed": ["b1"]},
            "measured": {"source": source, "compressed": net, "removed, not fine-tuned": before}}))
        (folder / "metrics.json").write_text(json.dumps({"source_weights": "g (weights c)"}))
    found = points(tmp_path)
    assert [(p["run"], p["method"], p["compressed"]["accuracy"]) for p in found] == [
        ("g-m05", "pressure", 0.80), ("g-m05-lowest", "lowest", 0.79)]
    from experiments.compression.tradeoff import relative_time

    assert relative_time(found[0]) == 0.0012 / 0.0023  # timed against its own source
    assert [p["timed_alike"] for p in found] == [True, False]
    out = draw(found, tmp_path / "fig.png")
    assert out.stat().st_size > 1000 and json.loads(out.with_suffix(".json").read_text()) == found


def test_a_run_another_queue_holds_is_left_to_it_and_the_queue_goes_on(tmp_path):
    held = tmp_path / "runs" / "gresnet20-m05"
    held.mkdir(parents=True)
    with open(held / "run.lock", "w") as lock:  # another queue running it
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        names = [_name(c) for c in _queue(tmp_path)]
    # Neither the held run nor its scratch baseline (which needs its blocks) ran here.
    assert "gresnet20-m05" not in names and "gresnet20-m05-scratch" not in names
    assert names[:2] == ["gresnet20-m05-lowest", "gresnet20-m05-random"]
    assert names[-1] == "gresnet20-m05-lowest-e15"
    # Once the other queue is gone, the run is taken up again.
    assert [_name(c) for c in _queue(tmp_path)[len(names):]] == ["gresnet20-m05",
                                                                  "gresnet20-m05-scratch"]


def test_the_100_epoch_source_adds_its_runs_in_order_with_their_epochs_rates_and_seeds(tmp_path):
    calls = _queue(tmp_path, source_epochs=100, ONLY="gresnet20.e100-*")
    assert [_name(c) for c in calls] == ["gresnet20.e100-m05", "gresnet20.e100-m05-lowest",
                                         "gresnet20.e100-m05-e60", "gresnet20.e100-m05-lr05",
                                         "gresnet20.e100-m05-kd", "gresnet20.e100-m05-kd-s1",
                                         "gresnet20.e100-m05-kd-s2", "gresnet20.e100-m05-lr05-s1",
                                         "gresnet20.e100-m05-lr05-s2", "gresnet20.e100-m05-kd-e60"]
    epochs = [int(c.split("--epochs ")[-1].split()[0]) for c in calls]  # the last one counts
    assert epochs == [30, 30, 60, 30, 30, 30, 30, 30, 30, 60]
    assert [c.count("--finetune-learning-rate 0.05 ") for c in calls] == [0, 0, 0] + [1] * 7
    assert [c.count("--distill 0.9 ") for c in calls] == [0, 0, 0, 0, 1, 1, 1, 0, 0, 1]
    seeds = [int(c.split("--seed ")[1].split()[0]) if "--seed " in c else 0 for c in calls]
    assert seeds == [0, 0, 0, 0, 0, 1, 2, 1, 2, 0]
    assert all(c.startswith("KERAS_BACKEND=tensorflow ") and " --macs 0.5 " in c
               and c.split(f"--epochs {e} ")[1].split("--finetune-learning-rate 0.05 ")[-1]
               .split("--distill 0.9 ")[-1].split(f"--seed {s} ")[-1].startswith("--backup-dir")
               for c, e, s in zip(calls, epochs, seeds))
    assert "--baseline lowest" in calls[1] and "--baseline" not in "".join(calls[:1] + calls[2:])
    (tmp_path / "forty").mkdir()
    assert _queue(tmp_path / "forty", source_epochs=40, ONLY="gresnet20.e100-*") == []


def test_only_keeps_the_runs_its_glob_matches(tmp_path):
    names = [_name(c) for c in _queue(tmp_path, ONLY="gwrn_16_2-*")]
    assert names == ["gwrn_16_2-m05", "gwrn_16_2-m05-lowest", "gwrn_16_2-m05-scratch"]
    assert not (tmp_path / "runs" / "gresnet20-m05").exists()


def test_a_third_queue_is_refused_in_one_sentence(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    with open(runs / "queue.0.lock", "w") as first, open(runs / "queue.1.lock", "w") as second:
        fcntl.flock(first, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(second, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = subprocess.run(["bash", str(QUEUE)], capture_output=True, text=True, timeout=60,
                                env={"RUNS": str(runs), "RESULTS": str(tmp_path / "results"),
                                     "PYTHON": "false", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 1
    assert result.stderr == "queue: two compression queues already run here\n"


def test_a_run_whose_command_had_ended_is_only_recorded(tmp_path):
    # Stopped after `keras-gated compress` wrote its folder and removed its backup, before
    # the queue kept the records: the next queue keeps them and trains nothing again.
    out = tmp_path / "runs" / "gresnet20-m05" / "out"
    out.mkdir(parents=True)
    (out / "compression.json").write_text('{"record": {"removed": ["stage1_unit2"]}}')
    for name in ("metrics.json", "tradeoff.png", "README.md"):
        (out / name).write_text("{}")
    names = [_name(c) for c in _queue(tmp_path)]
    assert "gresnet20-m05" not in names and "gresnet20-m05-scratch" in names
    kept = tmp_path / "results" / "gresnet20-m05"
    assert (kept / "status.json").is_file() and (kept / "evaluate.log").is_file()
    assert "record gresnet20-m05: its command had ended" in (
        tmp_path / "results" / "queue.log").read_text()


def test_the_runs_from_the_100_epoch_source_wait_for_its_release(tmp_path):
    metrics = tmp_path / "metrics.json"
    metrics.write_text(json.dumps({"test_accuracy": 0.9, "epochs": 40, "model": "gresnet20"}))
    (tmp_path / "before").mkdir()
    (tmp_path / "after").mkdir()
    before = [_name(c) for c in _queue(tmp_path / "before", SOURCE_METRICS=str(metrics))]
    assert not [name for name in before if name.startswith("gresnet20.e100")]
    metrics.write_text(json.dumps({"test_accuracy": 0.9, "epochs": 100, "model": "gresnet20"}))
    calls = _queue(tmp_path / "after", SOURCE_METRICS=str(metrics))
    assert [_name(c) for c in calls][-10:] == ["gresnet20.e100-m05", "gresnet20.e100-m05-lowest",
                                               "gresnet20.e100-m05-e60", "gresnet20.e100-m05-lr05",
                                               "gresnet20.e100-m05-kd", "gresnet20.e100-m05-kd-s1",
                                               "gresnet20.e100-m05-kd-s2",
                                               "gresnet20.e100-m05-lr05-s1",
                                               "gresnet20.e100-m05-lr05-s2",
                                               "gresnet20.e100-m05-kd-e60"]
    runs = calls[-10:]
    assert all(c.startswith("KERAS_BACKEND=tensorflow compress gresnet20.cifar10 ") and
               "--macs 0.5" in c for c in runs)
    assert all("--epochs 30 --backup-dir" in c for c in runs[:2])
    assert "--epochs 60 --backup-dir" in runs[2]
    assert "--epochs 30 --finetune-learning-rate 0.05 --backup-dir" in runs[3]
    assert "--epochs 30 --finetune-learning-rate 0.05 --distill 0.9 --backup-dir" in runs[4]
    assert "--distill 0.9 --seed 1 --backup-dir" in runs[5]
    assert "--distill 0.9 --seed 2 --backup-dir" in runs[6]
    assert "--finetune-learning-rate 0.05 --seed 1 --backup-dir" in runs[7]
    assert "--finetune-learning-rate 0.05 --seed 2 --backup-dir" in runs[8]
    assert "--epochs 60 --finetune-learning-rate 0.05 --distill 0.9 --backup-dir" in runs[9]
