"""ONNX export without the ``onnx`` extra says what to install."""

from __future__ import annotations

import sys


from keras_gated import cli
from tests.support.helpers import assert_one_clear_sentence, last_line


# --- export -------------------------------------------------------------------------------------
def test_onnx_export_without_the_extra_says_what_to_install(tmp_path, capsys, monkeypatch):
    for module in ("onnx", "tf2onnx", "jax2onnx", "onnxscript"):
        monkeypatch.setitem(sys.modules, module, None)
    out = tmp_path / "net.onnx"
    assert cli.main(["export", "plainnet10", "--format", "onnx", "--out", str(out)]) == 2
    assert_one_clear_sentence(last_line(capsys), "not installed", 'keras-gated[onnx]')
    assert not out.exists()


def test_the_onnx_extra_installs_what_every_backends_export_checks_for():
    import re
    import tomllib
    from pathlib import Path

    from keras_gated.export import ONNX_MODULES

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    extra = {re.split(r"[<>=!~ \[]", requirement)[0].lower()
             for requirement in pyproject["project"]["optional-dependencies"]["onnx"]}
    needed = {module for modules in ONNX_MODULES.values() for module in modules}
    assert needed <= extra, f"the onnx extra lacks {sorted(needed - extra)}"


def test_tflite_export_on_torch_without_its_converter_says_what_to_install(monkeypatch):
    import pytest

    from keras_gated.export import MissingExtraError, check_tflite_modules

    monkeypatch.setitem(sys.modules, "litert_torch", None)
    with pytest.raises(MissingExtraError, match="needs litert-torch, which is not installed: "
                       "pip install litert-torch, or export with KERAS_BACKEND=tensorflow"):
        check_tflite_modules("tflite", "torch")
    check_tflite_modules("tflite", "tensorflow")  # TensorFlow's own converter: nothing needed
    check_tflite_modules("onnx", "torch")
