"""The training loss and the validation's loss and accuracy are watched for NaN/inf."""

import math

import pytest

from keras_gated.training.callbacks import StopOnNaN


class _Model:
    stop_training = False


def guard():
    g = StopOnNaN()
    g.set_model(_Model())
    return g


def test_a_nan_training_loss_stops_at_its_batch():
    g = guard()
    g.on_epoch_begin(2)
    g.on_train_batch_end(5, {"loss": math.nan})
    assert g.nan_at == (2, 5) and g.model.stop_training


@pytest.mark.parametrize("key", ["val_loss", "val_accuracy"])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_a_non_finite_validation_metric_stops_at_the_epoch_end(key, value):
    g = guard()
    g.on_epoch_begin(3)
    g.on_train_batch_end(0, {"loss": 1.0})
    g.on_epoch_end(3, {"loss": 1.0, "val_loss": 0.5, "val_accuracy": 0.8, key: value})
    assert g.nan_at == (3, None) and g.model.stop_training
    assert key in g.what


def test_finite_metrics_let_training_go_on():
    g = guard()
    g.on_epoch_end(0, {"loss": 1.0, "val_loss": 0.5, "val_accuracy": 0.8})
    assert g.nan_at is None and not g.model.stop_training
