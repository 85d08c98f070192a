"""``keras-gated convert`` of a bad source gives one sentence naming the file or the
tensor and writes nothing: NaN or infinite tensors, tensors of a non-float dtype, a
torchvision-style ``fc.bias`` in an fbresnet dict, a pickled ``.pth`` (without torch's
``weights_only=False`` advice), truncated files; and the module imports first."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def fbresnet_source(arch: str = "preactresnet20") -> dict[str, np.ndarray]:
    """An fbresnet state dict (NumPy, the source's layouts) of a fresh keras-gated model."""
    import keras_gated as kg
    from keras_gated.convert import source_layouts
    from keras_gated.state_dicts import conv_layout, dense_layout

    arrays = {}
    for key, target in source_layouts()["fbresnet"].keys(kg.create_model(arch)):
        value = np.asarray(target.variable.numpy())
        if target.transform is conv_layout:
            value = np.transpose(value, (3, 2, 0, 1))  # HWIO -> OIHW
        elif target.transform is dense_layout:
            value = value.T
        arrays[key] = np.ascontiguousarray(value)
    return arrays


def run_convert(source: Path, out: Path) -> subprocess.CompletedProcess:
    """``keras-gated convert`` of ``source`` in this process (the command's own ``main``):
    its exit code, its output, and on stderr what it printed there and every warning it
    raised, as a launch would show them. A real launch is tested in tests/convert/test_reference_exactness.py."""
    from keras_gated.cli import main

    argv = ["convert", "preactresnet20", str(source), "--from", "fbresnet", "--out", str(out)]
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), \
            warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        code = main(argv)
    shown = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno)
                    for w in raised)
    return subprocess.CompletedProcess(["keras-gated", *argv], code, stdout.getvalue(),
                                       shown + stderr.getvalue())


def assert_refused(result: subprocess.CompletedProcess, out: Path, *words: str) -> None:
    err = result.stderr.strip().splitlines()[-1]
    assert result.returncode == 2, result.stderr
    assert "internal error" not in err and "Traceback" not in result.stderr
    for word in words:
        assert word in err, err
    assert not out.exists()


def test_the_convert_module_imports_first():
    code = "from keras_gated.convert import convert, load_state_dict; print('ok')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, cwd=ROOT)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr


def _nan(arrays):
    arrays["1.0.2.0.0.weight"].flat[0] = np.nan
    return "1.0.2.0.0.weight", "NaN or infinite"


def _inf(arrays):
    arrays["4.running_var"].flat[3] = np.inf
    return "4.running_var", "NaN or infinite"


def _integers(arrays):
    arrays["0.weight"] = (arrays["0.weight"] * 100).astype("int64")
    return "0.weight", "int64"


def _fc_bias(arrays):
    arrays["fc.bias"] = np.zeros(10, "float32")
    return "fc.bias", "Unknown key"


@pytest.mark.parametrize("damage", [_nan, _inf, _integers, _fc_bias])
def test_a_bad_safetensors_tensor_is_refused_naming_it_and_the_file(tmp_path, damage):
    from safetensors.numpy import save_file

    arrays = fbresnet_source()
    key, words = damage(arrays)
    source = tmp_path / "reference.safetensors"
    save_file(arrays, str(source))
    out = tmp_path / "converted"
    assert_refused(run_convert(source, out), out, repr(key), words, str(source))


def test_an_intact_source_still_converts(tmp_path):
    from safetensors.numpy import save_file

    source = tmp_path / "reference.safetensors"
    save_file(fbresnet_source(), str(source))
    out = tmp_path / "converted"
    result = run_convert(source, out)
    assert result.returncode == 0, result.stderr
    assert (out / "config.json").is_file()


@pytest.mark.parametrize("suffix", [".safetensors", ".pth"])
def test_a_truncated_file_is_refused_naming_it(tmp_path, suffix):
    from safetensors.numpy import save_file

    whole = tmp_path / "whole.safetensors"
    save_file(fbresnet_source(), str(whole))
    source = tmp_path / f"reference{suffix}"
    source.write_bytes(whole.read_bytes()[:1000])
    if suffix == ".pth":
        pytest.importorskip("torch")
    out = tmp_path / "converted"
    assert_refused(run_convert(source, out), out, str(source), "truncated or damaged")


@pytest.mark.needs("torch")
def test_a_pickled_pth_is_refused_without_the_weights_only_false_advice(tmp_path):
    import torch

    source = tmp_path / "checkpoint.pth"
    torch.save({"model": ValueError("an object"), "step": torch.zeros(1)}, str(source))
    out = tmp_path / "converted"
    result = run_convert(source, out)
    assert_refused(result, out, str(source), "state_dict()")
    assert "weights_only" not in result.stderr


def test_in_memory_sources_are_checked_too():
    from keras_gated.convert import ConversionError, convert

    arrays = fbresnet_source()
    arrays["8.weight"] = arrays["8.weight"].astype("int32")
    with pytest.raises(ConversionError, match="'8.weight' of the fbresnet state dict has dtype"):
        convert("preactresnet20", arrays, "fbresnet")
