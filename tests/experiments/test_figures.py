"""The paper figures drawn from run records: the settings come from each run's
fingerprint.json, never from its folder name."""

import json
from pathlib import Path

import pytest

from experiments.highway import highway_fig1
from experiments.residual_gates import analysis_figures, fig3_train_loss, fig5_seeds, table1_fig, table7_fig

ROOT = Path(__file__).resolve().parents[2]


def _fingerprint(folder: Path, model: str, recipe: str, epochs: int, **settings):
    folder.mkdir(parents=True, exist_ok=True)
    recorded = {"model": model, "dataset": settings.pop("dataset", "fashion_mnist"),
                "recipe": {"name": recipe}, "epochs": epochs, "seed": settings.pop("seed", 0),
                "model_args": settings.pop("model_args", {}), "validation_split": None,
                "lr": None, "clip_norm": None, **settings}
    (folder / "fingerprint.json").write_text(json.dumps(recorded))


def test_highway_fig1_picks_the_lr_with_the_lowest_training_loss_and_plots(tmp_path):
    tanh = {"kernel_initializer": "he_normal", "activation": "tanh"}
    runs = {  # folder: (model, lr, b_T, losses); the folder names say nothing
        "a": ("highwayfc10", 0.01, -2, "0.5 0.2 0.1"),
        "b": ("highwayfc10", 0.03, -2, "0.4 0.15 0.05"),
        "c": ("plainnet10", 0.01, None, "0.9 0.8 0.7"),
        "d": ("plainnet10", 0.03, None, "0.6 nan nan"),
        "e": ("plainnet20", 0.01, None, "2.3 2.3 2.3"),
        "f": ("highwayfc10", 0.01, -4, "0.3 0.02 0.01"),
    }
    for name, (model, lr, bias, losses) in runs.items():
        model_args = {**tanh, **({"transform_bias": bias} if bias is not None else {})}
        _fingerprint(tmp_path / name, model, "highway_mnist_fc", 3, lr=lr, model_args=model_args)
        (tmp_path / name / "log.csv").write_text(
            "epoch,loss\n" + "\n".join(f"{i},{x}" for i, x in enumerate(losses.split())) + "\n")
    # Not Fig. 1 runs: another epoch count, a held-out split.
    _fingerprint(tmp_path / "g", "highwayfc10", "highway_mnist_fc", 100, lr=0.01, model_args=tanh)
    _fingerprint(tmp_path / "h", "highwayfc10", "highway_mnist_fc", 3, lr=0.1, model_args=tanh,
                 validation_split=0.1)
    # Nor is a seeded re-run of a picked setting (seeds_queue.sh's hwfig1s.*).
    _fingerprint(tmp_path / "hwfig1s.plainnet20.s0.e3", "plainnet20", "highway_mnist_fc", 3,
                 lr=0.03, model_args=tanh)
    # Nor a re-run of a sweep setting from independent initial weights (reported apart).
    _fingerprint(tmp_path / "reinit.hwfig1.highwayfc10.lr0.03.e3", "highwayfc10", "highway_mnist_fc", 3,
                 lr=0.03, model_args={**tanh, "transform_bias": -2})
    for name in ("g", "h", "hwfig1s.plainnet20.s0.e3", "reinit.hwfig1.highwayfc10.lr0.03.e3"):
        (tmp_path / name / "log.csv").write_text("epoch,loss\n0,0.001\n")
    # A search of plain-10 on a held-out tenth (activation x lr), and its pick's run.
    (tmp_path / "hwfig1s.plainnet10.search.json").write_text(
        json.dumps({"best": {"activation": "relu", "lr": 0.003}}))
    _fingerprint(tmp_path / "i", "plainnet10", "highway_mnist_fc", 3, lr=0.003, validation_split=0.1,
                 model_args={"kernel_initializer": "he_normal", "activation": "relu"})
    (tmp_path / "i" / "log.csv").write_text("epoch,loss\n0,0.8\n1,0.5\n2,0.4\n")
    _fingerprint(tmp_path / "j", "plainnet10", "highway_mnist_fc", 3, lr=0.01, validation_split=0.1,
                 model_args={"kernel_initializer": "he_normal", "activation": "relu"})  # not the pick
    (tmp_path / "j" / "log.csv").write_text("epoch,loss\n0,0.1\n")
    out = tmp_path / "figures"
    assert highway_fig1.main(["--root", str(tmp_path), "--out", str(out), "--epochs", "3"]) == 0
    summary = json.loads((out / "highway_fig1.json").read_text())
    picked = {(r["family"], r["depth"]): r["lr"] for r in summary if r["picked"]}
    # The diverged plain run keeps its finite epochs (0.6 < 0.7) and wins the sweep.
    assert picked == {("highwayfc", 10): "0.03", ("plainnet", 10): "0.03", ("plainnet", 20): "0.01"}
    # A follow-up with another b_T is reported beside them, never the sweep's pick.
    follow = [r for r in summary if r.get("follow_up")]
    assert [(r["depth"], r["transform_bias"], r["lr"], r["best_training_loss"]) for r in follow] == [
        (10, -4.0, "0.01", 0.01)]
    # What is drawn is each family's fairest evidence: its seeded re-runs, else its search's
    # pick, else the sweep's lowest loss, a highway follow-up b_T included.
    drawn = {(r["family"], r["depth"]): (r["role"], r["lr"], r.get("activation"))
             for r in summary if r["drawn"]}
    assert drawn == {("highwayfc", 10): ("follow_up", "0.01", "tanh"),
                     ("plainnet", 10): ("searched", "0.003", "relu"),
                     ("plainnet", 20): ("seeded", "0.03", "tanh")}
    assert sorted(r["role"] for r in summary) == ["follow_up", "searched", "seeded"] + ["sweep"] * 5
    assert (out / "highway_fig1.png").stat().st_size > 10_000
    with pytest.raises(SystemExit):
        highway_fig1.main(["--root", str(tmp_path / "empty"), "--out", str(out)])


def test_table7_fig_reads_settings_divergence_and_gates_and_plots(tmp_path):
    def write(name, model, losses, accuracies, gates=None, **settings):
        folder = tmp_path / name
        settings["model_args"] = {"batch_norm": False, **settings.get("model_args", {})}
        _fingerprint(folder, model, "wrn_cifar", 5, dataset="cifar10", **settings)
        (folder / "log.csv").write_text("epoch,accuracy,loss,val_accuracy,val_loss\n" + "".join(
            f"{i},0.3,{loss},{acc},2.0\n" for i, (loss, acc) in enumerate(zip(losses, accuracies))))
        if gates:
            (folder / "gates.csv").write_text("epoch,block,k,g_k\n" + "".join(
                f"{epoch},{block},{k},{max(float(k), 0)}\n" for epoch, block, k in gates))

    write("run1", "wrn_16_2", ["nan"], [0.1])
    write("run2", "gwrn_16_2", ["nan"], [0.1], [(0, "stage1_unit1", "nan")], model_args={"k_init": 0.5})
    write("run3", "gwrn_16_2", [2.0], [0.5], model_args={"warmup": 3})  # a setting the figure cannot name
    write("run4", "gwrn_16_2", [2.5, 2.3], [0.33, 0.37],
          [(0, "stage1_unit1", -0.2), (0, "stage1_unit2", 0.4), (1, "stage1_unit1", -0.2),
           (1, "stage1_unit2", 0.3)], model_args={"k_init": 0.1}, lr=0.01)
    write("run5", "gwrn_16_2", [3.0, 2.0, "inf"], [0.2, 0.4, 0.1],
          [(0, "stage1_unit1", 0.5), (1, "stage1_unit1", 0.4), (2, "stage1_unit1", "nan")],
          clip_norm=1.0, seed=1)
    _fingerprint(tmp_path / "run6", "wrn_16_2", "wrn_cifar", 5, dataset="cifar10",
                 model_args={"batch_norm": False})  # started, nothing logged yet
    out = tmp_path / "figures"
    assert table7_fig.main(["--root", str(tmp_path), "--out", str(out)]) == 0

    def no_nan(text):
        raise AssertionError(f"{text} in table7.json: not JSON")

    runs = {r["run"]: r for r in json.loads((out / "table7.json").read_text(), parse_constant=no_nan)}
    assert set(runs) == {"run1", "run2", "run4", "run5"}
    assert runs["run2"]["k_last_epoch"] == {"stage1_unit1": None}
    assert runs["run2"]["settings"] == {"k": "0.5"}
    assert runs["run1"]["diverged_in_epoch"] == 1 and runs["run1"]["test_accuracy"] == []
    assert runs["run1"]["settings"] == {} and runs["run1"]["family"] == "wrn"
    k01 = runs["run4"]
    assert k01["settings"] == {"k": "0.1", "lr": "0.01"} and k01["diverged_in_epoch"] is None
    assert k01["test_accuracy"] == [0.33, 0.37]
    assert k01["k_last_epoch"] == {"stage1_unit1": -0.2, "stage1_unit2": 0.3}
    # A run that diverges later keeps its finite epochs.
    clipped = runs["run5"]
    assert clipped["settings"] == {"clip": "1", "seed": "1"} and clipped["diverged_in_epoch"] == 3
    assert clipped["test_accuracy"] == [0.2, 0.4]
    gates = table7_fig.gate_curves(tmp_path / "run4")
    assert gates == {"stage1_unit1": [-0.2, -0.2], "stage1_unit2": [0.4, 0.3]}
    assert (out / "table7.png").stat().st_size > 10_000
    with pytest.raises(SystemExit):
        table7_fig.main(["--root", str(tmp_path / "empty"), "--out", str(out)])


def test_rg_fig3_reads_the_four_families_by_depth_from_their_fingerprints(tmp_path):
    def run(name, model, losses, **settings):
        _fingerprint(tmp_path / name, model, "rg_mnist_fc", len(losses), **settings)
        (tmp_path / name / "log.csv").write_text(
            "epoch,loss\n" + "".join(f"{i},{v}\n" for i, v in enumerate(losses)))

    run("a", "plainnet50", [2.3, 2.2])
    run("b", "gplainnet50", [2.0, 0.5])
    run("c", "gplainnet50", [2.1, 0.6], seed=1)
    run("d", "gresnetfc2", [0.5, 0.3])
    run("e", "gplainnet50", [1.0, 0.1], model_args={"k_init": 0.5})  # Table 2's, not Fig. 3's
    run("f", "gplainnet50", [1.0, 0.1], dataset="cifar10")  # another data set
    run("g", "gresnet20", [1.0, 0.1])  # not a fully connected family
    summary = fig3_train_loss.summarise(fig3_train_loss.collect(tmp_path))
    assert [depth["depth"] for depth in summary] == [2, 50]
    d50 = summary[1]["families"]
    assert list(d50) == ["plainnet", "gplainnet"]
    assert d50["gplainnet"]["runs"] == ["b", "c"] and d50["gplainnet"]["seeds"] == [0, 1]
    assert d50["gplainnet"]["last_loss"] == [0.5, 0.6] and d50["plainnet"]["train_loss"] == [[2.3, 2.2]]
    out = tmp_path / "out"
    assert fig3_train_loss.main(["--root", str(tmp_path), "--out", str(out)]) == 0
    assert (out / "rg_fig3_train_loss.png").stat().st_size > 10_000
    with pytest.raises(SystemExit):
        fig3_train_loss.main(["--root", str(tmp_path / "empty"), "--out", str(out)])


@pytest.mark.parametrize("module, name", [(table7_fig, "table7.json"), (highway_fig1, "highway_fig1.json"),
                                          (fig3_train_loss, "rg_fig3_train_loss.json"),
                                          (table1_fig, "rg_table1_seeds.json"),
                                          (fig5_seeds, "rg_fig5_seeds.json")])
def test_the_committed_figures_are_what_the_kept_records_give(module, name, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert module.main(["--out", str(tmp_path)]) == 0
    assert (json.loads((tmp_path / name).read_text())
            == json.loads((ROOT / "docs" / "figures" / name).read_text()))


def test_rg_table1_figure_has_each_cells_seeds_mean_and_the_papers_number(tmp_path):
    def run(model, seed, accuracy):
        folder = tmp_path / f"rgtable.{model}.e20.t1.s{seed}"
        folder.mkdir()
        (folder / "metrics.json").write_text(json.dumps({"test_accuracy": accuracy}))

    for seed, accuracy in enumerate((0.88, 0.86, 0.87)):
        run("gresnetfc50", seed, accuracy)
    run("plainnet100", 0, 0.10)
    (tmp_path / "rgtable.gresnetfc50.e20").mkdir()  # the first, two-thread run: not a seed
    summary = table1_fig.summarise(tmp_path)
    cell = summary["gresnetfc"]["50"]
    assert cell["errors"] == {"0": 12.0, "1": 14.0, "2": 13.0} and cell["seeds"] == 3
    assert cell["mean"] == pytest.approx(13.0) and cell["std"] == pytest.approx(1.0)
    assert cell["paper"] == 1.48 and summary["plainnet"]["100"]["paper"] == 90.2
    assert summary["plainnet"]["100"]["std"] is None and summary["resnetfc"]["2"]["mean"] is None
    out = tmp_path / "out"
    assert table1_fig.main(["--results", str(tmp_path), "--out", str(out)]) == 0
    assert (out / "rg_table1_seeds.png").stat().st_size > 10_000
    assert table1_fig.main(["--results", str(tmp_path / "empty"), "--out", str(out)]) == 1


def test_highway_fig1_draws_no_value_the_paper_does_not_print(tmp_path):
    # Fig. 1 prints no number: the figure states the paper's claim in words and draws only
    # measured curves (no line derived from our own runs and labelled "paper").
    assert "no value printed" in highway_fig1.PAPER_CLAIM
    assert not hasattr(highway_fig1, "paper_reference")


def test_analysis_figures_redraws_every_analysis_png_with_the_papers_numbers(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert analysis_figures.main(["--out", str(tmp_path)]) == 0
    for _, names in analysis_figures.FIGURES.values():
        for name in names.values():
            assert (tmp_path / name).stat().st_size > 10_000, name
            assert (ROOT / "docs" / "figures" / name).is_file(), name  # the committed figure it replaces
    # Fig. 5's numbers at the same fraction of the blocks: 40 % and 60 % of 25 are 10 and 15.
    reference = analysis_figures.fig5_reference(25)
    assert sorted(x for points in reference.values() for x in points["removed"]) == [10, 10, 15]
    assert all(label.startswith("paper (RG") for label in reference)
    # ... as fractions of the paper's own unpruned accuracy (MNIST), the scale on which our
    # Fashion-MNIST curves are drawn beside them: 96/98.74, 1 - 8 %, 60/98.50.
    kept = sorted(round(x, 4) for points in reference.values() for x in points["kept"])
    assert kept == [0.6091, 0.92, 0.9723]
    assert analysis_figures.gates_reference(None) is None
    # Fig. 7 prints a pattern, marked on a CIFAR net's blocks: the stage openers and the last.
    blocks = ["stage1_unit1", "stage1_unit2", "stage2_unit1", "stage2_unit2", "stage3_unit1", "stage3_unit2"]
    marks = list(analysis_figures.gates_marks(None, blocks).values())
    assert marks == [["stage1_unit1", "stage2_unit1", "stage3_unit1"], ["stage3_unit2"]]
    assert analysis_figures.gates_marks(50, ["block1", "block2"]) is None


def test_the_committed_compression_figure_is_what_the_kept_records_give(tmp_path):
    from experiments.compression import tradeoff

    assert tradeoff.main(["--out", str(tmp_path / "compression_tradeoff.png")]) == 0
    assert (json.loads((tmp_path / "compression_tradeoff.json").read_text())
            == json.loads((ROOT / "docs" / "figures" / "compression_tradeoff.json").read_text()))


# Every number file under docs/figures and what keeps it true. A figure's numbers are
# either regenerated from the kept records by a test here (or the slow Fig. 2 test), or
# are themselves the record: the output of a command that needs trained weights or data,
# written with that command (the analysis files' PNGs are redrawn from them above).
REGENERATED = {
    "table7.json": "test_the_committed_figures_are_what_the_kept_records_give",
    "highway_fig1.json": "test_the_committed_figures_are_what_the_kept_records_give",
    "rg_fig3_train_loss.json": "test_the_committed_figures_are_what_the_kept_records_give",
    "rg_table1_seeds.json": "test_the_committed_figures_are_what_the_kept_records_give",
    "rg_fig5_seeds.json": "test_the_committed_figures_are_what_the_kept_records_give",
    "compression_tradeoff.json": "test_the_committed_compression_figure_is_what_the_kept_records_give",
    "highway_fig2.json": "test_highway_fig2.py::test_the_committed_fig2_is_what_the_released_net_gives",
}
ANALYSE_OUTPUTS = ("gresnetfc50_analysis.json", "gresnetfc100_analysis.json",
                   "gresnet20_cifar10/analysis.json", "gwrn_16_2_cifar10/analysis.json")
PROBE_RECORDS = ("init_signal.jsonl", "table7_first_steps.jsonl")


def test_every_figure_number_file_is_regenerated_by_a_test_or_is_a_commands_record():
    figures = ROOT / "docs" / "figures"
    found = {str(path.relative_to(figures)) for path in figures.rglob("*")
             if path.suffix in (".json", ".jsonl")}
    assert found == set(REGENERATED) | set(ANALYSE_OUTPUTS) | set(PROBE_RECORDS), (
        "a number file under docs/figures that no test regenerates and no command record explains")
    tests = {path.name: path.read_text() for path in Path(__file__).parent.glob("test_*.py")}
    for name, test in REGENERATED.items():
        module, _, function = test.rpartition("::")
        source = tests[module or Path(__file__).name]
        assert f"def {function}(" in source and name in source, (name, test)
    page = (ROOT / "docs" / "science.md").read_text(encoding="utf-8")
    for name in ANALYSE_OUTPUTS:
        # The record of one `keras-gated analyze` command, which the page gives beside it.
        recorded = json.loads((figures / name).read_text())
        assert {"model", "gate_values", "removal_curves"} <= set(recorded), name
        assert name in page and "keras-gated analyze" in page, name
    for name in PROBE_RECORDS:
        lines = (figures / name).read_text().splitlines()
        assert lines and all(json.loads(line).get("command", "").count("python -m experiments.tools.")
                             for line in lines), f"{name}: a line without the command that wrote it"


def test_a_run_taught_by_its_source_is_drawn_apart_from_the_method(tmp_path):
    from experiments.compression import tradeoff

    net = {"accuracy": 0.85, "macs": 17_000_000, "seconds_per_image": 3e-4}
    for run, taught in (("plain", None), ("kd", {"teacher": "source", "weight": 0.9,
                                                  "temperature": 4.0})):
        folder = tmp_path / run
        folder.mkdir()
        record = {"method": "pressure", "budget": {"macs": 0.5}, "removed": ["b1"],
                  **({"distillation": taught} if taught else {})}
        (folder / "compression.json").write_text(json.dumps(
            {"record": record, "measured": {"source": dict(net, macs=40_000_000),
                                            "compressed": net}}))
        (folder / "metrics.json").write_text(json.dumps({"source_weights": "g.cifar10"}))
    methods = {p["run"]: p["method"] for p in tradeoff.points(tmp_path)}
    assert methods == {"plain": "pressure", "kd": "pressure, taught by the source"}
    out = tradeoff.draw(tradeoff.points(tmp_path), tmp_path / "fig.png")
    assert out.stat().st_size > 1000
