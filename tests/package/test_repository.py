"""The repository stays lean: the library, its training and the paper experiments, with no
run state in git but that of the experiment runs in flight (their last backup, so that a
run resumes in another checkout, kept apart in ``experiments/in_flight/`` and emptied when
the run ends). Released checkpoints live in ``zoo/`` and nowhere else.

These tests read ``git ls-files``; outside a git checkout (an unpacked sdist) they skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.zoo import KERAS_HUB_FILES, ZOO_FILES

ROOT = Path(__file__).resolve().parents[2]
MB = 1024 * 1024
MAX_OUTSIDE_ZOO = 15 * MB  # all tracked files outside zoo/ and the runs in flight
MAX_FILE_OUTSIDE_ZOO = 5 * MB
MAX_IN_FLIGHT = 50 * MB  # the experiment runs in flight, all together
WEIGHT_SUFFIXES = (".h5", ".keras", ".npz", ".pt", ".pth", ".safetensors", ".ckpt")
# A released checkpoint folder: zoo/<model>.<data set>/ with ZOO_FILES, and optionally a
# keras-hub preset in keras_hub/ with KERAS_HUB_FILES (tests/support/zoo.py).
ZOO_FOLDER_NAME = re.compile(r"^[a-z0-9_]+\.[a-z0-9_]+$")


def tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    result = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    files = [name for name in result.stdout.decode().split("\0") if name]
    # A file deleted in the work tree but not yet from the index is not part of the tree.
    return [name for name in files if (ROOT / name).is_file()]


def size(name: str) -> int:
    return (ROOT / name).stat().st_size


def test_no_run_state_is_tracked():
    files = tracked_files()
    assert len(files) > 100  # the listing really was read
    assert [f for f in files if f.startswith("training/runs/")] == []
    in_flight = [f for f in files if f.startswith("experiments/in_flight/")]
    # Weights only as a run's last backup (experiments/in_flight/<paper>/<run>/backup/).
    assert [f for f in in_flight if f.endswith(WEIGHT_SUFFIXES)
            and not IN_FLIGHT_BACKUP.match(f)] == []
    assert sum(map(size, in_flight)) <= MAX_IN_FLIGHT


# A run's backup: a training run's backup/<file>, a compress run's backup/settings.json
# and each phase's backup/<phase>/backup/<file> (keras_gated.training.phases).
IN_FLIGHT_BACKUP = re.compile(
    r"^experiments/in_flight/(?P<paper>[^/]+)/(?P<run>[^/]+)/backup/(?:[a-z]+/backup/)?[^/]+$")


def ended_runs_with_a_backup(files: list[str]) -> list[str]:
    """The in-flight backups of runs that have ended (experiments/<paper>/results/<run>/
    status.json exists): their queue empties them. A Fig. 5 pair's backups stay until the
    pair's removal analysis is kept (results/fig5.d100.e<E>.s<seed>/analysis.json)."""
    stale = []
    for name in files:
        match = IN_FLIGHT_BACKUP.match(name)
        if not match:
            continue
        results = ROOT / "experiments" / match["paper"] / "results"
        run = match["run"]
        if not (results / run / "status.json").is_file():
            continue
        pair = re.match(r"^fig5\.[a-z]+100\.e(\d+)\.s(\d+)$", run)
        if pair and not (results / f"fig5.d100.e{pair[1]}.s{pair[2]}" / "analysis.json").is_file():
            continue
        stale.append(name)
    return stale


def unresumable_backups(files: list[str], read) -> list[str]:
    """The tracked backup records of in-flight runs that name a weights file git does not
    track: a training run's ``backup/latest.json`` and each phase's
    ``backup/<phase>/backup/latest.json`` of a compress run. ``read(name)`` gives a
    tracked file's text."""
    tracked = set(files)
    broken = []
    for name in files:
        match = IN_FLIGHT_BACKUP.match(name)
        if not match or not name.endswith("/latest.json"):
            continue
        record = json.loads(read(name))
        folder = name.rsplit("/", 1)[0]
        if f"{folder}/{record['weights']}" not in tracked:
            broken.append(name)
    return broken


def test_every_backup_in_flight_can_resume():
    # The records and the file list as git holds them (the index): a run still in flight
    # in this checkout moves its latest.json on to a weights file that the next hand-over
    # adds, and removes the one before.
    def staged(name: str) -> str:
        return subprocess.run(["git", "show", f":{name}"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout

    tracked_files()  # skips outside a git checkout
    listed = subprocess.run(["git", "ls-files", "-z", "experiments/in_flight"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    assert unresumable_backups([name for name in listed if name], staged) == []


def test_the_resume_check_finds_a_pointer_to_a_missing_file():
    run = "experiments/in_flight/highway/hwfig1s.highwayfc50.s2.e10/backup"
    texts = {f"{run}/latest.json": '{"epoch": 4, "weights": "epoch-0004.weights.h5"}',
             f"{run}/settings.json": "{}",
             "experiments/in_flight/compression/c/backup/settings.json": "{}",
             "experiments/in_flight/compression/c/backup/pressure/backup/latest.json":
                 '{"epoch": 1, "weights": "epoch-0001.weights.h5"}',
             "experiments/in_flight/compression/c/backup/pressure/backup/epoch-0001.weights.h5": "",
             "experiments/in_flight/compression/d/backup/finetune/backup/latest.json":
                 '{"epoch": 2, "weights": "epoch-0002.weights.h5"}'}
    assert unresumable_backups(list(texts), texts.__getitem__) == [
        f"{run}/latest.json", "experiments/in_flight/compression/d/backup/finetune/backup/latest.json"]


# The checks of the tracked tree, which the clone below runs.
TREE_CHECKS = ("test_no_run_state_is_tracked", "test_no_weight_file_outside_zoo",
               "test_tracked_files_outside_zoo_stay_small", "test_every_backup_in_flight_can_resume",
               "test_an_ended_run_leaves_no_backup_in_flight")


@pytest.mark.skipif(os.environ.get("KERAS_GATED_IN_A_CLONE") == "1", reason="inside the clone")
def test_a_clone_with_a_run_in_flight_committed_passes_the_repository_checks(tmp_path):
    """CONTRIBUTING's hand-over, end to end: commit a run's last backup in flight in a
    clone, and this module's checks pass there."""
    tracked_files()  # skips outside a git checkout
    clone = tmp_path / "clone"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    for rules in (".gitignore", "tests/package/test_repository.py"):  # the rules as they are here
        shutil.copyfile(ROOT / rules, clone / rules)
    backup = clone / "experiments/in_flight/residual_gates/rgtable.plainnet2.e20.t1.s7/backup"
    backup.mkdir(parents=True)
    (backup / "epoch-0003.weights.h5").write_bytes(b"\0" * (5 * MB + 1))  # over the 5 MB file cap
    (backup / "latest.json").write_text('{"epoch": 3, "weights": "epoch-0003.weights.h5"}')
    (backup.parent / "log.csv").write_text("epoch,loss\n0,1.0\n")
    subprocess.run(git + ["add", ".gitignore", "tests", "experiments/in_flight"], cwd=clone, check=True)
    subprocess.run(git + ["commit", "-qm", "runs in flight"], cwd=clone, check=True)
    listed = subprocess.run(["git", "ls-files", str(backup.parent.relative_to(clone))], cwd=clone,
                            capture_output=True, text=True, check=True).stdout.split()
    assert len(listed) == 3  # the backup, its pointer and the log: nothing ignored
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "tests/package/test_repository.py", "-k", " or ".join(TREE_CHECKS)], cwd=clone,
        capture_output=True, text=True,
        env={**os.environ, "KERAS_GATED_IN_A_CLONE": "1"})
    assert result.returncode == 0 and f"{len(TREE_CHECKS)} passed" in result.stdout, result.stdout[-3000:]


def test_an_ended_run_leaves_no_backup_in_flight():
    assert ended_runs_with_a_backup(tracked_files()) == []


def stray_weights(files: list[str]) -> list[str]:
    """Weight files outside zoo/ that are not an in-flight run's backup."""
    return [f for f in files if f.endswith(WEIGHT_SUFFIXES) and not f.startswith("zoo/")
            and not IN_FLIGHT_BACKUP.match(f)]


def too_big_outside_zoo(files: list[str], sizes) -> list[str]:
    """Files over MAX_FILE_OUTSIDE_ZOO outside zoo/ and the in-flight runs (whose total
    is capped on its own)."""
    return [f for f in files if not f.startswith(("zoo/", "experiments/in_flight/"))
            and sizes(f) > MAX_FILE_OUTSIDE_ZOO]


def test_no_weight_file_outside_zoo():
    assert stray_weights(tracked_files()) == []


def test_tracked_files_outside_zoo_stay_small():
    outside = [f for f in tracked_files() if not f.startswith(("zoo/", "experiments/in_flight/"))]
    total = sum(map(size, outside))
    assert 0 < total <= MAX_OUTSIDE_ZOO, f"{total / MB:.1f} MB tracked outside zoo/"
    assert too_big_outside_zoo(tracked_files(), size) == []


def test_an_in_flight_backup_passes_the_size_and_weight_checks():
    """A committed in-flight backup (CONTRIBUTING, "Long runs") is neither a stray weight
    file nor an oversized file; the same file anywhere else outside zoo/ is both."""
    backup = "experiments/in_flight/compression/gresnet20-m075/backup/pressure/backup/epoch-0001.weights.h5"
    elsewhere = "experiments/compression/results/gresnet20-m075/epoch-0001.weights.h5"
    six_mb = {backup: 6 * MB, elsewhere: 6 * MB}.get
    assert stray_weights([backup, elsewhere]) == [elsewhere]
    assert too_big_outside_zoo([backup, elsewhere], six_mb) == [elsewhere]


def test_zoo_holds_only_released_checkpoint_folders():
    zoo = [f.split("/")[1:] for f in tracked_files() if f.startswith("zoo/")]
    assert ["README.md"] in zoo
    folders: dict[str, set[str]] = {}
    for parts in zoo:
        if parts == ["README.md"]:
            continue
        assert len(parts) in (2, 3), f"zoo/{'/'.join(parts)} is not in a checkpoint folder"
        assert ZOO_FOLDER_NAME.match(parts[0]), f"zoo/{parts[0]} is not a <model>.<data> folder"
        if len(parts) == 3:
            assert parts[1] == "keras_hub" and parts[2] in KERAS_HUB_FILES, f"zoo/{'/'.join(parts)}"
            continue
        folders.setdefault(parts[0], set()).add(parts[1])
    assert len(folders) >= 10
    for folder, files in folders.items():
        assert files == zoo_files(ROOT / "zoo" / folder), f"zoo/{folder} holds {sorted(files)}"


def zoo_files(folder: Path) -> set[str]:
    """The files a zoo folder holds: ``ZOO_FILES``, with a sharded release's index and the
    shards it lists in place of ``model.weights.h5``."""
    from keras_gated.weights.shards import SHARD_INDEX, shard_names

    if not (folder / SHARD_INDEX).is_file():
        return ZOO_FILES
    return ZOO_FILES - {"model.weights.h5"} | {SHARD_INDEX, *shard_names(folder / SHARD_INDEX)}


def test_every_tracked_file_fits_a_shard():
    """No tracked file is larger than a release shard (45 MB): a large release is sharded,
    and nothing else comes near the size."""
    from keras_gated.weights.shards import MAX_SHARD_BYTES

    assert [f for f in tracked_files() if size(f) > MAX_SHARD_BYTES] == []


def test_a_sharded_zoo_folder_is_its_index_and_shards(tmp_path):
    index = tmp_path / "model.weights.json"
    index.write_text(json.dumps({"metadata": {}, "weight_map": {
        "/layers/dense/vars": "model_00001.weights.h5", "/layers/conv/vars": "model_00000.weights.h5"}}))
    assert zoo_files(tmp_path) == (ZOO_FILES - {"model.weights.h5"}) | {
        "model.weights.json", "model_00000.weights.h5", "model_00001.weights.h5"}


def test_the_in_flight_check_tells_an_ended_run_from_an_unfinished_one():
    ended = "experiments/in_flight/residual_gates/rgtable.plainnet2.e20.t1.s0/backup/latest.json"
    assert (ROOT / "experiments/residual_gates/results/rgtable.plainnet2.e20.t1.s0/status.json").is_file()
    unfinished = "experiments/in_flight/residual_gates/rgtable.never.started/backup/latest.json"
    outside = "experiments/in_flight/residual_gates/rgtable.plainnet2.e20.t1.s0/log.csv"
    assert ended_runs_with_a_backup([ended, unfinished, outside]) == [ended]
    assert IN_FLIGHT_BACKUP.match(unfinished) and not IN_FLIGHT_BACKUP.match(outside)


def _ignored(paths: list[str]) -> set[str]:
    """The paths among ``paths`` that git ignores (the files need not exist)."""
    result = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT,
                            input="\n".join(paths), capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    return set(result.stdout.split())


def test_what_a_run_needs_to_resume_can_be_committed_in_flight(tmp_path):
    """Every file a training run's EpochBackup and a compress run's RunBackup write, and
    the run records training.train resumes from, may be committed under
    experiments/in_flight/; partial writes, locks and finished outputs may not."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    import keras
    import numpy as np

    from keras_gated.training.callbacks import EpochBackup
    from keras_gated.training.phases import PhaseBackup, train_phase

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(keras.ops.ones((4, 3)), keras.ops.ones((4, 2)), verbose=0)
    training = EpochBackup(tmp_path / "train" / "backup")
    training.set_model(model)
    training.write(2)
    compress = PhaseBackup(tmp_path / "compress" / "backup", {"macs": 0.5})
    classifier = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="predictions")])
    train_phase(classifier, (np.ones((4, 3)), np.zeros(4)), epochs=1, batch_size=4,
                learning_rate=0.01, backup=compress, phase="pressure")
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert "train/backup/latest.json" in written
    assert "compress/backup/pressure/backup/epoch-0001.weights.h5" in written
    assert "compress/backup/pressure/log.csv" in written
    run = "experiments/in_flight/residual_gates/rgtable.plainnet2.e20.t1.s9"
    wanted = [f"{run}/{name}" for name in written]
    wanted += [f"{run}/{name}" for name in ("fingerprint.json", "log.csv", "run_state.json",
                                             "gates.csv", "compress.log")]
    wanted.append("experiments/in_flight/residual_gates/logs/rgtable.plainnet2.e20.t1.s9.log")
    never = [f"{run}/{name}" for name in ("backup/partial/epoch-0003.weights.h5",
                                          "backup/finetune/backup/partial/epoch-0001.weights.h5", "last.keras",
                                          "model.weights.h5", "out/model.weights.h5",
                                          "out/compression.json")]
    never.append("experiments/in_flight/residual_gates/logs/queue.lock")
    ignored = _ignored(wanted + never)
    assert [p for p in wanted if p in ignored] == []
    assert [p for p in never if p not in ignored] == []
