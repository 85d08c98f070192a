"""A run folder whose backup pointer names a missing file or whose log is garbage is refused
in one sentence, and nothing in it is lost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


from training import train
from tests.support.helpers import assert_one_clear_sentence, last_line


def _unfinished_copy(finished_run: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    (out / "metrics.json").unlink()
    return out


def _resume(out: Path, finished_run: Path) -> int:
    return train.main(["--model", "gresnetfc2", "--dataset", str(finished_run.parent / "rgb"),
                       "--epochs", "2", "--batch-size", "8", "--out", str(out),
                       "--verbose", "0"])


def _snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# --- run folders -------------------------------------------------------------------------------
def test_a_backup_pointer_naming_a_missing_file_is_refused_and_nothing_lost(finished_run,
                                                                            tmp_path, capsys):
    out = _unfinished_copy(finished_run, tmp_path)
    pointer = out / "backup" / "latest.json"
    record = json.loads(pointer.read_text())
    record["weights"] = "epoch-0009.weights.h5"
    pointer.write_text(json.dumps(record))
    before = _snapshot(out)
    assert _resume(out, finished_run) == 2
    assert_one_clear_sentence(last_line(capsys), str(out / "backup" / "epoch-0009.weights.h5"),
                              "missing", "--restart")
    assert _snapshot(out) == before


def test_a_garbage_log_is_refused_and_nothing_lost(finished_run, tmp_path, capsys):
    out = _unfinished_copy(finished_run, tmp_path)
    (out / "log.csv").write_bytes(b"garbage\x00\x01,,,\nnot,a,log\n")
    before = _snapshot(out)
    assert _resume(out, finished_run) == 2
    assert_one_clear_sentence(last_line(capsys), str(out / "log.csv"), "corrupt", "--restart")
    assert _snapshot(out) == before
