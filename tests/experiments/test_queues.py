"""experiments/<paper>/queue.sh (order, skipping recorded runs, keeping records, the lr
pick), with a stand-in for python -m training.train."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESIDUAL_GATES = ROOT / "experiments" / "residual_gates" / "queue.sh"
HIGHWAY = ROOT / "experiments" / "highway" / "queue.sh"
LRS = ("0.001", "0.003", "0.01", "0.03")
ACTS = ("relu", "tanh")
PAIRS = [(act, lr) for act in ACTS for lr in LRS]  # the search, in the queue's order

pytestmark = [
    pytest.mark.skipif(shutil.which("bash") is None or shutil.which("flock") is None,
                       reason="needs bash and flock"),
    pytest.mark.slow,  # every queue imports Keras once (several seconds)
]


def _search(act: str, lr: str) -> str:
    return f"highwayfc50.he.{act}.lr{lr}.val10"


def _env(tmp_path, python, **extra):
    return {"SCIENCE_RUNS": str(tmp_path / "runs"), "RESULTS": str(tmp_path / "results"),
            "PYTHON": str(python), "PATH": "/usr/bin:/bin", **extra}


def _stand_in(tmp_path, body: str = "exit 0") -> Path:
    """A python that answers `-m training.train` by logging its args (then ``body``)."""
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/bash\nif [ "$1" = "-m" ]; then echo "KERAS_BACKEND=$KERAS_BACKEND $*" '
                    f'>> {tmp_path}/calls; {body}; fi\nexec {sys.executable} "$@"\n')
    fake.chmod(0o755)
    return fake


def _queue(tmp_path, script, body: str = "exit 0", **extra):
    env = _env(tmp_path, _stand_in(tmp_path, body), **extra)
    result = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    calls = tmp_path / "calls"
    return calls.read_text().splitlines() if calls.exists() else []


def _outs(calls):
    return [c.split("--out ")[1].split()[0].rsplit("/", 1)[1] for c in calls]


def _record(folder: Path, status: str = "finished", **metrics):
    """A kept record: status.json, and metrics.json for a finished run."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "status.json").write_text(json.dumps({"status": status}))
    if status == "finished":
        (folder / "metrics.json").write_text(json.dumps({"command": "c", "val_split": "v", **metrics}))


def test_the_residual_gates_queue_runs_in_order(tmp_path):
    calls = _queue(tmp_path, RESIDUAL_GATES)
    outs = _outs(calls)
    assert outs[0] == "gplainnet50.fashion_mnist" and "--model-arg k_init=0.5" in calls[0]
    table = 1 + 20 + 8
    assert outs[1] == "rgtable.plainnet2.e20" and outs[table - 1] == "rgtable.gresnetfc100.k0.5.e20"
    # Table 7: the no-BN Wide ResNets on CIFAR-10, at the paper's lr, then the follow-ups.
    n = table + 11
    assert outs[table:n] == ["table7.gwrn_16_2_nobn.e5", "table7.wrn_16_2_nobn.e5",
                             "table7.gwrn_16_2_nobn.k0.5.e5", "table7.wrn_16_2_nobn.lr0.01.e5",
                             "table7.gwrn_16_2_nobn.lr0.01.e5", "table7.gwrn_16_2_nobn.k0.1.lr0.1.e5",
                             "table7.gwrn_16_2_nobn.k0.1.lr0.01.e5",
                             "table7.wrn_16_2_nobn.clip1.e5", "table7.gwrn_16_2_nobn.clip1.e5",
                             "table7.wrn_16_2_nobn.clip1.seed1.e5", "table7.gwrn_16_2_nobn.clip1.seed1.e5"]
    assert all("--dataset cifar10" in c and "--model-arg batch_norm=False" in c for c in calls[table:n])
    # The last four clip the gradient, all at the paper's lr and k; the last two with seed 1.
    assert all("--clip-norm 1" in c and "--lr" not in c and "k_init" not in c for c in calls[n - 4:n])
    assert all("--seed 1" in c for c in calls[n - 2:n]) and "--seed" not in calls[n - 3]
    # The convolutional nets train on TensorFlow, the FC nets on JAX.
    assert all(c.startswith("KERAS_BACKEND=tensorflow ") for c in calls[table:n])
    assert all(c.startswith("KERAS_BACKEND=jax ") for c in calls[:table])
    # Every run trains into the in-flight folder; a run that exits 0 keeps its records.
    assert all(f"--out {tmp_path / 'runs'}/" in c and "--verbose 2" in c for c in calls)
    assert len(outs) == n  # the stand-in "finished" every run: the second pass skips them all
    kept = json.loads((tmp_path / "results" / "rgtable.plainnet2.e20" / "status.json").read_text())
    assert kept["status"] == "finished"
    assert "queue done" in (tmp_path / "results" / "queue.log").read_text()


def test_the_highway_queue_runs_in_order_and_waits_for_the_lr_search(tmp_path):
    calls = _queue(tmp_path, HIGHWAY, body="exit 3", RETRY_WAITS="0 0")  # nothing finishes
    outs = _outs(calls)
    search = len(PAIRS)
    # Three tries per run and pass (RETRY_WAITS 0 0), two passes.
    per_pass = 3 * (search + 17)
    assert len(outs) == 2 * per_pass and outs[per_pass:] == outs[:per_pass]
    once = outs[:per_pass:3]
    assert once[:search] == [_search(act, lr) for act, lr in PAIRS]
    assert all("--validation-split 0.1" in c and "--epochs 10" in c and
               "--model-arg kernel_initializer=he_normal" in c for c in calls[:3 * search])
    # The search runs did not finish, so the full highway run waits.
    assert "highwayfc50.fashion_mnist" not in outs
    # Fig. 1: 4 depths x 2 lrs x (highway, plain), the plain nets 71 units without BN.
    fig1 = once[search:search + 16]
    assert [o.split(".")[1] for o in fig1[:4]] == ["highwayfc10", "plainnet10", "highwayfc10", "plainnet10"]
    assert fig1[15] == "hwfig1.plainnet100.lr0.03.e10"
    fig1_calls = calls[3 * search:3 * (search + 16)]
    assert all("--recipe highway_mnist_fc" in c and "--model-arg activation=tanh" in c for c in fig1_calls)
    assert all("--model-arg units=71" in c and "--model-arg batch_norm=False" in c
               for c in fig1_calls if "--model plainnet" in c)
    # Then the 100-layer highway net once more, with b_T = -4.
    assert once[search + 16] == "hwfig1b.highwayfc100.bT-4.lr0.01.e10"
    assert all(c.startswith("KERAS_BACKEND=jax ") and "--dataset fashion_mnist" in c for c in calls)
    assert not (tmp_path / "results" / _search("relu", "0.001")).exists()  # nothing kept


def test_recorded_runs_are_skipped_and_the_best_pair_is_used(tmp_path):
    results = tmp_path / "results"
    accuracies = (0.80, 0.81, 0.84, None, 0.2, 0.86, 0.86, 0.5)  # None: went NaN
    for (act, lr), acc in zip(PAIRS, accuracies):
        _record(results / _search(act, lr), "diverged" if acc is None else "finished", val_accuracy=acc)
    calls = _queue(tmp_path, HIGHWAY)
    assert not any(".val10" in c for c in calls)
    full = [c for c in calls if "highwayfc50.fashion_mnist" in c]
    # tanh ties at 0.003 and 0.01: the smaller lr wins. The stand-in finishes it (no
    # metrics: not failed), so it runs once.
    assert len(full) == 1 and "--lr 0.003" in full[0] and "--epochs 100" in full[0]
    assert "--model-arg activation=tanh" in full[0]
    pick = json.loads((results / "highwayfc50.search.json").read_text())
    assert pick["best"] == {"activation": "tanh", "lr": 0.003} and pick["runs"]["relu 0.03"] is None


def test_a_failed_run_is_retried_and_a_nan_run_kept_as_diverged(tmp_path):
    """A run that fails without a NaN (e.g. the library does not import) is tried again;
    one whose loss went NaN is kept as diverged and not retried."""
    body = ('case "$*" in *relu.lr0.1.val10*) '
            'echo "[train] stopped: the loss became NaN/inf"; exit 1;; esac; exit 1')
    calls = _queue(tmp_path, HIGHWAY, body=body, RETRY_WAITS="0 0", LR_SEARCH="0.01 0.1",
                   HIGHWAY_ACTIVATIONS="relu", FIG1_LRS="0.01")
    # 3 tries per pass, 2 passes; the NaN run once.
    assert sum("hwfig1.highwayfc10.lr0.01.e10" in c for c in calls) == 6
    assert sum("highwayfc50.he.relu.lr0.1.val10" in c for c in calls) == 1
    kept = tmp_path / "results" / "highwayfc50.he.relu.lr0.1.val10"
    assert json.loads((kept / "status.json").read_text())["status"] == "diverged"
    assert "loss became NaN" in (kept / "train.log").read_text()
    assert "give up on hwfig1.highwayfc10.lr0.01.e10" in (tmp_path / "results" / "queue.log").read_text()


def test_a_full_highway_run_at_chance_is_set_aside_and_the_next_pair_trained(tmp_path):
    results = tmp_path / "results"
    for (act, lr), acc in zip(PAIRS, (0.80, 0.81, 0.86, 0.2, 0.1, 0.85, 0.3, 0.1)):
        _record(results / _search(act, lr), val_accuracy=acc)
    # The stand-in "trains" the full run: at chance with lr 0.01, fine otherwise.
    body = ('case "$*" in *highwayfc50.fashion_mnist*)\n'
            '  out=$(echo "$*" | sed "s/.*--out \\([^ ]*\\).*/\\1/"); mkdir -p "$out"\n'
            '  case "$*" in *"--lr 0.01"*) acc=0.1;; *) acc=0.9;; esac\n'
            '  echo "{\\"test_accuracy\\": $acc}" > "$out/metrics.json";;\n'
            'esac; exit 0')
    calls = _queue(tmp_path, HIGHWAY, body=body)
    full = [c for c in calls if "highwayfc50.fashion_mnist" in c]
    assert ["--lr 0.01" in c for c in full] == [True, False]
    assert "--lr 0.003" in full[1] and "activation=tanh" in full[1]
    collapsed = results / "highwayfc50.relu.lr0.01.full.collapsed"
    assert json.loads((collapsed / "status.json").read_text())["status"] == "collapsed"
    assert json.loads((collapsed / "metrics.json").read_text())["test_accuracy"] == 0.1
    # The set-aside run's records are kept (above); its folder in flight is emptied.
    assert not (tmp_path / "runs" / "highwayfc50.relu.lr0.01.full.collapsed").exists()
    assert (tmp_path / "runs" / "highwayfc50.fashion_mnist" / "metrics.json").is_file()  # the release run's
    assert json.loads((results / "highwayfc50.fashion_mnist" / "metrics.json").read_text())["test_accuracy"] == 0.9
    assert json.loads((results / "highwayfc50.search.json").read_text())["failed_full_runs"] == ["relu 0.01"]


def test_a_held_full_highway_run_is_skipped(tmp_path):
    results = tmp_path / "results"
    for act, lr in PAIRS:
        _record(results / _search(act, lr), val_accuracy=0.8)
    _record(results / "highwayfc50.fashion_mnist", "held")
    calls = _queue(tmp_path, HIGHWAY)
    assert not any("highwayfc50.fashion_mnist" in c for c in calls)
    assert any("hwfig1.highwayfc10.lr0.01.e10" in c for c in calls)
    assert "held" in (results / "queue.log").read_text()


RG_SEEDS = ROOT / "experiments" / "residual_gates" / "seeds_queue.sh"
# A python that "trains" a run as training.train leaves it (its records and its last
# backup, epoch-<epochs>) or stops it with a NaN loss when DIVERGE names it, and answers
# `-c ... analyze ... --out DIR` by writing DIR/analysis.json.
TRAINER = r"""#!/bin/bash
arg() { local key=$1 prev="" a; shift; for a in "$@"; do [ "$prev" = "$key" ] && { echo "$a"; return; }; prev=$a; done; }
if [ "$1" = "-m" ]; then
  echo "KERAS_BACKEND=$KERAS_BACKEND $*" >> "$CALLS"
  out=$(arg --out "$@"); epochs=$(printf '%04d' "$(arg --epochs "$@")")
  case "$out" in *"/${DIVERGE:-none}") echo "[train] stopped: the loss became NaN/inf"; exit 1;; esac
  mkdir -p "$out/backup"; echo "epoch,loss" > "$out/log.csv"; echo "{}" > "$out/fingerprint.json"
  echo "{\"test_accuracy\": 0.9}" > "$out/metrics.json"
  echo "{\"epoch\": 1, \"weights\": \"epoch-$epochs.weights.h5\"}" > "$out/backup/latest.json"
  echo weights > "$out/backup/epoch-$epochs.weights.h5"; echo "epoch 1 done"; exit 0
fi
if [ "$1" = "-c" ]; then
  case " $* " in *" analyze "*) ;; *) exit 0;; esac  # the queue's own check that keras imports
  echo "analyze $*" >> "$ANALYSES"; out=$(arg --out "$@"); mkdir -p "$out"
  echo '{"removal": []}' > "$out/analysis.json"; echo "analysed"; exit 0
fi
exit 3
"""


def _seeds_queue(tmp_path, **extra) -> list[str]:
    python = tmp_path / "python"
    python.write_text(TRAINER)
    python.chmod(0o755)
    env = _env(tmp_path, python, CALLS=str(tmp_path / "calls"),
               ANALYSES=str(tmp_path / "analyses"), RETRY_WAITS="0 0", **extra)
    result = subprocess.run(["bash", str(RG_SEEDS)], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return (tmp_path / "calls").read_text().splitlines()


def test_the_residual_gates_seeds_queue_runs_the_table_then_fig5_and_empties_ended_runs(tmp_path):
    calls = _seeds_queue(tmp_path, SEEDS="0 1")
    outs = _outs(calls)
    cells = [f"rgtable.{family}{depth}.e20.t1.s{seed}" for seed in (0, 1)
             for depth in (2, 10, 20, 50, 100)
             for family in ("plainnet", "resnetfc", "gplainnet", "gresnetfc")]
    fig5 = [f"fig5.{model}.e100.s{seed}" for seed in (0, 1) for model in ("gresnetfc100", "resnetfc100")]
    preact = [f"rgtable.resnetfc{depth}.preact.e20.t1.s{seed}" for seed in (0, 1)
              for depth in (2, 10, 20, 50, 100)]
    assert outs == cells + fig5 + preact  # the second pass skips every finished run
    assert all("--recipe rg_mnist_fc" in c and c.startswith("KERAS_BACKEND=jax ") for c in calls)
    assert all("--epochs 20 --seed" in c for c in calls[:40] + calls[44:])
    assert all("--epochs 100 --seed" in c for c in calls[40:44])
    assert all("--model-arg preactivation=True" in c for c in calls[44:])
    assert not any("preactivation" in c for c in calls[:44])
    runs, results = tmp_path / "runs", tmp_path / "results"
    # An ended run's records are kept beside the experiment and its folder and log emptied.
    kept = results / "rgtable.gresnetfc50.e20.t1.s1"
    assert {p.name for p in kept.iterdir()} == {"log.csv", "fingerprint.json", "metrics.json",
                                               "train.log", "status.json"}
    assert "epoch 1 done" in (kept / "train.log").read_text()
    assert not (runs / kept.name).exists() and not (runs / "logs" / f"{kept.name}.log").exists()
    # Each Fig. 5 pair is analysed from its runs' last backups, then emptied too.
    analyses = (tmp_path / "analyses").read_text().splitlines()
    assert len(analyses) == 2 and "--twin resnetfc100" in analyses[0]
    assert f"--weights {runs}/fig5.gresnetfc100.e100.s0/backup/epoch-0100.weights.h5" in analyses[0]
    for seed in (0, 1):
        analysis = results / f"fig5.d100.e100.s{seed}"
        assert (analysis / "analysis.json").is_file() and "analysed" in (analysis / "analyze.log").read_text()
        assert not (runs / f"fig5.gresnetfc100.e100.s{seed}").exists()
        assert not (runs / f"fig5.resnetfc100.e100.s{seed}").exists()
        assert not (runs / f"analyze.fig5.d100.e100.s{seed}").exists()
    assert sorted(p.name for p in (runs / "logs").iterdir()) == ["queue.lock"]


def test_a_fig5_pair_with_a_diverged_run_is_not_analysed_and_is_emptied(tmp_path):
    _seeds_queue(tmp_path, SEEDS="0", DIVERGE="fig5.resnetfc100.e100.s0")
    runs, results = tmp_path / "runs", tmp_path / "results"
    assert json.loads((results / "fig5.resnetfc100.e100.s0" / "status.json").read_text())["status"] == "diverged"
    assert not (tmp_path / "analyses").exists() and not (results / "fig5.d100.e100.s0").exists()
    assert not (runs / "fig5.gresnetfc100.e100.s0").exists()
    assert "no analysis of seed 0: fig5.resnetfc100.e100.s0 ended (diverged)" in (results / "queue.log").read_text()


STOP = ROOT / "experiments" / "tools" / "stop_queues.sh"


def test_stop_queues_stops_this_checkouts_queues_and_runs_and_no_others(tmp_path):
    """A stand-in checkout with a "queue" and a "run" in it, and the same two in another
    folder: only the checkout's stop, and the script waits until they have exited."""
    checkout, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    (checkout / "experiments" / "tools").mkdir(parents=True)
    shutil.copy(STOP, checkout / "experiments" / "tools" / "stop_queues.sh")
    started = []
    for folder in (checkout, elsewhere):
        (folder / "experiments" / "demo").mkdir(parents=True, exist_ok=True)
        queue = folder / "experiments" / "demo" / "queue.sh"
        queue.write_text("sleep 300\n")
        started.append(subprocess.Popen(["bash", "experiments/demo/queue.sh"], cwd=folder))
        started.append(subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(300)", "-m", "training.train"], cwd=folder))
    try:
        result = subprocess.run(["bash", "experiments/tools/stop_queues.sh"], cwd=checkout,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and result.stdout.startswith("stopped:"), result.stderr
        assert [p.poll() is not None for p in started] == [True, True, False, False]
    finally:
        for process in started:
            process.kill()


HIGHWAY_SEEDS = ROOT / "experiments" / "highway" / "seeds_queue.sh"
# Each run "trains" to a held-out accuracy read from its name: the plain nets pick tanh at
# lr 0.003 at d = 50 and ReLU at lr 0.01 at d = 100.
PICKS = r"""out=""; prev=""; for a in "$@"; do [ "$prev" = --out ] && out=$a; prev=$a; done
mkdir -p "$out"; acc=0.5
case "$out" in *plainnet50.tanh.lr0.003.val10|*plainnet100.relu.lr0.01.val10) acc=0.8;; esac
echo "{\"val_accuracy\": $acc}" > "$out/metrics.json"; exit 0"""


def test_the_highway_seeds_queue_searches_the_plain_net_at_50_and_100_layers_before_section_c(tmp_path):
    calls = _queue(tmp_path, HIGHWAY_SEEDS, body=PICKS, SEEDS="0 1 2")
    outs = _outs(calls)
    search = lambda depth: [f"hwfig1s.plainnet{depth}.{act}.lr{lr}.val10" for act, lr in PAIRS]
    seeds = [f"hwfig1s.{family}50.s{seed}.e10" for seed in (0, 1, 2)
             for family in ("highwayfc", "plainnet")]
    assert outs == (search(50) + seeds + search(100)
                    + ["hwfig1s.highwayfc10.e100", "hwfig1s.highwayfc100.e100"])
    # Each plain search is the 100- or 50-layer plain net, 71 units without BN, a tenth held out.
    for call in calls[:8] + calls[14:22]:
        assert "--validation-split 0.1" in call and "--model-arg units=71" in call
    assert all("--model plainnet100 " in c for c in calls[14:22])
    # The seeded plain runs use the 50-layer pick; each pick is written for the claims table.
    assert "--lr 0.003" in calls[9] and "activation=tanh" in calls[9]
    results = tmp_path / "results"
    for depth, best in ((50, {"activation": "tanh", "lr": 0.003}),
                        (100, {"activation": "relu", "lr": 0.01})):
        picked = json.loads((results / f"hwfig1s.plainnet{depth}.search.json").read_text())
        assert picked["best"] == best and len(picked["runs"]) == 8


def _held(path: Path) -> bool:
    return path.exists() and subprocess.run(["flock", "-n", str(path), "true"]).returncode != 0


def test_a_second_queue_takes_only_the_runs_it_names_and_leaves_a_run_another_process_holds(tmp_path):
    script = ROOT / "experiments" / "releases" / "queue.sh"
    logs, held_run = tmp_path / "runs" / "logs", tmp_path / "runs" / "release.gresnet20.e100"
    logs.mkdir(parents=True)
    held_run.mkdir()
    # Another queue of the paper holds its lock; another process trains the gresnet20 run.
    holder = subprocess.Popen(["flock", str(logs / "queue.lock"),
                               "flock", str(held_run / "run.lock"), "sleep", "120"])
    try:
        for _ in range(100):
            if _held(logs / "queue.lock") and _held(held_run / "run.lock"):
                break
            time.sleep(0.05)
        refused = subprocess.run(["bash", str(script)], env=_env(tmp_path, _stand_in(tmp_path)),
                                 capture_output=True, text=True, timeout=300)
        assert refused.returncode == 1 and "ONLY=<glob>" in refused.stderr
        assert not (tmp_path / "calls").exists()
        calls = _queue(tmp_path, script, ONLY="release.*")
    finally:
        holder.kill()
        holder.wait()
    assert _outs(calls) == ["release.preactresnet20.e100"]
    log = (tmp_path / "results" / "queue.log").read_text()
    assert "skip release.gresnet20.e100: another process is training it" in log
    assert not (tmp_path / "results" / "release.gresnet20.e100").exists()
