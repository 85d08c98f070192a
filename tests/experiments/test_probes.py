"""experiments.tools.init_signal and first_steps: how a run starts, built by
keras_gated.training.build.build_run as training.train builds it."""

import json

import keras
import numpy as np
import pytest

from experiments.tools import first_steps, init_signal
from tests.support.helpers import make_image_folder
from keras_gated.training.build import RunSettings, build_run

pytestmark = [
    pytest.mark.skipif(keras.backend.backend() != "tensorflow",
                       reason="init_signal uses TensorFlow's GradientTape"),
    pytest.mark.slow,  # builds and steps several models
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_image_folder(tmp_path_factory.mktemp("data") / "tiny", per_class=(16, 4))


def test_a_smaller_k_start_shrinks_the_gradient_of_a_plain_gated_net(folder):
    """With k = 1 a G-PlainNet is the plain net; started smaller, each layer contributes less
    and the gradient at initialisation is smaller (same seed, same weights otherwise)."""
    one = init_signal.init_signal(RunSettings(model="gplainnet10", dataset=str(folder)), examples=16)
    small = init_signal.init_signal(RunSettings(model="gplainnet10", dataset=str(folder),
                                                model_args={"k_init": 0.1}), examples=16)
    assert one["examples"] == 16 and one["chance_loss"] == pytest.approx(0.6931, abs=1e-4)
    assert one["first_kernel"] == "stem/kernel" and one["last_kernel"] == "predictions/kernel"
    assert small["gradient_norm"] < one["gradient_norm"]
    assert one["gradient_norm"] >= one["first_kernel_gradient_norm"] > 0


def test_init_signal_cli_prints_one_json_line_and_refuses_a_bad_model_arg(folder, capsys):
    assert init_signal.main(["--model", "gresnetfc2", "--dataset", str(folder), "--examples", "8"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["model"] == "gresnetfc2" and result["loss"] > 0
    with pytest.raises(SystemExit) as exit_info:
        init_signal.main(["--model", "gresnetfc2", "--dataset", str(folder), "--model-arg", "k_init"])
    assert exit_info.value.code == 2


def test_first_steps_reports_every_batch_loss_and_the_gates(folder, capsys):
    """first_steps runs the first training steps as training.train would: one loss per
    batch, the gates after them; a huge lr makes the loss non-finite and the run stops at
    that batch, reported as valid JSON."""
    settings = RunSettings(model="gresnetfc2", dataset=str(folder), recipe="rg_mnist_fc",
                           clip_norm=1.0, batch_size=8, model_args={"k_init": 0.5})
    out = first_steps.first_steps(settings, steps=3)
    assert out["steps_run"] == 3 and len(out["loss_by_batch"]) == 3
    assert out["first_nonfinite_batch"] is None
    assert set(out["k"]) == {"block1"} and out["k"]["block1"] != 0.5  # k moved
    assert "gradient clipped to global norm 1.0" in out["recipe"]
    # Batch 1's loss is that of the freshly built model on the stream's first batch (BN in
    # training mode, this recipe has no weight decay nor dropout), computed independently.
    run = build_run(settings)
    x, y = next(iter(run.batches))
    probabilities = run.model(x, training=True)
    expected = float(np.mean(keras.ops.convert_to_numpy(
        keras.losses.sparse_categorical_crossentropy(y, probabilities))))
    assert out["loss_by_batch"][0] == pytest.approx(expected, rel=1e-4)
    # Later batches differ from the first (the weights moved, the data changed).
    assert len(set(out["loss_by_batch"])) == 3
    # The command line, with a rate that blows the loss up: it stops at the first NaN/inf
    # batch and prints valid JSON (NaN/inf as null).
    assert first_steps.main(["--model", "gresnetfc2", "--dataset", str(folder), "--steps", "4",
                             "--recipe", "rg_mnist_fc", "--batch-size", "8", "--lr", "1e30"]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1],
                         parse_constant=lambda text: pytest.fail(f"{text} printed: not JSON"))
    assert printed["first_nonfinite_batch"] is not None
    assert printed["steps_run"] == printed["first_nonfinite_batch"]
    assert printed["loss_by_batch"][-1] is None
