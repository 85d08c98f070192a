"""Gate-guided compression: the pruned net computes exactly the gated net with the removed
gates at 0, meets its budget, the pressure closes gates, and ``keras-gated compress``
writes a folder that loads and evaluates to its card's accuracy."""

from __future__ import annotations

import contextlib
import io
import json

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.analysis.compress import block_macs, compress, compressible_blocks
from keras_gated.flops import count_macs
from tests.support.helpers import make_image_folder, to_numpy


def _data(shape, n=32, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 255, (n, *shape)).astype("float32"), rng.integers(0, classes, n)


def _with_gates(model, values):
    for variable, value in zip(kg.gating.gate_variables(model), values):
        variable.assign(float(value))
    return model


def _fc(depth=6):
    return kg.GResNetFC(depth, classes=3)


def _conv():
    return kg.GResNet(14, classes=3, input_shape=(8, 8, 3))


def _wide():
    return kg.GWideResNet(2, 1, classes=3, input_shape=(8, 8, 3))


def _plain():
    return kg.GPlainNet(6, classes=3)


@pytest.mark.parametrize("build, shape, pressure_epochs", [
    (_conv, (8, 8, 3), 0),  # the gates as set below; compiling a conv net's training is slow
    (_wide, (8, 8, 3), 0),
    (_plain, (28, 28, 1), 0),
    pytest.param(_conv, (8, 8, 3), 1, marks=pytest.mark.slow),
    (_fc, (28, 28, 1), 1),
])
def test_the_pruned_net_equals_the_gated_net_with_the_removed_gates_at_zero(build, shape,
                                                                            pressure_epochs):
    model = _with_gates(build(), np.linspace(0.3, 1.7, 10))
    x, y = _data(shape, n=16)
    result = compress(model, (x, y), blocks=2, epochs=0, pressure_epochs=pressure_epochs,
                      strength=0.1, batch_size=8, learning_rate=0.05)
    removed = result.record["removed"]
    gates = kg.gate_values(result.gated)
    assert len(removed) == 2 and all(gates[name] <= 0 for name in removed)
    assert not any(layer.name in removed for layer in result.model.layers)
    expected = to_numpy(result.gated(x[:4], training=False))
    np.testing.assert_allclose(to_numpy(result.model(x[:4], training=False)), expected,
                               atol=1e-5, rtol=1e-5)
    # The source net is left as it was.
    assert list(kg.gate_values(model).values())[:3] == pytest.approx(np.linspace(0.3, 1.7, 10)[:3])


def test_the_counted_macs_meet_the_budget_with_no_block_more_than_needed():
    model = _fc()
    x, y = _data((28, 28, 1))
    model_macs = count_macs(model)
    model, record = compress(model, (x, y), macs=0.85, epochs=0, pressure_epochs=1, batch_size=16)
    assert count_macs(model) == record["macs_after"] <= 0.85 * model_macs
    assert record["macs_before"] == model_macs
    saved = block_macs(_fc(), record["removed"])
    assert model_macs - sum(saved[b] for b in record["removed"][:-1]) > 0.85 * model_macs


def test_blocks_n_removes_n_blocks():
    model = _fc()
    x, y = _data((28, 28, 1))
    smaller, record = compress(model, (x, y), blocks=2, epochs=2, pressure_epochs=0, batch_size=16,
                               augment=True)
    assert len(record["removed"]) == 2
    assert sorted(compressible_blocks(smaller) + record["removed"]) == sorted(compressible_blocks(model))
    assert record["parameters_after"] < record["parameters_before"]


def test_a_stopped_run_resumes_from_its_backup_and_ends_where_an_unstopped_one_does(
        tmp_path, monkeypatch):
    x, y = _data((28, 28, 1), n=48)
    args = dict(blocks=2, epochs=2, pressure_epochs=2, strength=0.1, batch_size=16,
                learning_rate=0.05, augment=False, seed=3)
    source = _fc()
    whole = compress(source, (x, y), **args)
    fit, calls = keras.Model.fit, []

    def stop_when_fine_tuning_starts(self, *a, **kw):
        calls.append(1)
        if len(calls) == 2:  # the pressure phase (one fit of 2 epochs) done, fine-tuning not
            raise KeyboardInterrupt
        return fit(self, *a, **kw)

    monkeypatch.setattr(keras.Model, "fit", stop_when_fine_tuning_starts)
    backup = tmp_path / "backup"
    with pytest.raises(KeyboardInterrupt):
        compress(source, (x, y), backup_dir=backup, **args)
    assert json.loads((backup / "pressure" / "backup" / "latest.json").read_text())["epoch"] == 2
    assert not (backup / "finetune" / "backup" / "latest.json").exists()
    monkeypatch.setattr(keras.Model, "fit", fit)
    resumed = compress(source, (x, y), backup_dir=backup, **args)
    assert not backup.exists()  # removed once the run has ended
    assert resumed.record["removed"] == whole.record["removed"]
    for phase in ("pressure", "finetune"):
        for got, want in zip(resumed.record["history"][phase], whole.record["history"][phase]):
            assert got == pytest.approx(want, rel=1e-5)
    for a, b in zip(resumed.model.get_weights(), whole.model.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-6, rtol=1e-6)


def test_a_backup_of_other_settings_is_refused_with_what_differs(tmp_path):
    x, y = _data((28, 28, 1), n=16)
    source = _fc()
    compress(source, (x, y), blocks=1, epochs=0, pressure_epochs=1, batch_size=16,
             backup_dir=tmp_path / "b", delete_backup=False)
    with pytest.raises(ValueError, match=r"other settings \(blocks\).*same arguments"):
        compress(source, (x, y), blocks=2, epochs=0, pressure_epochs=1, batch_size=16,
                 backup_dir=tmp_path / "b")


def test_the_fine_tuning_starts_at_its_own_rate_and_the_pressure_keeps_the_learning_rate(
        tmp_path, monkeypatch):
    import importlib

    # The module (keras_gated.analysis.compress as an attribute is the function).
    compression = importlib.import_module("keras_gated.analysis.compress")
    rates, train_phase = {}, compression.train_phase

    def spy(model, data, *, learning_rate, phase, **kwargs):
        rates[phase] = learning_rate
        return train_phase(model, data, learning_rate=learning_rate, phase=phase, **kwargs)

    monkeypatch.setattr(compression, "train_phase", spy)
    x, y = _data((28, 28, 1), n=16)
    source = _fc()
    result = compress(source, (x, y), blocks=1, epochs=1, pressure_epochs=1, batch_size=16,
                      learning_rate=0.01, finetune_learning_rate=0.05,
                      backup_dir=tmp_path / "b", delete_backup=False)
    assert rates == {"pressure": 0.01, "finetune": 0.05}
    schedule = result.model.optimizer._learning_rate
    assert schedule.initial_learning_rate == 0.05  # then along the half cosine
    assert (result.record["learning_rate"], result.record["finetune_learning_rate"]) == (0.01, 0.05)
    # A backup records the rate: resuming it with another one is refused.
    with pytest.raises(ValueError, match=r"other settings \(finetune_learning_rate\)"):
        compress(source, (x, y), blocks=1, epochs=1, pressure_epochs=1, batch_size=16,
                 learning_rate=0.01, finetune_learning_rate=0.1, backup_dir=tmp_path / "b")
    # Without it the fine-tuning starts at the learning rate, as before the option.
    rates.clear()
    record = compress(source, (x, y), blocks=1, epochs=1, pressure_epochs=1, batch_size=16,
                      learning_rate=0.02).record
    assert rates == {"pressure": 0.02, "finetune": 0.02}
    assert record["finetune_learning_rate"] == record["learning_rate"] == 0.02
    # ...and its backup records what backups from before the option record, so they resume.
    settings = compression.CompressSettings.resolve(
        macs=None, blocks=1, epochs=1, pressure_epochs=1, strength=0.01, baseline=None,
        remove=None, batch_size=16, learning_rate=0.02, augment=False, seed=0)
    assert "finetune_learning_rate" not in settings.backup_settings(source, (x, y), False)


def test_the_pressure_lowers_the_gates_and_closes_some():
    x, y = _data((28, 28, 1), n=64)
    runs = {strength: compress(_fc(), (x, y), blocks=1, epochs=0, pressure_epochs=2,
                               strength=strength, batch_size=16, learning_rate=0.05).record
            for strength in (0.0, 2.0)}
    free, pressed = (runs[s]["gates_after_pressure"] for s in (0.0, 2.0))
    assert sum(pressed.values()) < sum(free.values()) - 1.0
    assert min(pressed.values()) == 0.0  # a ReLU gate pushed to k <= 0 is closed
    assert all(pressed[b] < runs[2.0]["gates_before"][b] for b in pressed)


def test_the_penalty_is_taken_off_after_the_pressure_phase():
    x, y = _data((28, 28, 1), n=16)
    result = compress(_fc(), (x, y), blocks=1, epochs=0, pressure_epochs=1, strength=1.0,
                      batch_size=16)
    assert all(v.regularizer is None for v in kg.gating.gate_variables(result.gated))
    assert not result.gated.losses


def test_baseline_lowest_takes_the_sources_lowest_gates_without_training_them():
    model = _with_gates(_fc(), [0.9, 0.2, 0.5])
    x, y = _data((28, 28, 1), n=16)
    _, record = compress(model, (x, y), blocks=2, epochs=0, baseline="lowest")
    assert record["removed"] == ["block2", "block3"]
    assert record["gates_after_pressure"] == record["gates_before"]
    assert record["pressure"]["epochs"] == 0


def test_baseline_random_is_seeded_and_scratch_starts_afresh():
    x, y = _data((28, 28, 1), n=16)
    picks = [compress(_fc(), (x, y), blocks=2, epochs=0, baseline="random", seed=s).record["removed"]
             for s in (3, 3, 4, 5, 6)]
    assert picks[0] == picks[1] and len({tuple(p) for p in picks}) > 1
    model = _fc()
    result = compress(model, (x, y), blocks=1, epochs=0, pressure_epochs=0, baseline="scratch")
    kernel = result.model.get_layer("predictions").kernel
    assert not np.allclose(to_numpy(kernel), to_numpy(model.get_layer("predictions").kernel))


def test_remove_names_the_blocks_and_must_meet_the_budget():
    x, y = _data((28, 28, 1), n=8)
    _, record = compress(_fc(), (x, y), blocks=2, epochs=0, baseline="scratch",
                         remove=["block3", "block1"])
    assert record["removed"] == ["block3", "block1"] and record["pressure"]["epochs"] == 0
    with pytest.raises(ValueError, match="above the budget"):
        compress(_fc(), (x, y), macs=0.8, epochs=0, remove=["block1"])
    with pytest.raises(ValueError, match="cannot be removed"):
        compress(_fc(), (x, y), blocks=1, epochs=0, remove=["dense"])


@pytest.mark.parametrize("kwargs, message", [
    ({"macs": 0.5, "blocks": 1}, "one budget"),
    ({}, "one budget"),
    ({"macs": 1.5}, "between 0 and 1"),
    ({"blocks": 4}, "more than the 3 removable"),
    ({"macs": 0.1}, "out of reach"),
    ({"blocks": 1, "baseline": "best"}, "Unknown baseline"),
])
def test_impossible_requests_are_refused_in_one_sentence(kwargs, message):
    x, y = _data((28, 28, 1), n=8)
    with pytest.raises(ValueError, match=message):
        compress(_fc(), (x, y), epochs=0, pressure_epochs=0, **kwargs)


@pytest.mark.parametrize("build, shape", [
    (lambda: kg.PreActResNet20(classes=3, input_shape=(8, 8, 3)), (8, 8, 3)),
    (lambda: kg.HighwayFC(4, classes=3), (28, 28, 1)),  # T(x) depends on the input
])
def test_a_net_without_removable_gated_blocks_is_told_how_to_gate_one_first(build, shape):
    model = build()
    with pytest.raises(ValueError) as error:
        compress(model, _data(shape, n=8), blocks=1)
    text = str(error.value)
    assert "keras_gated.gate(model)" in text and "GResNet" in text and "\n" not in text
    assert text.count(". ") == 0  # one sentence


def test_a_gated_twin_of_an_ungated_net_can_be_compressed():
    assert compressible_blocks(kg.gate(kg.PreActResNet20(classes=3, input_shape=(8, 8, 3))))


def _cli(*argv: str) -> tuple[int, str]:
    from keras_gated.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


@pytest.mark.parametrize("argv", [
    ["compress", "gresnetfc2.x", "--dataset", "d", "--macs", "1.5", "--epochs", "1", "--out", "o"],
    ["compress", "gresnetfc2.x", "--dataset", "d", "--macs", "0.5", "--blocks", "1",
     "--epochs", "1", "--out", "o"],
    ["compress", "gresnetfc2.x", "--dataset", "d", "--epochs", "1", "--out", "o"],
    ["compress", "gresnetfc2.x", "--dataset", "d", "--blocks", "0", "--epochs", "1", "--out", "o"],
])
def test_cli_budgets_are_checked_while_parsing(argv):
    from keras_gated.cli import build_parser

    with pytest.raises(SystemExit) as exit_, contextlib.redirect_stderr(io.StringIO()):
        build_parser().parse_args(argv)
    assert exit_.value.code == 2


def test_cli_refuses_an_out_folder_that_holds_files(tmp_path):
    from keras_gated.cli import build_parser

    (tmp_path / "kept.txt").write_text("x")
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        build_parser().parse_args(["compress", "gresnetfc2.x", "--dataset", "d", "--blocks", "1",
                                   "--epochs", "1", "--out", str(tmp_path)])
    assert (tmp_path / "kept.txt").read_text() == "x"


def test_cli_refuses_an_ungated_net_in_one_sentence_before_reading_data(tmp_path):
    source = tmp_path / "source"
    keras.saving.save_model(kg.create_model("preactresnet20"), source, zipped=False)
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors):
        code, _ = _cli("compress", "preactresnet20", "--weights", str(source), "--dataset",
                       str(tmp_path / "no-data"), "--blocks", "1", "--epochs", "0",
                       "--out", str(tmp_path / "out"))
    assert code == 2
    lines = [line for line in errors.getvalue().splitlines() if "error:" in line]
    assert len(lines) == 1 and "keras_gated.gate(model)" in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_cli_writes_a_folder_that_loads_and_evaluates_to_its_card(tmp_path):
    data = make_image_folder(tmp_path / "tiny")
    source = tmp_path / "source"
    keras.saving.save_model(kg.create_model("gresnetfc2", classes=2), source, zipped=False)
    out = tmp_path / "out"
    code, printed = _cli("compress", "gresnetfc2", "--weights", str(source), "--dataset", str(data),
                         "--blocks", "1", "--epochs", "1", "--batch-size", "16", "--out", str(out),
                         "--backup-dir", str(tmp_path / "backup"))
    assert code == 0, printed
    assert not (tmp_path / "backup").exists()  # removed once the folder is written
    metrics = json.loads((out / "metrics.json").read_text())
    numbers = json.loads((out / "compression.json").read_text())
    assert numbers["record"]["removed"] == ["block1"] == metrics["model_args"]["removed_blocks"]
    assert numbers["measured"]["compressed"]["macs"] < numbers["measured"]["source"]["macs"]
    assert (out / "tradeoff.png").stat().st_size > 1000
    card = (out / "README.md").read_text()
    assert "keras-gated compress gresnetfc2" in card and "block1" in card and "images / s" in card
    check = card.split("Check it with:")[1]
    assert "keras-gated evaluate gresnetfc2 --weights " in check and "--weights tiny" not in check
    x = np.asarray(np.random.default_rng(0).uniform(0, 255, (4, 28, 28, 1)), "float32")
    loaded = keras.saving.load_model(out)
    built = kg.create_model("gresnetfc2", weights=str(out), classes=2)
    assert "block1" not in [layer.name for layer in built.layers]
    np.testing.assert_allclose(to_numpy(built(x)), to_numpy(loaded(x)), atol=1e-6)
    code, printed = _cli("evaluate", "gresnetfc2", "--weights", str(out), "--dataset", str(data))
    assert code == 0
    assert f"test accuracy: {metrics['test_accuracy']:.4f}" in printed
