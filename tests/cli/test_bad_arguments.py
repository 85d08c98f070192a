"""Bad arguments a careless user gives on the command line, replayed as given: a count below
one is a usage error, a data tag spelt another way names the tag, and ``pull`` with a
read-only HF_HOME points at the local copy; one sentence each, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from keras_gated import cli
from tests.support.helpers import assert_one_clear_sentence, last_line

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "zoo"


@pytest.mark.parametrize("argv, flag", [
    (["evaluate", "plainnet10", "--weights", "fashion_mnist", "--dataset", "fashion_mnist",
      "--batch-size", "0"], "--batch-size"),
    (["analyze", "plainnet10.fashion_mnist", "--dataset", "fashion_mnist", "--out", "{out}",
      "--examples", "0"], "--examples"),
    (["analyze", "plainnet10.fashion_mnist", "--dataset", "fashion_mnist", "--out", "{out}",
      "--examples", "-5"], "--examples"),
])
def test_a_count_below_one_is_a_usage_error(argv, flag, tmp_path, capsys):
    out = tmp_path / "analysis"
    with pytest.raises(SystemExit) as stopped:
        cli.main([a.replace("{out}", str(out)) for a in argv])
    assert stopped.value.code == 2
    assert_one_clear_sentence(last_line(capsys), flag, "must be a positive integer")
    assert not out.exists()


@pytest.mark.parametrize("name, tag", [("cifar-10", "cifar10"), ("Fashion-MNIST", "fashion_mnist")])
def test_a_data_tag_spelt_another_way_names_the_tag(name, tag, capsys):
    assert cli.main(["evaluate", "plainnet10", "--weights", "fashion_mnist",
                     "--dataset", name]) == 2
    assert_one_clear_sentence(last_line(capsys), repr(name), f"did you mean the data tag {tag!r}")


def test_pull_with_a_read_only_hf_home_points_at_the_local_copy(tmp_path):
    home = tmp_path / "hf"
    home.mkdir()
    home.chmod(0o555)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "keras_gated.cli", "pull", "plainnet10.fashion_mnist"],
            capture_output=True, text=True, timeout=300, cwd=ROOT,
            env={**__import__("os").environ, "HF_HOME": str(home), "HF_HUB_OFFLINE": "1"})
    finally:
        home.chmod(0o755)
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip().splitlines()[-1]
    assert_one_clear_sentence(line, "already here", str(ZOO / "plainnet10.fashion_mnist"))
