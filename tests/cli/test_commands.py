"""The keras-gated command line."""

import pytest

from keras_gated.cli import main


def test_list_prints_names_with_descriptions(capsys):
    assert main(["list", "gwrn_28_*"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("gwrn_28_10") and "Gated WRN-28-10" in out[0]


def test_info_counts_parameters(capsys):
    assert main(["info", "gresnetfc10", "--params"]) == 0
    out = capsys.readouterr().out
    expected = 784 * 50 + 50 + 10 * (50 * 50 + 100) + 5 + 510
    assert f"trainable parameters: {expected:,}" in out


def _console_script() -> str:
    import shutil
    import sys
    from pathlib import Path

    script = Path(sys.executable).parent / "keras-gated"
    return str(script) if script.is_file() else shutil.which("keras-gated")


@pytest.mark.parametrize("argv", [["list"], ["info", "gresnet20"], ["list", "--pretrained"]])
def test_registry_commands_are_quiet_and_start_no_tensorflow(argv):
    import subprocess
    import sys
    import time

    start = time.perf_counter()
    result = subprocess.run([_console_script(), *argv], capture_output=True, text=True,
                            timeout=300)
    elapsed = time.perf_counter() - start
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "gresnet20" in result.stdout
    assert elapsed < 2.0, f"keras-gated {' '.join(argv)} took {elapsed:.2f} s"
    probe = ("import sys; sys.argv = ['keras-gated']; from keras_gated.cli import main; "
             f"main({argv!r}); print(sorted({{'keras', 'tensorflow', 'jax', 'torch'}} "
             "& set(sys.modules)))")
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              timeout=300)
    assert imported.stdout.strip().splitlines()[-1] == "[]", imported.stderr[-2000:]


def test_a_closed_pipe_ends_the_listing_quietly():
    import subprocess

    listing = subprocess.Popen([_console_script(), "list"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    first = listing.stdout.readline()
    listing.stdout.close()  # the reader goes away, as `keras-gated list | head -1` does
    _, stderr = listing.communicate(timeout=60)
    assert first.strip() and listing.returncode == 0 and stderr == b"", stderr


def test_a_command_that_builds_a_model_prints_no_native_log_lines(tmp_path):
    import subprocess

    result = subprocess.run([_console_script(), "info", "gresnetfc2", "--params"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "trainable parameters" in result.stdout
    assert "I0000" not in result.stderr and "absl" not in result.stderr, result.stderr


def _subcommand_help(parser, name: str) -> str:
    import argparse

    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name].format_help()


def test_every_dataset_option_documents_the_image_folder_layout_and_keras_gated_data():
    from keras_gated.cli import build_parser
    from training import finetune, train

    helps = {name: _subcommand_help(build_parser(), name)
             for name in ("evaluate", "analyze", "compress")}
    helps.update(train=train.build_parser().format_help(),
                 finetune=finetune.build_parser().format_help())
    for name, text in helps.items():
        flat = " ".join(text.split())
        assert "ROOT/train/<class>/<image>" in flat and "ROOT/test/<class>/<image>" in flat, name
        assert "KERAS_GATED_DATA" in flat, name


def test_info_gates_prints_each_blocks_trained_k(capsys):
    import keras_gated as kg
    from keras_gated.gating import gate_values

    assert main(["info", "gresnet20.cifar10", "--gates"]) == 0
    out = capsys.readouterr().out
    printed = dict(line.split() for line in out.split("(block: value):\n")[1].strip().splitlines())
    expected = gate_values(kg.create_model("gresnet20.cifar10"))
    assert list(printed) == list(expected) and len(printed) == 9
    assert all(float(printed[block]) == pytest.approx(k, abs=5e-5) for block, k in expected.items())


@pytest.mark.parametrize("name, says", [("gresnet20", "give a weight id such as gresnet20.cifar10"),
                                        ("preactresnet20.cifar10", "has no gates")])
def test_info_gates_refuses_what_has_no_trained_gates_in_one_line(name, says, capsys):
    assert main(["info", name, "--gates"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and says in captured.err and captured.err.count("\n") == 1
