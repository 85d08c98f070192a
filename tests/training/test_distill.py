"""Knowledge distillation: the loss is Hinton et al.'s, checked against a PyTorch
reference written here; training on it moves the student towards the frozen teacher, and
the student's softmax is back afterwards; compression fine-tunes with it on request."""

from __future__ import annotations

import contextlib
import importlib
import io

import keras
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.analysis.compress_report import compression_recipe
from keras_gated.training.distill import Distillation, distiller, logits_heads
from keras_gated.training.phases import train_phase
from tests.support.helpers import to_numpy

compression = importlib.import_module("keras_gated.analysis.compress")


def _classifier(seed: int) -> keras.Model:
    """A small classifier ending, like every keras-gated one, in a softmax ``predictions``."""
    keras.utils.set_random_seed(seed)
    inputs = keras.Input((6,))
    hidden = keras.layers.Dense(8, activation="tanh", name="hidden")(inputs)
    outputs = keras.layers.Dense(4, activation="softmax", name="predictions")(hidden)
    return keras.Model(inputs, outputs, name=f"net{seed}")


def _data(n=16, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 6)).astype("float32"), rng.integers(0, 4, n)


def _reference_loss(student_logits, teacher_logits, labels, alpha, temperature):
    """Hinton, Vinyals & Dean (2015): (1 − α)·CE + α·T²·KL(p_T^teacher ‖ p_T^student)."""
    import torch
    import torch.nn.functional as F

    zs, zt = torch.tensor(student_logits, dtype=torch.float64), torch.tensor(teacher_logits, dtype=torch.float64)
    hard = F.cross_entropy(zs, torch.tensor(labels))
    soft = F.kl_div(F.log_softmax(zs / temperature, dim=1), F.softmax(zt / temperature, dim=1),
                    reduction="batchmean")
    return float((1 - alpha) * hard + alpha * temperature ** 2 * soft)


@pytest.mark.needs("torch")
@pytest.mark.parametrize("alpha, temperature", [(0.9, 4.0), (0.5, 1.0), (1.0, 2.5)])
def test_the_loss_is_hintons_against_a_pytorch_reference(alpha, temperature):
    student, teacher = _classifier(0), _classifier(1)
    x, y = _data()
    with logits_heads(student, teacher):
        zs, zt = to_numpy(student(x)), to_numpy(teacher(x))
        model = distiller(teacher, student, Distillation(alpha, temperature))
        model.compile(optimizer="sgd",
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        loss = float(to_numpy(model.compute_loss(x, y, model(x), training=False)))
    assert loss == pytest.approx(_reference_loss(zs, zt, y, alpha, temperature), rel=1e-5)
    # The heads gave logits inside: their softmax is what the models give outside.
    np.testing.assert_allclose(to_numpy(student(x)), to_numpy(keras.ops.softmax(zs)), atol=1e-6)


@pytest.mark.needs("torch")
def test_one_step_trains_on_the_reference_loss_and_the_softmax_comes_back():
    student, teacher = _classifier(0), _classifier(1)
    teacher_weights = [w.copy() for w in teacher.get_weights()]
    x, y = _data()
    with logits_heads(student, teacher):
        zs, zt = to_numpy(student(x)), to_numpy(teacher(x))
    rows = train_phase(student, (x, y), epochs=1, batch_size=len(x), learning_rate=1e-3,
                       teacher=teacher, distillation=Distillation(0.7, 3.0))
    # One batch: the epoch's loss is the loss at the weights it started from.
    assert rows[0]["loss"] == pytest.approx(_reference_loss(zs, zt, y, 0.7, 3.0), rel=1e-5)
    assert {"student_loss", "distillation_loss"} <= set(rows[0])
    for a, b in zip(teacher.get_weights(), teacher_weights):  # frozen
        np.testing.assert_array_equal(a, b)
    assert student.get_layer("predictions").activation is keras.activations.softmax
    np.testing.assert_allclose(to_numpy(student(x)).sum(axis=1), 1.0, atol=1e-5)


def test_a_student_equal_to_its_teacher_learns_nothing_from_it_alone():
    teacher = _classifier(1)
    student = _classifier(1)
    x, y = _data()
    before = [w.copy() for w in student.get_weights()]
    rows = train_phase(student, (x, y), epochs=2, batch_size=8, learning_rate=0.5,
                       teacher=teacher, distillation=Distillation(1.0))
    assert rows[0]["loss"] == pytest.approx(0.0, abs=1e-6)  # its own soft targets: KL = 0
    for a, b in zip(student.get_weights(), before):
        np.testing.assert_allclose(a, b, atol=1e-6)
    # ...while the labels' term alone moves it.
    train_phase(student, (x, y), epochs=1, batch_size=8, learning_rate=0.5)
    assert any(not np.allclose(a, b) for a, b in zip(student.get_weights(), before))


def test_the_softmax_comes_back_after_an_error_and_a_headless_net_is_refused():
    student = _classifier(0)
    with pytest.raises(RuntimeError), logits_heads(student):
        assert student.get_layer("predictions").activation is keras.activations.linear
        raise RuntimeError("stopped")
    assert student.get_layer("predictions").activation is keras.activations.softmax
    headless = kg.GResNetFC(2, include_top=False)
    with pytest.raises(ValueError, match="include_top=True"):
        with logits_heads(headless):
            pass


@pytest.mark.parametrize("kwargs, message", [
    (dict(weight=0.0), r"in \(0, 1\]"),
    (dict(weight=1.5), r"in \(0, 1\]"),
    (dict(weight=0.9, temperature=0.0), "> 0"),
    (dict(weight=0.9, temperature=float("nan")), "> 0"),
])
def test_impossible_settings_are_refused_in_one_sentence(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Distillation(**kwargs)


def test_a_distillers_gates_are_its_students():
    teacher, student = kg.GResNetFC(4, classes=3), kg.GResNetFC(2, classes=3)
    with logits_heads(student, teacher):
        model = distiller(teacher, student, Distillation(0.9))
    assert kg.gating.gate_variables(model) == kg.gating.gate_variables(student)


def _fc_data(n=16):
    rng = np.random.default_rng(0)
    return rng.uniform(0, 255, (n, 28, 28, 1)).astype("float32"), rng.integers(0, 3, n)


def test_compress_fine_tunes_from_the_source_on_request_and_records_it(tmp_path, monkeypatch):
    taught, train_phase_ = {}, compression.train_phase

    def spy(model, data, *, phase, teacher=None, distillation=None, **kwargs):
        taught[phase] = (teacher, distillation)
        return train_phase_(model, data, phase=phase, teacher=teacher,
                            distillation=distillation, **kwargs)

    monkeypatch.setattr(compression, "train_phase", spy)
    x, y = _fc_data()
    source = kg.GResNetFC(4, classes=3)
    weights = [w.copy() for w in source.get_weights()]
    args = dict(blocks=1, epochs=1, pressure_epochs=1, batch_size=16)
    result = compression.compress(source, (x, y), distill=0.9, temperature=3.0,
                                  backup_dir=tmp_path / "b", delete_backup=False, **args)
    teacher, distillation = taught["finetune"]
    assert taught["pressure"] == (None, None) and distillation == Distillation(0.9, 3.0)
    assert teacher is not source and [np.array_equal(a, b) for a, b in
                                      zip(teacher.get_weights(), weights)] == [True] * len(weights)
    for a, b in zip(source.get_weights(), weights):  # the source is left untouched
        np.testing.assert_array_equal(a, b)
    record = result.record
    assert record["distillation"] == {"teacher": "source", "weight": 0.9, "temperature": 3.0}
    assert "distillation_loss" in record["history"]["finetune"][0]
    recipe = compression_recipe(record)
    assert "distilled from the source (α=0.9 of the loss on its outputs at temperature 3)" in recipe
    # The backup records it: resuming with another weight is refused...
    with pytest.raises(ValueError, match=r"other settings \(distill\)"):
        compression.compress(source, (x, y), distill=0.5, temperature=3.0,
                             backup_dir=tmp_path / "b", **args)
    # ...and a run without it records what backups from before the option record.
    plain = compression.compress(source, (x, y), **args)
    assert "distillation" not in plain.record
    settings = compression.CompressSettings.resolve(
        macs=None, blocks=1, epochs=1, pressure_epochs=1, strength=0.01, baseline=None,
        remove=None, batch_size=16, learning_rate=None, augment=False, seed=0)
    assert not {"distill", "temperature"} & set(settings.backup_settings(source, (x, y), False))


def test_a_temperature_without_distillation_is_refused_before_training():
    x, y = _fc_data(8)
    with pytest.raises(ValueError, match="give distill too"):
        compression.compress(kg.GResNetFC(4, classes=3), (x, y), blocks=1, epochs=1,
                             temperature=2.0)


@pytest.mark.parametrize("value", ["0", "1.5", "x"])
def test_cli_distill_is_checked_while_parsing(value):
    from keras_gated.cli import build_parser

    with pytest.raises(SystemExit) as exit_, contextlib.redirect_stderr(io.StringIO()):
        build_parser().parse_args(["compress", "gresnetfc2.x", "--dataset", "d", "--blocks", "1",
                                   "--epochs", "1", "--distill", value, "--out", "o"])
    assert exit_.value.code == 2


def test_cli_command_line_repeats_the_distillation():
    from keras_gated.cli import build_parser
    from keras_gated.cli.compress import compress_command_line

    args = build_parser().parse_args(["compress", "gresnet20.cifar10", "--dataset", "cifar10",
                                      "--macs", "0.5", "--epochs", "30", "--distill", "0.9",
                                      "--temperature", "4", "--out", "o"])
    line = compress_command_line(args, "tensorflow")
    assert "--distill 0.9 --temperature 4.0" in line


def test_cli_temperature_without_distill_is_refused_in_one_sentence_before_loading(tmp_path):
    from keras_gated.cli import main

    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        code = main(["compress", "gresnet20.cifar10", "--dataset", str(tmp_path / "no-data"),
                     "--macs", "0.5", "--epochs", "1", "--temperature", "2",
                     "--out", str(tmp_path / "out")])
    lines = [line for line in errors.getvalue().splitlines() if "error:" in line]
    assert code == 2 and len(lines) == 1 and "give --distill too" in lines[0]
    assert not (tmp_path / "out").exists()
