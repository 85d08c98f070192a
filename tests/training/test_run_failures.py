"""What a user of training.train / training.finetune / training.release meets when a run
goes wrong: one sentence, exit 2 (bad input) or 1 (the environment), no traceback, no
half-written file or empty folder, and earlier results untouched.

Failures are launched as a user would, with ``python -m ...`` in a subprocess, where
something outside Python's own error path could show (a crash on exit, a traceback printed
by a library, a second process); the other cases call the same ``main`` in-process, which
saves a Keras start-up each."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import keras
import pytest

import keras_gated as kg
from tests.support.helpers import make_image_folder
from training import finetune, release, train

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ["--model", "gresnetfc2", "--batch-size", "16", "--epochs", "2", "--verbose", "0"]


# --- helpers ----------------------------------------------------------------------------
def launch(module: str, *args: str) -> subprocess.Popen:
    """``python -m training.<module> args`` on the backend of this test run."""
    env = {**os.environ, "KERAS_BACKEND": keras.backend.backend(), "TF_CPP_MIN_LOG_LEVEL": "2"}
    env.pop("KERAS_GATED_DEBUG", None)
    return subprocess.Popen([sys.executable, "-m", f"training.{module}", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def cli(module: str, *args: str) -> subprocess.CompletedProcess:
    process = launch(module, *args)
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def error_line(module: str, stderr: str) -> str:
    """The one error sentence of a failed command; no traceback around it."""
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.startswith(f"training.{module}: ")]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


def assert_fails(result: subprocess.CompletedProcess, module: str, code: int, *words: str) -> str:
    assert result.returncode == code, (result.returncode, result.stderr[-3000:])
    line = error_line(module, result.stderr)
    for word in words:
        assert word in line, line
    return line


def snapshot(folder: Path) -> dict[str, str]:
    """Every file (sha256) and folder under ``folder``: what a failed launch must not change."""
    state = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        state[key] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return state


def log_epochs(log: Path) -> list[int]:
    assert log.read_text().count("epoch,") == 1  # one header
    with log.open() as f:
        return [int(row["epoch"]) for row in csv.DictReader(f)]


def mount_tmpfs(folder: Path, options: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({result.stderr.strip() or 'not root'})")


@pytest.fixture
def tmpfs(tmp_path):
    """``tmpfs("size=1m")``: a fresh tmpfs folder, unmounted after the test."""
    mounted = []

    def make(options: str) -> Path:
        folder = tmp_path / f"tmpfs{len(mounted)}"
        mount_tmpfs(folder, options)
        mounted.append(folder)
        return folder

    yield make
    for folder in mounted:
        subprocess.run(["umount", str(folder)], check=False)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_image_folder(tmp_path_factory.mktemp("data") / "tiny", per_class=(24, 8))


@pytest.fixture(scope="module")
def finished(data, tmp_path_factory) -> Path:
    """A finished 2-epoch run (batch 16), trained once; tests copy it."""
    out = tmp_path_factory.mktemp("finished") / "gresnetfc2.tiny"
    assert train.main([*TRAIN, "--dataset", str(data), "--out", str(out)]) == 0
    return out


@pytest.fixture
def run_copy(finished, tmp_path) -> Path:
    copy = tmp_path / "runs" / finished.name
    shutil.copytree(finished, copy)
    return copy


# --- resume only the same run ---------------------------------------------------------------
def test_a_backup_is_resumed_only_by_the_run_that_wrote_it(data, run_copy, capsys):
    (run_copy / "metrics.json").unlink()  # as if killed after the last epoch's backup
    assert json.loads((run_copy / "fingerprint.json").read_text())["model"] == "gresnetfc2"
    before = snapshot(run_copy.parent)
    for change, difference in ((["--model", "plainnet2"], "model: stored 'gresnetfc2', now 'plainnet2'"),
                               (["--batch-size", "8"], "batch_size: stored 16, now 8")):
        assert train.main([*TRAIN, *change, "--dataset", str(data), "--out", str(run_copy)]) == 2
        line = error_line("train", capsys.readouterr().err)
        assert "backup of another run" in line and difference in line and "new --out" in line
        assert snapshot(run_copy.parent) == before

    # A backup without its fingerprint has unknown settings: refused, never adopted.
    (run_copy / "fingerprint.json").unlink()
    before = snapshot(run_copy.parent)
    assert train.main([*TRAIN, "--dataset", str(data), "--out", str(run_copy)]) == 2
    line = error_line("train", capsys.readouterr().err)
    assert "no fingerprint.json" in line and "--restart" in line and "delete" not in line
    assert snapshot(run_copy.parent) == before


# --- a finished run is only reported ------------------------------------------------------
def test_a_finished_run_is_never_rewritten(data, run_copy, capsys):
    metrics = json.loads((run_copy / "metrics.json").read_text())
    assert "batch 16" in metrics["recipe"]  # the batch used, not the recipe's 128
    before = snapshot(run_copy.parent)
    assert_fails(cli("train", *TRAIN, "--epochs", "3", "--dataset", str(data), "--out", str(run_copy)),
                 "train", 2, "finished run of 2 epochs", "epochs: stored 2, now 3", "new --out")
    assert train.main([*TRAIN, "--epochs", "1", "--dataset", str(data), "--out", str(run_copy)]) == 2
    assert "finished run of 2 epochs" in capsys.readouterr().err
    assert train.main([*TRAIN, "--dataset", str(data), "--out", str(run_copy)]) == 0
    assert "already finished" in capsys.readouterr().out
    assert snapshot(run_copy.parent) == before


# --- one run per folder ----------------------------------------------------------------------
def test_a_second_run_on_a_busy_folder_fails_at_once_and_the_run_resumes(data, tmp_path, capsys):
    out = tmp_path / "run"
    command = [*TRAIN, "--epochs", "6", "--batch-size", "8", "--dataset", str(data), "--out", str(out)]
    first = launch("train", *command)
    try:
        deadline = time.time() + 240
        while not (out / "backup" / "latest.json").exists():
            assert first.poll() is None and time.time() < deadline, first.stderr.read()[-3000:]
            time.sleep(0.02)
        first.send_signal(signal.SIGSTOP)  # it holds the lock, frozen mid-run
        assert (out / "run.lock").read_text().strip() == str(first.pid)
        before = snapshot(out)
        started = time.time()
        assert train.main(command) == 2  # the second run: this test's own process
        assert time.time() - started < 5  # at once: before any data is loaded
        line = error_line("train", capsys.readouterr().err)
        assert f"pid {first.pid}" in line and "in use by another run" in line
        assert snapshot(out) == before
    finally:
        first.kill()  # a crash: the OS releases the lock
        first.communicate()
    assert train.main(command) == 0
    assert "resuming from" in capsys.readouterr().out
    assert log_epochs(out / "log.csv") == list(range(6))
    assert not (out / "run.lock").exists()


# --- bad paths and names: one sentence, nothing left behind ----------------------------------
def test_refusals_name_the_problem_and_leave_nothing_behind(data, finished, tmp_path, tmpfs, capsys):
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    weights = tmp_path / "source.weights.h5"
    kg.GResNetFC(2).save_weights(weights)
    truncated = tmp_path / "truncated.weights.h5"
    truncated.write_bytes(weights.read_bytes()[:5000])
    no_metrics = tmp_path / "runs" / "gresnetfc2.tiny"
    shutil.copytree(finished, no_metrics)
    (no_metrics / "metrics.json").unlink()
    read_only = tmpfs("ro,size=64k")
    fresh = {case: tmp_path / f"new_{case}" for case in "abc"}  # none may be left behind
    finetune_none = ["--model", "gresnetfc2", "--weights", "none", "--dataset", str(data)]
    # In a subprocess where a library could print or crash outside Python's error path
    # (tfds, h5py) and for argparse; the rest in-process (the same run_command path).
    launched = {  # name: (module, args, exit code, words of the message)
        "unknown data set": ("train", [*TRAIN, "--dataset", "nope", "--out", str(fresh["a"] / "run")],
                             2, ["Unknown data set 'nope'", "cifar10, fashion_mnist", "image folder"]),
        "corrupt weights": ("finetune", ["--model", "gresnetfc2", "--weights", str(truncated),
                                         "--dataset", str(data), "--epochs", "1",
                                         "--out", str(fresh["b"] / "run")], 2, [str(truncated)]),
        "learning rate 0": ("finetune", [*finetune_none, "--learning-rate", "0"], 2,
                            ["--learning-rate: must be a finite number > 0"]),
        "learning rate nan": ("finetune", [*finetune_none, "--learning-rate", "nan"], 2,
                              ["--learning-rate: must be a finite number > 0"]),
    }
    in_process = {
        "out is a file": (train.main, [*TRAIN, "--dataset", str(data), "--out", str(a_file)],
                          2, [str(a_file), "is a file, not a folder"]),
        "out under a file": (train.main, [*TRAIN, "--dataset", str(data), "--out", str(a_file / "run")],
                             2, [str(a_file), "which is a file"]),
        "out read-only": (train.main, [*TRAIN, "--dataset", str(data), "--out", str(read_only / "run")],
                          1, [str(read_only / "run"), "read-only"]),
        "unknown model": (train.main, [*TRAIN, "--model", "nomodel", "--dataset", str(data),
                                       "--out", str(fresh["c"])], 2, ["'nomodel'"]),
        "release without metrics": (release.main, [str(no_metrics)], 2,
                                    [str(no_metrics), "has no metrics.json"]),
    }
    zoo_before = sorted(p.name for p in (ROOT / "zoo").iterdir())
    before = snapshot(tmp_path)
    running = {name: launch(module, *args) for name, (module, args, _, _) in launched.items()}
    for name, (main, args, code, words) in in_process.items():
        assert main(args) == code, name
        line = error_line(main.__module__.split(".")[-1], capsys.readouterr().err)
        assert all(word in line for word in words), line
    for name, process in running.items():
        stdout, stderr = process.communicate(timeout=300)
        module, _, code, words = launched[name]
        result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        if name.startswith("learning rate"):  # argparse's usage and message, before any import
            assert result.returncode == 2 and all(word in stderr for word in words), stderr
            continue
        line = assert_fails(result, module, code, *words)
        assert line.rstrip().endswith("."), line  # a whole sentence, never cut off
    assert snapshot(tmp_path) == before
    assert not any(folder.exists() for folder in fresh.values())
    assert sorted(p.name for p in (ROOT / "zoo").iterdir()) == zoo_before


def test_corrupt_run_files_are_named_with_what_to_do(data, run_copy, capsys):
    text = (run_copy / "metrics.json").read_text()
    (run_copy / "metrics.json").write_text(text[: len(text) // 2])  # truncated
    before = snapshot(run_copy.parent)
    assert train.main([*TRAIN, "--dataset", str(data), "--out", str(run_copy)]) == 2
    line = error_line("train", capsys.readouterr().err)
    assert f"{run_copy / 'metrics.json'} is corrupt" in line and "--restart" in line
    assert "delete" not in line  # a record is never to be deleted to get past a check
    assert snapshot(run_copy.parent) == before

    (run_copy / "metrics.json").unlink()
    (run_copy / "run_state.json").write_text("")
    before = snapshot(run_copy.parent)
    assert train.main([*TRAIN, "--dataset", str(data), "--out", str(run_copy)]) == 2
    assert f"{run_copy / 'run_state.json'} is corrupt (empty)" in capsys.readouterr().err
    assert snapshot(run_copy.parent) == before


# --- a full disk ---------------------------------------------------------------------------
@pytest.mark.parametrize("size", ["1m", "2m"])  # fails on a .keras checkpoint / on a backup
def test_a_full_disk_ends_the_run_in_one_sentence(data, tmpfs, size):
    out = tmpfs(f"size={size}") / "run"
    result = cli("train", *TRAIN, "--epochs", "3", "--dataset", str(data), "--out", str(out))
    assert_fails(result, "train", 1, "the disk is full")
    assert not (out / "metrics.json").exists()
    assert not [p for p in out.rglob("*") if "partial" in p.name]  # no half-written file
    assert json.loads((out / "backup" / "latest.json").read_text())["epoch"] >= 1  # kept


# --- fine-tuning --------------------------------------------------------------------------
def test_finetune_nan_writes_no_zoo_folder_and_says_what_exists(data, tmp_path, capsys):
    out = tmp_path / "nan"
    code = finetune.main(["--model", "gresnetfc2", "--weights", "none", "--dataset", str(data),
                          "--learning-rate", "1e30", "--epochs", "2", "--batch-size", "8",
                          "--out", str(out), "--verbose", "0"])
    err = capsys.readouterr().err
    assert code == 1 and "loss became NaN" in err
    assert "no backup" in err and "is kept" not in err
    assert not (out / "zoo").exists() and not (out / "metrics.json").exists()


def test_finetune_on_a_folder_named_with_a_space_writes_its_zoo_folder(data, tmp_path, capsys):
    spaced = tmp_path / "Tiny Data"
    shutil.copytree(data, spaced)
    out = tmp_path / "run"
    command = ["--model", "gresnetfc2", "--weights", "none", "--dataset", str(spaced),
               "--epochs", "1", "--batch-size", "16", "--out", str(out), "--verbose", "0"]
    assert finetune.main(command) == 0
    assert (out / "zoo" / "gresnetfc2.tiny_data" / "model.weights.h5").is_file()
    assert finetune.main(command) == 0 and "already finished" in capsys.readouterr().out
    # A name with no letter or digit gives no weight id: refused before anything is written.
    dashes = tmp_path / "---"
    shutil.copytree(data, dashes)
    assert finetune.main([*command[:5], str(dashes), *command[6:-3], str(tmp_path / "x"),
                          "--verbose", "0"]) == 2
    assert "no valid weight id" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
