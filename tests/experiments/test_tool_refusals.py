"""experiments.tools.first_steps and init_signal refuse an unknown model or data set in
one sentence and exit 2, before building anything."""

import keras
import pytest

from experiments.tools import first_steps, init_signal


def test_first_steps_refuses_an_unknown_model_in_one_sentence(capsys):
    assert first_steps.main(["--model", "nosuch", "--dataset", "cifar10", "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("experiments.tools.first_steps: error: Unknown model name 'nosuch'")
    assert len(err.splitlines()) == 1


@pytest.mark.skipif(keras.backend.backend() != "tensorflow",
                    reason="init_signal uses TensorFlow's GradientTape")
def test_init_signal_refuses_an_unknown_data_set_in_one_sentence(capsys):
    assert init_signal.main(["--model", "gresnetfc2", "--dataset", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("experiments.tools.init_signal: error: Unknown data set 'nosuch'")
    assert len(err.splitlines()) == 1
