"""The pieces of the one-lease training path (training.lease): the packed data, the
bundle, the schedule sized to a deadline, the wheels' unpacking and the compiled step."""

import json
import zipfile
from pathlib import Path

import keras
import ml_dtypes
import numpy as np
import pytest

from tests.support.data import jpegs
from training.lease import bundle as bundle_io
from training.lease.bootstrap import unpack_wheels
from training.lease.compact_data import array_sha256, load_split, pack, unpack
from training.lease.prepare import summarize
from training.lease.run import size_schedule
from keras_gated.training.schedules import WarmupLinearDecay, warmup_linear_decay

jax_only = pytest.mark.skipif(keras.backend.backend() != "jax",
                              reason="the compiled lease step is JAX's (the lease host has JAX)")


# -- packed data ---------------------------------------------------------------------------
def test_a_packed_split_rebuilds_every_jpeg_byte_for_byte_and_stores_the_header_once():
    files = jpegs(12)
    packed = pack(files, np.arange(12) % 10)
    assert unpack(packed) == files
    header = packed["header"].size
    assert header > 500  # tables and frame header shared by every file
    assert packed["payload"].size == sum(len(f) for f in files) - 12 * header


def test_load_split_checks_the_pixels_against_the_manifest(tmp_path):
    from training.lease.compact_data import decode

    files = jpegs(6)
    labels = np.arange(6) % 10
    np.savez(tmp_path / "s.npz", **pack(files, labels))
    images = decode(files)
    entry = {"pixels_sha256": array_sha256(images), "labels_sha256": array_sha256(labels.astype(np.uint8))}
    got, got_labels = load_split(tmp_path / "s.npz", entry)
    assert np.array_equal(got, images) and np.array_equal(got_labels, labels)
    with pytest.raises(SystemExit, match="decoded pixels differ"):
        load_split(tmp_path / "s.npz", {**entry, "pixels_sha256": "0" * 64})
    with pytest.raises(SystemExit, match="labels differ"):
        load_split(tmp_path / "s.npz", {**entry, "labels_sha256": "0" * 64})


# -- the bundle ----------------------------------------------------------------------------
def weights(seed=0):
    rng = np.random.default_rng(seed)
    return [("a/kernel", rng.normal(size=(3, 3, 4, 8)).astype(np.float32), True),
            ("a/gamma", rng.normal(size=(8,)).astype(np.float32), True),
            ("a/moving_mean", rng.normal(size=(8,)).astype(np.float32), False)]


def test_the_bundle_round_trip_is_exact_bfloat16_for_trainable_and_float32_for_the_rest(tmp_path):
    named = weights()
    bundle_io.write_bundle(tmp_path / "b", named, {"status": "finished"}, [{"epoch": 1, "loss": 2.0}])
    values, manifest, metrics = bundle_io.read_bundle(tmp_path / "b")
    for path, value, low in named:
        expected = value.astype(ml_dtypes.bfloat16).astype(np.float32) if low else value
        assert values[path].dtype == np.float32 and np.array_equal(values[path], expected), path
    assert metrics == {"status": "finished"}
    assert (tmp_path / "b" / "log.csv").read_text() == "epoch,loss\n1,2.0\n"
    assert set(manifest["files"]) == {"metrics.json", "log.csv", "weights.zlib.000"}


def test_a_damaged_bundle_file_is_refused(tmp_path):
    bundle_io.write_bundle(tmp_path / "b", weights(), {}, [])
    shard = tmp_path / "b" / "weights.zlib.000"
    shard.write_bytes(shard.read_bytes()[:-1] + b"\0")
    with pytest.raises(ValueError, match="sha256"):
        bundle_io.read_bundle(tmp_path / "b")


def test_a_new_bundle_replaces_a_bundle_but_never_other_files(tmp_path):
    out = tmp_path / "b"
    bundle_io.write_bundle(out, weights(0), {"n": 0}, [])
    bundle_io.write_bundle(out, weights(1), {"n": 1}, [])
    assert bundle_io.read_bundle(out)[2] == {"n": 1}
    assert not [p for p in tmp_path.iterdir() if p != out]  # nothing left beside it
    (out / "thesis.tex").write_text("mine")
    with pytest.raises(SystemExit, match="not a lease bundle"):
        bundle_io.write_bundle(out, weights(2), {}, [])
    assert (out / "thesis.tex").read_text() == "mine"
    link = tmp_path / "link"
    link.symlink_to(out)
    with pytest.raises(SystemExit, match="symbolic link"):
        bundle_io.write_bundle(link, weights(2), {}, [])


def test_the_limits_of_what_a_call_brings_back_are_checked(tmp_path):
    for i in range(9):
        (tmp_path / f"f{i}").write_bytes(b"x")
    with pytest.raises(ValueError, match="9 files"):
        bundle_io.check_limits(tmp_path)


def test_a_large_stream_is_cut_into_shards_under_16_mib(tmp_path, monkeypatch):
    monkeypatch.setattr(bundle_io, "SHARD_RAW_BYTES", 1500)
    named = [("w", np.random.default_rng(0).normal(size=(3000,)).astype(np.float32), True)]
    manifest = bundle_io.write_bundle(tmp_path / "b", named, {}, [])
    assert len(manifest["shards"]) == 4  # 6000 bytes of bfloat16 in shards of 1500
    values, _, _ = bundle_io.read_bundle(tmp_path / "b")
    assert np.array_equal(values["w"], named[0][1].astype(ml_dtypes.bfloat16).astype(np.float32))


# -- the schedule --------------------------------------------------------------------------
def test_warmup_then_linear_decay_to_zero_at_the_last_step():
    total, peak = 200, 0.4
    lr = [float(warmup_linear_decay(t, peak, total, 0.05)) for t in range(total + 1)]
    assert lr[0] == 0.0 and lr[10] == pytest.approx(peak)  # W = 10 steps
    assert lr[5] == pytest.approx(peak / 2)
    assert lr[105] == pytest.approx(peak / 2)
    assert lr[total] == 0.0 and lr[total - 1] > 0.0
    assert all(a <= b + 1e-9 for a, b in zip(lr[:11], lr[1:11]))
    schedule = WarmupLinearDecay(peak, total, 0.05)
    assert float(schedule(57)) == pytest.approx(lr[57])
    assert WarmupLinearDecay.from_config(schedule.get_config()).total_steps == total


def test_the_schedule_is_sized_to_end_before_the_deadline():
    steps = size_schedule(now=100.0, deadline=400.0, reserve=40.0, steps_per_second=20.0,
                          snapshot_seconds=120.0, snapshot_cost=3.0, max_steps=None)
    # 260 s less two or three bundles' time, at 20 steps/s, with a 3 % margin
    assert steps * (1 / 20.0) + 40.0 + (260 / 120) * 3.0 <= 300.0
    assert steps > 0.9 * 20 * 250
    assert size_schedule(now=0.0, deadline=10.0, reserve=40.0, steps_per_second=5.0,
                         snapshot_seconds=0, snapshot_cost=0, max_steps=None) == 1
    assert size_schedule(now=0.0, deadline=1e6, reserve=0.0, steps_per_second=5.0,
                         snapshot_seconds=0, snapshot_cost=0, max_steps=12) == 12


# -- carried wheels and the travelling tree ------------------------------------------------
def test_wheels_unpack_importably_and_a_member_outside_the_folder_is_refused(tmp_path):
    import sys

    wheel = tmp_path / "demo_pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("demo_pkg_lease/__init__.py", "VALUE = 42\n")
    site = tmp_path / "site"
    site.mkdir()
    try:
        unpack_wheels([wheel], site)
        import demo_pkg_lease

        assert demo_pkg_lease.VALUE == 42
    finally:
        sys.path.remove(str(site.resolve()))
        sys.modules.pop("demo_pkg_lease", None)
    bad = tmp_path / "bad-1.0-py3-none-any.whl"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("../escape.py", "")
    with pytest.raises(ValueError, match="outside"):
        unpack_wheels([bad], tmp_path / "site2")
    assert not (tmp_path / "escape.py").exists()


def test_the_travel_summary_groups_by_folder_and_totals():
    total, groups = summarize([("zoo/a/w.h5", 10), ("zoo/a/c.json", 1), ("README.md", 2),
                               (".lease/cifar10-train.npz", 5)])
    assert total == 18
    assert groups[0] == ("zoo/a", 11)
    assert dict(groups)[".lease/cifar10-train.npz"] == 5


# -- the compiled step ---------------------------------------------------------------------
@jax_only
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_the_compiled_step_gives_the_weights_fit_gives_on_the_same_batches(label_smoothing):
    """Same model, same batches (no augmentation, no dropout), SGD with momentum, the
    recipe's L2(λ/2) weight decay and its loss (label-smoothed or not): three steps of the
    stateless compiled step against three steps of ``fit``."""
    import dataclasses

    import jax
    import jax.numpy as jnp

    import keras_gated as kg
    from keras_gated.training.losses import recipe_loss
    from keras_gated.training.recipes import get_recipe
    from training.lease.device_step import initial_state, make_train_step
    from keras_gated.training.optimizers import apply_weight_decay, decayed_variables

    recipe = dataclasses.replace(get_recipe("wrn_cifar_budget"), label_smoothing=label_smoothing)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (24, 32, 32, 3), np.uint8)
    labels = rng.integers(0, 10, (24,)).astype(np.int32)

    def fresh():
        keras.utils.set_random_seed(3)
        return kg.GResNet(8)

    reference = fresh()
    apply_weight_decay(reference, recipe)
    reference.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9, nesterov=True),
                      loss=recipe_loss(recipe))
    reference.fit(images.astype(np.float32), labels, batch_size=8, epochs=1, shuffle=False, verbose=0)

    model = fresh()
    optimizer = keras.optimizers.SGD(0.05, momentum=0.9, nesterov=True)
    state = initial_state(model, optimizer)
    step = make_train_step(model, optimizer, decayed=decayed_variables(model, recipe),
                           weight_decay=recipe.weight_decay, label_smoothing=recipe.label_smoothing)
    for i in range(3):
        state = step(state, jnp.asarray(images), jnp.asarray(labels), jnp.arange(8 * i, 8 * i + 8),
                     jax.random.PRNGKey(0))
    assert float(state.metrics[2]) == 24 and float(state.metrics[3]) == 0
    for variable, value in zip(reference.trainable_variables, state.trainable):
        np.testing.assert_allclose(np.asarray(value), np.asarray(variable), rtol=2e-4, atol=2e-5,
                                   err_msg=variable.path)
    for variable, value in zip(reference.non_trainable_variables, state.non_trainable):
        np.testing.assert_allclose(np.asarray(value), np.asarray(variable), rtol=2e-4, atol=2e-5,
                                   err_msg=variable.path)


@jax_only
def test_the_augmentation_pads_crops_and_flips_each_image_on_its_own():
    import jax
    import jax.numpy as jnp

    from keras_gated.training.transforms import Transforms
    from training.lease.device_step import augment

    images = jnp.asarray(np.random.default_rng(0).integers(0, 256, (64, 8, 8, 3)), jnp.float32)
    out = np.asarray(augment(images, jax.random.PRNGKey(1), Transforms(64, pad=2, pad_mode="reflect", flip=True)))
    assert out.shape == images.shape
    changed = [not np.array_equal(out[i], np.asarray(images[i])) for i in range(64)]
    assert 0 < sum(changed) <= 64
    same = np.asarray(augment(images, jax.random.PRNGKey(1), Transforms(64)))
    assert np.array_equal(same, np.asarray(images))
    # every output is a crop of the reflect-padded image, or its mirror
    padded = np.pad(np.asarray(images), ((0, 0), (2, 2), (2, 2), (0, 0)), mode="reflect")
    for i in range(8):
        crops = [padded[i, y:y + 8, x:x + 8] for y in range(5) for x in range(5)]
        assert any(np.array_equal(out[i], c) or np.array_equal(out[i], c[:, ::-1]) for c in crops)


def test_the_lease_pads_as_the_engines_do():
    """A recipe with pad_mode="mean" pads with the model's normalisation mean on the lease
    too (fb.resnet.torch's zero padding of normalised images), not with black pixels."""
    from keras_gated import create_model
    from keras_gated.training.pipeline import normalisation_mean
    from keras_gated.training.recipes import get_recipe
    from keras_gated.training.transforms import Transforms
    from training.lease.run import lease_transforms

    model = create_model("gresnet20")
    mean = normalisation_mean(model)
    assert isinstance(mean, list) and len(mean) == 3 and min(mean) > 50  # CIFAR-10 means, 0-255
    recipe = get_recipe("preact_cifar")
    assert recipe.pad_mode == "mean"
    on_lease = lease_transforms(recipe, model, 128, seed=3)
    assert on_lease == Transforms.from_recipe(recipe, training=True, batch_size=128, seed=3,
                                              drop_remainder=True, pad_fill=mean)
    assert on_lease.fill == tuple(mean)


def test_the_flagship_recipe_is_registered_with_a_budget_schedule():
    from keras_gated.training.recipes import get_recipe
    from keras_gated.training.optimizers import learning_rate_schedule

    recipe = get_recipe("wrn_cifar_budget")
    assert recipe.lr_schedule == "warmup_linear" and recipe.dropout == 0.3
    schedule = learning_rate_schedule(recipe.with_epochs(10), steps_per_epoch=20)
    assert isinstance(schedule, WarmupLinearDecay) and schedule.total_steps == 200
    assert "linearly to 0" in recipe.describe()


def test_json_of_the_recipe_survives_the_bundle(tmp_path):
    import dataclasses

    from keras_gated.training.recipes import get_recipe

    record = {"recipe_fields": dataclasses.asdict(get_recipe("wrn_cifar_budget"))}
    bundle_io.write_bundle(tmp_path / "b", weights(), record, [])
    assert json.loads((tmp_path / "b" / "metrics.json").read_text())["recipe_fields"]["warmup"] == 0.05
    assert Path(tmp_path / "b" / "manifest.json").is_file()


# -- leaving large releases behind for a call -----------------------------------------------
def _repo(tmp_path):
    import subprocess

    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True,
                              capture_output=True, text=True).stdout

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    for name, size in (("zoo/big.cifar10/w.h5", 5000), ("zoo/small.cifar10/w.h5", 100), ("README.md", 10)):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x" * size)
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("/.lease/\n")
    (tmp_path / ".gitignore").write_text("!zoo/**\n")  # as the project's: zoo/ never ignored
    git("add", ".")
    git("commit", "-q", "-m", "init")
    return git


def test_leave_behind_takes_a_release_out_of_the_call_and_restore_brings_it_back(tmp_path):
    from training.lease.prepare import travelling_files
    from training.lease.travel import largest_releases, leave_behind, left_behind, restore

    git = _repo(tmp_path)
    files = travelling_files(tmp_path, tmp_path / ".lease")
    assert largest_releases(files, 1000) == ["zoo/big.cifar10"]
    assert largest_releases(files, 0) == []
    leave_behind(tmp_path, ["zoo/big.cifar10"])
    names = [n for n, _ in travelling_files(tmp_path, tmp_path / ".lease")]
    assert "zoo/big.cifar10/w.h5" not in names and "zoo/small.cifar10/w.h5" in names
    assert not (tmp_path / "zoo/big.cifar10").exists()  # parked in the git directory
    assert left_behind(tmp_path) == ["zoo/big.cifar10"]  # recorded where a new shell finds it
    with pytest.raises(SystemExit, match="already left behind"):
        leave_behind(tmp_path, ["zoo/small.cifar10"])
    assert restore(tmp_path) == ["zoo/big.cifar10"]
    assert "zoo/big.cifar10/w.h5" in [n for n, _ in travelling_files(tmp_path, tmp_path / ".lease")]
    assert git("status", "--porcelain") == ""  # the index and the files are as committed
    assert (tmp_path / "zoo/big.cifar10/w.h5").stat().st_size == 5000
    assert restore(tmp_path) == []  # again: nothing to do


def _snapshot(tmp_path, git):
    """The index entries, git's status and every file under zoo/ of the checkout."""
    files = {str(p.relative_to(tmp_path)): p.read_bytes()
             for p in sorted((tmp_path / "zoo").rglob("*")) if p.is_file()}
    return git("ls-files", "-s"), git("status", "--porcelain"), files


def _stage_changes(tmp_path, git):
    """A staged change, a new staged file, a staged change the working copy differs from,
    and an untracked file, all in the release folder that is left behind."""
    folder = tmp_path / "zoo/big.cifar10"
    (folder / "w.h5").write_bytes(b"y" * 5000)
    (folder / "new.txt").write_text("n\n")
    (folder / "card.md").write_text("staged\n")
    git("add", "zoo/big.cifar10")
    (folder / "card.md").write_text("working copy\n")
    (folder / "untracked.txt").write_text("u\n")


def test_restore_gives_back_the_index_exactly_with_staged_and_new_files(tmp_path):
    from training.lease.travel import leave_behind, restore

    git = _repo(tmp_path)
    _stage_changes(tmp_path, git)
    before = _snapshot(tmp_path, git)
    leave_behind(tmp_path, ["zoo/big.cifar10"])
    assert "zoo/big.cifar10" not in git("ls-files", "-s")
    assert restore(tmp_path) == ["zoo/big.cifar10"]
    assert _snapshot(tmp_path, git) == before


@pytest.mark.parametrize("step, call", [("index", 1), ("move", 1), ("index", 2), ("move", 2)])
def test_restore_after_a_killed_leave_behind_puts_everything_back(tmp_path, monkeypatch,
                                                                  step, call):
    """Killed before its ``call``-th index change or folder move (of two folders)."""
    from training.lease import travel

    git = _repo(tmp_path)
    _stage_changes(tmp_path, git)
    before = _snapshot(tmp_path, git)
    owner, name = (travel, "_set_index") if step == "index" else (travel.shutil, "move")
    original, calls = getattr(owner, name), []

    def killed(*args, **kwargs):
        calls.append(args)
        if len(calls) == call:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(owner, name, killed)
        with pytest.raises(KeyboardInterrupt):
            travel.leave_behind(tmp_path, ["zoo/big.cifar10", "zoo/small.cifar10"])
    assert travel.restore(tmp_path) == ["zoo/big.cifar10", "zoo/small.cifar10"]
    assert _snapshot(tmp_path, git) == before
    assert travel.left_behind(tmp_path) == []


@pytest.mark.parametrize("command", ["leave-behind", "restore"])
def test_leave_behind_and_restore_outside_a_checkout_say_where_to_run(tmp_path, command):
    from training.lease.__main__ import main

    with pytest.raises(SystemExit) as exit_info:
        main([command, "--root", str(tmp_path)])
    assert exit_info.value.code == (f"python -m training.lease {command} must run from the top "
                                    "of the project's git checkout: cd to it.")


def test_the_flagship_bundle_fits_what_a_call_brings_back(tmp_path):
    """G-WRN-28-10's bundle (36.5 M parameters) is at most 8 files of at most 16 MiB and
    60 MiB in all; the trained one a lease brought back was 8 files, 49.7 MB."""
    import keras_gated as kg

    keras.utils.set_random_seed(0)
    model = kg.GWideResNet(4, 10)
    # The limits hold at any compression level: a shard holds at most SHARD_RAW_BYTES
    # before compression, so the fastest level shows them (level 9 only makes the shards
    # smaller, and takes 12 times as long on random weights).
    manifest = bundle_io.write_bundle(tmp_path / "b", bundle_io.model_weights(model),
                                      {"status": "finished"}, [{"epoch": 1}], level=1)
    bundle_io.check_limits(tmp_path / "b")
    assert len(list((tmp_path / "b").iterdir())) <= 8
    assert manifest["raw_bytes"] > 2 * 36_000_000  # every parameter, in bfloat16


def test_the_recorded_command_keeps_a_relative_out_and_hides_an_outside_one(tmp_path, monkeypatch):
    from training.lease.run import recorded_command

    monkeypatch.chdir(tmp_path)
    argv = ["run", "--model", "gwrn_28_10", "--minutes", "9.4", "--out", "X"]
    assert recorded_command(argv, "X").endswith("--minutes 9.4 --out X")
    outside = str(tmp_path.parent / "elsewhere" / "bundle")
    assert recorded_command([*argv[:-1], outside], outside).endswith("--out DIR")


def test_the_unpacked_wheels_folder_goes_when_the_process_ends(tmp_path):
    import subprocess
    import sys

    root = Path(__file__).parents[3]
    done = subprocess.run(
        [sys.executable, "-c", "from training.lease.bootstrap import temporary_site; "
         "site = temporary_site(); (site / 'keras').mkdir(); print(site)"],
        cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    site = Path(done.stdout.strip())
    assert site.name.startswith("keras-gated-lease-site-") and not site.exists()
