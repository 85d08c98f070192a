"""training.train runs on the fast path it reports (XLA where it is faster), logs every
gate's k per epoch for gated nets, and refuses mixed precision that this CPU would emulate."""

import csv
import json

import keras
import pytest

from keras_gated.precision import slow_mixed_precision
from tests.helpers import make_image_folder
from training import train


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_image_folder(tmp_path_factory.mktemp("data") / "tiny", per_class=(48, 16))


def test_the_fast_path_is_applied_reported_and_recorded(folder, tmp_path, capsys):
    out = tmp_path / "run"
    assert train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "2",
                       "--batch-size", "16", "--out", str(out), "--verbose", "0"]) == 0
    printed = capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    path = metrics["fast_path"]
    backend = keras.backend.backend()
    assert path["backend"] == backend and path["dtype_policy"] == "float32"
    # XLA is the default on TensorFlow (Keras alone would switch it off on a CPU) and JAX.
    assert path["jit_compile"] is (backend in ("tensorflow", "jax"))
    assert f"[train] fast path: backend {backend}, XLA {'on' if path['jit_compile'] else 'off'}" in printed
    # Gated nets: one row per gate and epoch.
    with (out / "gates.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["epoch"], r["block"]) for r in rows] == [("0", "block1"), ("1", "block1")]


def test_mixed_precision_is_refused_where_the_cpu_would_emulate_it(folder, tmp_path, capsys):
    if slow_mixed_precision("mixed_bfloat16") is None:
        pytest.skip("this machine runs bf16 natively (or has an accelerator)")
    out = tmp_path / "run"
    code = train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "1",
                       "--out", str(out), "--precision", "mixed_bfloat16"])
    assert code == 2
    error = capsys.readouterr().err
    assert "mixed_bfloat16" in error and "--precision float32" in error and "Traceback" not in error
    assert not out.exists()
    assert keras.config.dtype_policy().name == "float32"


def test_model_fit_gets_xla_by_default_and_the_users_choice_wins():
    import keras_gated as kg

    model = kg.GResNetFC(2)
    model.compile("sgd", "sparse_categorical_crossentropy")
    assert model.jit_compile is (keras.backend.backend() in ("tensorflow", "jax"))
    model.compile("sgd", "sparse_categorical_crossentropy", jit_compile=False)
    assert model.jit_compile is False


def test_building_under_emulated_mixed_precision_warns_once():
    import keras_gated as kg
    from keras_gated import precision

    if slow_mixed_precision("mixed_bfloat16") is None:
        pytest.skip("this machine runs bf16 natively (or has an accelerator)")
    precision._warned.clear()
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        with pytest.warns(UserWarning, match="emulated") as record:
            kg.GResNetFC(2)
            kg.GResNetFC(2)
        assert sum("emulated" in str(w.message) for w in record) == 1
    finally:
        keras.mixed_precision.set_global_policy("float32")
