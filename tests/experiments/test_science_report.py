"""experiments.tools.science_report: where a run stands, read from its records, and the
ours-columns of docs/science.md filled from them."""

import json
from pathlib import Path

from experiments.tools import records, science_report


def _finish(folder: Path, **metrics):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.json").write_text(json.dumps({"command": "c", "val_split": "v", **metrics}))


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


def test_a_run_in_flight_is_read_from_its_kept_records(tmp_path):
    out = tmp_path / "experiments" / "in_flight" / "highway" / "hwfig1.plainnet10.lr0.01.e10"
    kept = tmp_path / "experiments" / "highway" / "results" / "hwfig1.plainnet10.lr0.01.e10"
    assert records.results_folder(out) == kept
    assert records.results_folder(tmp_path / "elsewhere") == tmp_path / "elsewhere"
    collapsed = kept.parent / "highwayfc50.lr0.003.full.collapsed"
    collapsed.mkdir(parents=True)
    (collapsed / "status.json").write_text('{"status": "collapsed"}')
    (collapsed / "log.csv").write_text("epoch,loss\n0,2.3\n1,14.5\n")
    row = science_report.report(out.parent / collapsed.name, re_evaluate=False)
    assert row["status"].startswith("collapsed") and row["best_loss"] == 2.3
    _finish(kept, test_accuracy=0.85, epochs=10, model="plainnet10")
    (out / "backup").mkdir(parents=True)  # the weights stay where the run trained
    (out / "backup" / "latest.json").write_text('{"epoch": 10, "weights": "epoch-0010.weights.h5"}')
    row = science_report.report(out, re_evaluate=False)
    assert row["status"] == "finished" and row["folder"] == str(kept)
    assert f"--weights {out}/backup/epoch-0010.weights.h5" in row["evaluate_command"]


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


def test_docs_science_is_what_the_kept_records_say(monkeypatch):
    """Rewriting docs/science.md from the kept records changes nothing but the date: every
    ours-cell is backed by a record in experiments/<paper>/results/."""
    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "science.md").read_text()
    monkeypatch.chdir(root)
    updated = science_report.update_document(doc, Path(science_report.DEFAULT_ROOT),
                                             re_evaluate=False, now="NOW")
    assert "experiments/in_flight/" in doc
    changed = [(a, b) for a, b in zip(doc.splitlines(), updated.splitlines()) if a != b]
    assert [a for a, b in changed if "(status as of" not in a] == []


def test_re_evaluating_a_run_whose_weights_were_not_kept_says_so(tmp_path, capsys):
    folder = tmp_path / "rgtable.gresnetfc2.e20.t1.s1"
    _finish(folder, test_accuracy=0.8712, epochs=20, model="gresnetfc2")
    row = science_report.report(folder, re_evaluate=True)
    assert row["evaluated_accuracy"] is None and "evaluate_command" not in row
    assert "weights not kept" in capsys.readouterr().err
    assert "| 87.12 % | 12.88 % |" in science_report.markdown(row)  # the recorded number
