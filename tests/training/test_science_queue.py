"""training/science_queue.sh (order, skipping finished runs, the lr pick) and
training/science_report.py, with a stand-in for python -m training.train."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from training import science_report

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "training" / "science_queue.sh"
LRS = ("0.001", "0.003", "0.01", "0.03")
ACTS = ("relu", "tanh")
PAIRS = [(act, lr) for act in ACTS for lr in LRS]  # the search, in the queue's order


def _search(act: str, lr: str) -> str:
    return f"highwayfc50.he.{act}.lr{lr}.val10"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("flock") is None,
                                reason="needs bash and flock")


def _queue(tmp_path, runs, logs):
    """Run the queue with a python that answers `-m training.train` by logging its args."""
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/bash\nif [ "$1" = "-m" ]; then echo "KERAS_BACKEND=$KERAS_BACKEND $*" >> {tmp_path}/calls; exit 0; fi\n'
                    f'exec {sys.executable} "$@"\n')
    fake.chmod(0o755)
    env = {"SCIENCE_RUNS": str(runs), "LOG_DIR": str(logs), "PYTHON": str(fake),
           "PATH": "/usr/bin:/bin"}
    result = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    calls = tmp_path / "calls"
    return calls.read_text().splitlines() if calls.exists() else []


def _finish(folder: Path, **metrics):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.json").write_text(json.dumps({"command": "c", "val_split": "v", **metrics}))


def test_the_queue_runs_in_order_and_waits_for_the_lr_search(tmp_path):
    calls = _queue(tmp_path, tmp_path / "runs", tmp_path / "logs")
    outs = [c.split("--out ")[1].split()[0].rsplit("/", 1)[1] for c in calls]
    assert outs[0] == "gplainnet50.fashion_mnist" and "--model-arg k_init=0.5" in calls[0]
    search = len(PAIRS)
    assert outs[1:1 + search] == [_search(act, lr) for act, lr in PAIRS]
    assert all("--validation-split 0.1" in c and "--epochs 10" in c and
               "--model-arg kernel_initializer=he_normal" in c for c in calls[1:1 + search])
    assert "--model-arg activation=tanh" in calls[search]
    # The search runs did not finish (stand-in), so the full highway run waits.
    assert "highwayfc50.fashion_mnist" not in outs
    table = 1 + search + 20 + 8
    assert outs[1 + search] == "rgtable.plainnet2.e20" and outs[table - 1] == "rgtable.gresnetfc100.k0.5.e20"
    # Highway Fig. 1: 4 depths x 2 lrs x (highway, plain), the plain nets 71 units without BN.
    fig1 = calls[table:table + 16]
    assert [o.split(".")[1] for o in outs[table:table + 4]] == [
        "highwayfc10", "plainnet10", "highwayfc10", "plainnet10"]
    assert outs[table + 15] == "hwfig1.plainnet100.lr0.03.e10"
    assert all("--recipe highway_mnist_fc" in c and "--model-arg activation=tanh" in c for c in fig1)
    assert all("--model-arg units=71" in c and "--model-arg batch_norm=False" in c
               for c in fig1 if "--model plainnet" in c)
    # Then the 100-layer highway net once more, with b_T = -4.
    assert outs[table + 16] == "hwfig1b.highwayfc100.bT-4.lr0.01.e10"
    assert "--model-arg transform_bias=-4" in calls[table + 16]
    # Table 7: the no-BN Wide ResNets on CIFAR-10, at the paper's lr, then the follow-ups.
    n = table + 17 + 11
    assert outs[n - 11:n] == ["table7.gwrn_16_2_nobn.e5", "table7.wrn_16_2_nobn.e5",
                             "table7.gwrn_16_2_nobn.k0.5.e5", "table7.wrn_16_2_nobn.lr0.01.e5",
                             "table7.gwrn_16_2_nobn.lr0.01.e5", "table7.gwrn_16_2_nobn.k0.1.lr0.1.e5",
                             "table7.gwrn_16_2_nobn.k0.1.lr0.01.e5",
                             "table7.wrn_16_2_nobn.clip1.e5", "table7.gwrn_16_2_nobn.clip1.e5",
                             "table7.wrn_16_2_nobn.clip1.seed1.e5", "table7.gwrn_16_2_nobn.clip1.seed1.e5"]
    assert all("--dataset cifar10" in c and "--model-arg batch_norm=False" in c
               for c in calls[n - 11:n])
    # The last four clip the gradient, all at the paper's lr and k; the last two with seed 1.
    assert all("--clip-norm 1" in c and "--lr" not in c and "k_init" not in c for c in calls[n - 4:n])
    assert all("--seed 1" in c for c in calls[n - 2:n]) and "--seed" not in calls[n - 3]
    # The convolutional nets train on TensorFlow, the FC nets on JAX.
    assert all(c.startswith("KERAS_BACKEND=tensorflow ") for c in calls[n - 11:n])
    assert all(c.startswith("KERAS_BACKEND=jax ") for c in calls[:n - 11])
    # The stand-in finishes nothing: the second pass walks the same list again.
    assert len(outs) == 2 * n and outs[n:] == outs[:n]
    assert all("--dataset fashion_mnist" in c for c in calls[:n - 11])
    assert all("--verbose 2" in c for c in calls)


def test_finished_runs_are_skipped_and_the_best_pair_is_used(tmp_path):
    runs, logs = tmp_path / "runs", tmp_path / "logs"
    _finish(runs / "gplainnet50.fashion_mnist")
    accuracies = (0.80, 0.81, 0.84, None, 0.2, 0.86, 0.86, 0.5)  # None: went NaN
    logs.mkdir()
    for (act, lr), acc in zip(PAIRS, accuracies):
        if acc is None:
            (logs / f"{_search(act, lr)}.nan").write_text("diverged")
        else:
            _finish(runs / _search(act, lr), val_accuracy=acc)
    calls = _queue(tmp_path, runs, logs)
    assert not any("gplainnet50.fashion_mnist" in c or ".val10" in c for c in calls)
    full = [c for c in calls if "highwayfc50.fashion_mnist" in c]
    # tanh ties at 0.003 and 0.01: the smaller lr wins.
    assert len(full) == 2 and "--lr 0.003" in full[0] and "--epochs 100" in full[0]
    assert "--model-arg activation=tanh" in full[0]
    pick = json.loads((runs / "highwayfc50.search.json").read_text())
    assert pick["best"] == {"activation": "tanh", "lr": 0.003} and pick["runs"]["relu 0.03"] is None


def test_a_failed_run_is_retried_then_left_for_the_second_pass(tmp_path):
    """A run that fails without a NaN (e.g. the library does not import) is tried again;
    one whose loss went NaN is marked and not retried."""
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/bash\nif [ "$1" = "-m" ]; then echo "KERAS_BACKEND=$KERAS_BACKEND $*" >> {tmp_path}/calls;\n'
                    'case "$*" in *relu.lr0.1.val10*) echo "[train] stopped: the loss became NaN/inf"; '
                    'exit 1;; esac; exit 1; fi\n'
                    f'exec {sys.executable} "$@"\n')
    fake.chmod(0o755)
    env = {"SCIENCE_RUNS": str(tmp_path / "runs"), "LOG_DIR": str(tmp_path / "logs"),
           "PYTHON": str(fake), "PATH": "/usr/bin:/bin", "RETRY_WAITS": "0 0", "LR_SEARCH": "0.01 0.1",
           "HIGHWAY_ACTIVATIONS": "relu"}
    result = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    # 3 tries per pass, 2 passes; the NaN run once.
    assert sum("gplainnet50.fashion_mnist" in c for c in calls) == 6
    assert sum("highwayfc50.he.relu.lr0.1.val10" in c for c in calls) == 1
    assert (tmp_path / "logs" / "highwayfc50.he.relu.lr0.1.val10.nan").is_file()
    assert "give up on gplainnet50.fashion_mnist" in (tmp_path / "logs" / "queue.log").read_text()


def test_report_rows(tmp_path):
    folder = tmp_path / "rgtable.gplainnet2.e20"
    folder.mkdir()
    (folder / "gates.csv").write_text("epoch,block,k,g_k\n0,block1,1,1\n0,block2,1,1\n"
                                      "1,block1,0.5,0.5\n1,block2,1.5,1.5\n")
    (folder / "log.csv").write_text("epoch,accuracy\n0,0.5\n1,0.6\n")
    row = science_report.report(folder, re_evaluate=False)
    assert row["status"] == "running (2 epochs logged)" and row["mean_k"] == 1.0 and row["k_epoch"] == 2
    assert science_report.markdown(row).startswith("| `rgtable.gplainnet2.e20` | running")
    _finish(folder, test_accuracy=0.8712, epochs=20, model="gplainnet2")
    (folder / "backup").mkdir()
    (folder / "backup" / "latest.json").write_text('{"epoch": 20, "weights": "epoch-0020.weights.h5"}')
    row = science_report.report(folder, re_evaluate=False)
    assert row["evaluate_command"].endswith("backup/epoch-0020.weights.h5 --dataset fashion_mnist")
    assert "| 87.12 % | 12.88 % | 1.00 | `c` |" in science_report.markdown(row)
    assert science_report.report(tmp_path / "none", re_evaluate=False)["status"] == "not started"
    # A run stopped by a NaN loss says so, not "running".
    nan_run = tmp_path / "table7.gwrn_16_2_nobn.e5"
    nan_run.mkdir()
    (nan_run / "log.csv").write_text("epoch,accuracy,loss\n0,0.1,nan\n")
    (nan_run / "gates.csv").write_text("epoch,block,k,g_k\n0,block1,nan,nan\n")
    diverged = science_report.report(nan_run, re_evaluate=False)
    assert diverged["status"].startswith("diverged (loss NaN/inf in epoch 1")
    assert science_report.k_cell(diverged) == "—"
    # A run on another data set, with constructor arguments: evaluated the same way.
    cifar = tmp_path / "table7.wrn_16_2_nobn.e5"
    _finish(cifar, test_accuracy=0.1, epochs=5, model="wrn_16_2",
            command="python -m training.train --model wrn_16_2 --dataset cifar10",
            model_args={"batch_norm": False, "activation": "tanh"})
    (cifar / "backup").mkdir()
    (cifar / "backup" / "latest.json").write_text('{"epoch": 5, "weights": "epoch-0005.weights.h5"}')
    command = science_report.report(cifar, re_evaluate=False)["evaluate_command"]
    assert command.endswith("epoch-0005.weights.h5 --dataset cifar10 "
                            "--model-arg batch_norm=False --model-arg activation=tanh")


def test_update_fills_the_ours_columns_of_the_rows_that_name_a_run(tmp_path):
    done = tmp_path / "rgtable.gplainnet2.e20"
    done.mkdir()
    (done / "gates.csv").write_text("epoch,block,k,g_k\n0,block1,0.5,0.5\n0,block2,1.5,1.5\n")
    _finish(done, test_accuracy=0.8712, epochs=20, model="gplainnet2")
    doc = "\n".join([
        "Rows (status as of 2000-01-01 00:00 UTC).",
        "",
        "| d | net | paper: mean k | ours: test error (F-MNIST) | ours: mean k | command |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| 2 | G-PlainNet-2 | 10.57 | queued | — | `python -m training.train --out {done}` |",
        f"| 2 | G-ResNet-2 | 5.58 | queued | — | `python -m training.train --out {tmp_path / 'rgtable.gresnetfc2.e20'}` |",
        "| 2 | elsewhere | 1 | 9 % | 2 | `python -m training.train --out /other/run` |",
        "",
    ])
    updated = science_report.update_document(doc, tmp_path, re_evaluate=False, now="NOW")
    lines = updated.splitlines()
    assert lines[0] == "Rows (status as of NOW)."
    assert lines[4].startswith("| 2 | G-PlainNet-2 | 10.57 | 12.88 % (87.12 % acc.) | 1.00 | `")
    assert lines[5].startswith("| 2 | G-ResNet-2 | 5.58 | not started | — | `")
    assert lines[6] == doc.splitlines()[6]  # a run elsewhere is left alone
    assert lines[2:4] == doc.splitlines()[2:4]


def test_update_fills_the_best_training_loss_of_highway_fig1_rows(tmp_path):
    done, running = tmp_path / "hwfig1.plainnet10.lr0.01.e10", tmp_path / "hwfig1.plainnet20.lr0.01.e10"
    for folder in (done, running):
        folder.mkdir()
    (done / "log.csv").write_text("epoch,accuracy,loss\n0,0.5,0.9\n1,0.6,0.31\n2,0.6,nan\n3,0.6,0.4\n")
    (running / "log.csv").write_text("epoch,accuracy,loss\n0,0.5,1.5\n")
    _finish(done, test_accuracy=0.85, epochs=4, model="plainnet10")
    doc = "\n".join([
        "| d | net | ours: best training loss | ours: test error | command |",
        "| --- | --- | --- | --- | --- |",
        f"| 10 | plain | queued | queued | `python -m training.train --out {done}` |",
        f"| 20 | plain | queued | queued | `python -m training.train --out {running}` |",
        "",
    ])
    lines = science_report.update_document(doc, tmp_path, re_evaluate=False, now="NOW").splitlines()
    assert lines[2].startswith("| 10 | plain | 0.3100 (epoch 2) | 15.00 % (85.00 % acc.) | `")
    assert lines[3].startswith("| 20 | plain | 1.5000 (epoch 1); running (1 epochs logged) | running")


def test_a_full_highway_run_at_chance_is_set_aside_and_the_next_pair_trained(tmp_path):
    runs, logs = tmp_path / "runs", tmp_path / "logs"
    _finish(runs / "gplainnet50.fashion_mnist")
    for (act, lr), acc in zip(PAIRS, (0.80, 0.81, 0.86, 0.2, 0.1, 0.85, 0.3, 0.1)):
        _finish(runs / _search(act, lr), val_accuracy=acc)
    # The stand-in "trains" the full run: at chance with lr 0.005, fine otherwise.
    fake = tmp_path / "python"
    fake.write_text(
        '#!/bin/bash\nif [ "$1" = "-m" ]; then echo "$*" >> ' + str(tmp_path / "calls") + '\n'
        'case "$*" in *highwayfc50.fashion_mnist*)\n'
        '  out=$(echo "$*" | sed "s/.*--out \\([^ ]*\\).*/\\1/"); mkdir -p "$out"\n'
        '  case "$*" in *"--lr 0.01"*) acc=0.1;; *) acc=0.9;; esac\n'
        '  echo "{\\"test_accuracy\\": $acc}" > "$out/metrics.json"; echo trained >> "$out/../log-$acc";;\n'
        'esac; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n')
    fake.chmod(0o755)
    env = {"SCIENCE_RUNS": str(runs), "LOG_DIR": str(logs), "PYTHON": str(fake), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    full = [c for c in (tmp_path / "calls").read_text().splitlines() if "highwayfc50.fashion_mnist" in c]
    assert ["--lr 0.01" in c for c in full] == [True, False]
    assert "--lr 0.003" in full[1] and "activation=tanh" in full[1]
    assert (runs / "highwayfc50.relu.lr0.01.full.collapsed" / "metrics.json").is_file()
    assert json.loads((runs / "highwayfc50.fashion_mnist" / "metrics.json").read_text())["test_accuracy"] == 0.9
    assert (logs / "highwayfc50.full.relu.lr0.01.failed").is_file()
    assert json.loads((runs / "highwayfc50.search.json").read_text())["failed_full_runs"] == ["relu 0.01"]


def test_a_held_full_highway_run_is_skipped(tmp_path):
    runs, logs = tmp_path / "runs", tmp_path / "logs"
    for act, lr in PAIRS:
        _finish(runs / _search(act, lr), val_accuracy=0.8)
    logs.mkdir()
    (logs / "highwayfc50.full.hold").write_text("collapsed; fix the recipe first")
    calls = _queue(tmp_path, runs, logs)
    assert not any("highwayfc50.fashion_mnist" in c for c in calls)
    assert any("rgtable.plainnet2.e20" in c for c in calls)
    assert "held" in (logs / "queue.log").read_text()


def test_highway_fig1_picks_the_lr_with_the_lowest_training_loss_and_plots(tmp_path):
    from training import highway_fig1

    curves = {"hwfig1.highwayfc10.lr0.01.e3": "0.5\n0.2\n0.1",
              "hwfig1.highwayfc10.lr0.03.e3": "0.4\n0.15\n0.05",
              "hwfig1.plainnet10.lr0.01.e3": "0.9\n0.8\n0.7",
              "hwfig1.plainnet10.lr0.03.e3": "0.6\nnan\nnan",
              "hwfig1.plainnet20.lr0.01.e3": "2.3\n2.3\n2.3",
              "hwfig1b.highwayfc10.bT-4.lr0.01.e3": "0.3\n0.02\n0.01"}
    for name, losses in curves.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "log.csv").write_text(
            "epoch,loss\n" + "\n".join(f"{i},{x}" for i, x in enumerate(losses.split())) + "\n")
    out = tmp_path / "figures"
    assert highway_fig1.main(["--root", str(tmp_path), "--out", str(out)]) == 0
    summary = json.loads((out / "highway_fig1.json").read_text())
    picked = {(r["family"], r["depth"]): r["lr"] for r in summary if r["picked"]}
    # The diverged plain run keeps its finite epochs (0.6 < 0.7) and wins.
    assert picked == {("highwayfc", 10): "0.03", ("plainnet", 10): "0.03", ("plainnet", 20): "0.01"}
    # A follow-up with another b_T is reported beside them, never picked.
    follow = [r for r in summary if r.get("follow_up")]
    assert [(r["depth"], r["transform_bias"], r["lr"], r["best_training_loss"]) for r in follow] == [
        (10, -4.0, "0.01", 0.01)]
    assert (out / "highway_fig1.png").stat().st_size > 10_000
    with pytest.raises(SystemExit):
        highway_fig1.main(["--root", str(tmp_path / "empty"), "--out", str(out)])


def test_table7_fig_reads_settings_divergence_and_gates_and_plots(tmp_path):
    from training import table7_fig

    def write(name, losses, accuracies, gates=None):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "log.csv").write_text("epoch,accuracy,loss,val_accuracy,val_loss\n" + "".join(
            f"{i},0.3,{loss},{acc},2.0\n" for i, (loss, acc) in enumerate(zip(losses, accuracies))))
        if gates:
            (folder / "gates.csv").write_text("epoch,block,k,g_k\n" + "".join(
                f"{epoch},{block},{k},{max(float(k), 0)}\n" for epoch, block, k in gates))

    write("table7.wrn_16_2_nobn.e5", ["nan"], [0.1])
    write("table7.gwrn_16_2_nobn.k0.5.e5", ["nan"], [0.1], [(0, "stage1_unit1", "nan")])
    write("table7.gwrn_16_2_nobn.warmup3.e5", [2.0], [0.5])  # a setting the figure cannot name
    write("table7.gwrn_16_2_nobn.k0.1.lr0.01.e5", [2.5, 2.3], [0.33, 0.37],
          [(0, "stage1_unit1", -0.2), (0, "stage1_unit2", 0.4), (1, "stage1_unit1", -0.2),
           (1, "stage1_unit2", 0.3)])
    write("table7.gwrn_16_2_nobn.clip1.seed1.e5", [3.0, 2.0, "inf"], [0.2, 0.4, 0.1],
          [(0, "stage1_unit1", 0.5), (1, "stage1_unit1", 0.4), (2, "stage1_unit1", "nan")])
    (tmp_path / "table7.wrn_16_2_nobn.clip1.e5").mkdir()  # started, nothing logged yet
    out = tmp_path / "figures"
    assert table7_fig.main(["--root", str(tmp_path), "--out", str(out)]) == 0
    def no_nan(text):
        raise AssertionError(f"{text} in table7.json: not JSON")

    runs = {r["run"]: r for r in json.loads((out / "table7.json").read_text(), parse_constant=no_nan)}
    assert set(runs) == {"table7.wrn_16_2_nobn.e5", "table7.gwrn_16_2_nobn.k0.1.lr0.01.e5",
                         "table7.gwrn_16_2_nobn.clip1.seed1.e5", "table7.gwrn_16_2_nobn.k0.5.e5"}
    assert runs["table7.gwrn_16_2_nobn.k0.5.e5"]["k_last_epoch"] == {"stage1_unit1": None}
    assert runs["table7.wrn_16_2_nobn.e5"]["diverged_in_epoch"] == 1
    assert runs["table7.wrn_16_2_nobn.e5"]["test_accuracy"] == []
    k01 = runs["table7.gwrn_16_2_nobn.k0.1.lr0.01.e5"]
    assert k01["settings"] == {"k": "0.1", "lr": "0.01"} and k01["diverged_in_epoch"] is None
    assert k01["test_accuracy"] == [0.33, 0.37]
    assert k01["k_last_epoch"] == {"stage1_unit1": -0.2, "stage1_unit2": 0.3}
    # A run that diverges later keeps its finite epochs.
    clipped = runs["table7.gwrn_16_2_nobn.clip1.seed1.e5"]
    assert clipped["settings"] == {"clip": "1", "seed": "1"} and clipped["diverged_in_epoch"] == 3
    assert clipped["test_accuracy"] == [0.2, 0.4]
    gates = table7_fig.gate_curves(tmp_path / "table7.gwrn_16_2_nobn.k0.1.lr0.01.e5")
    assert gates == {"stage1_unit1": [-0.2, -0.2], "stage1_unit2": [0.4, 0.3]}
    assert (out / "table7.png").stat().st_size > 10_000
    with pytest.raises(SystemExit):
        table7_fig.main(["--root", str(tmp_path / "empty"), "--out", str(out)])
