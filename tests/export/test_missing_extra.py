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
