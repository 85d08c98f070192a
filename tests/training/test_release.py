"""python -m training.release: run folder -> zoo folder -> registered config."""

import json

import pytest

import keras_gated as kg
from keras_gated.weights import PretrainedCfg
from training import release


def test_release_writes_a_zoo_folder_and_registers_it(tmp_path, tiny):
    run, cfgs = tiny.train("gresnetfc2"), tiny.cfgs
    zoo = release.release(run, notes="Compare with the paper.", zoo=tmp_path / "zoo",
                          register_in=cfgs)
    assert "Compare with the paper." in (zoo / "README.md").read_text()
    release.release(run, zoo=tmp_path / "zoo", register_in=cfgs)  # replaces, not duplicates
    assert json.loads((zoo / "metrics.json").read_text())["test_accuracy"] == json.loads(
        (run / "metrics.json").read_text())["test_accuracy"]
    registered = release.registered_cfgs(cfgs)
    assert len(registered) == 1 and isinstance(registered[0], PretrainedCfg)
    assert registered[0].weight_id == "gresnetfc2.tiny"
    assert registered[0].sha256 == kg.pretrained.sha256_of(zoo / "model.weights.h5")
    [data_file] = cfgs.rglob("*.json")  # the family module's data file, parsed back
    assert data_file.name == f"{kg.GResNetFC.__module__.rsplit('.', 1)[-1]}.json"


def test_a_release_over_the_shard_cap_is_sharded_evaluated_and_pinned_shard_by_shard(tmp_path, tiny):
    """The path of a large net's release (G-WRN-28-10: 146 MB), on a tiny net with a tiny
    cap: the folder holds an index and shards, `keras-gated evaluate` reads it (release
    checks the card's number with it), and the registered config pins every shard."""
    from keras_gated.weights.shards import SHARD_INDEX, shard_names

    run = tiny.train("gresnetfc2")
    zoo = release.release(run, zoo=tmp_path / "zoo", register_in=tiny.cfgs,
                          max_shard_bytes=200_000)
    shards = shard_names(zoo / SHARD_INDEX)
    assert len(shards) >= 2 and not (zoo / "model.weights.h5").exists()
    [registered] = release.registered_cfgs(tiny.cfgs)
    assert registered.file_name == SHARD_INDEX
    assert registered.shards == {name: kg.pretrained.sha256_of(zoo / name) for name in shards}


def test_release_of_a_twin_compares_both_cards_and_rewrites_the_readme(tmp_path, tiny):
    from keras_gated.release import listing as zoo_index

    cfgs, zoo = tiny.cfgs, tiny.zoo
    readme = tmp_path / "README.md"
    readme.write_text(f"# project\n\n{zoo_index.BEGIN}\n{zoo_index.END}\n\nmore\n")
    runs = {model: tiny.train(model) for model in ("gresnetfc2", "resnetfc2")}
    release.release(runs["gresnetfc2"], notes="Gated.", zoo=zoo, register_in=cfgs, readme=readme)
    sha_before = kg.pretrained.sha256_of(zoo / "gresnetfc2.tiny" / "model.weights.h5")
    for _ in range(2):  # a second release replaces the comparison, never duplicates it
        release.release(runs["resnetfc2"], notes="Ungated.", zoo=zoo, register_in=cfgs,
                        readme=readme, twins=["gresnetfc2.tiny"])
    registered = {cfg.weight_id: cfg for cfg in release.registered_cfgs(cfgs)}
    for weight_id, own_note in (("gresnetfc2.tiny", "Gated."), ("resnetfc2.tiny", "Ungated.")):
        card = (zoo / weight_id / "README.md").read_text()
        assert own_note in card and card.count("### Twin comparison") == 1
        notes = card[card.index("## Notes"):card.index("## Data caveats")]
        for cfg in registered.values():
            assert f"| `{cfg.weight_id}` | {100 * cfg.metrics['test_accuracy']:.2f} % |" in notes
    # The twin's weights (and so its sha256 pin) are untouched by the note.
    assert kg.pretrained.sha256_of(zoo / "gresnetfc2.tiny" / "model.weights.h5") == sha_before
    assert registered["gresnetfc2.tiny"].sha256 == sha_before
    text = readme.read_text()
    assert text.startswith("# project\n") and text.endswith("\n\nmore\n")
    assert zoo_index.readme_block(registered.values()) in text
    with pytest.raises(SystemExit) as exit_info:  # --twin without --register: usage error
        release.main([str(runs["resnetfc2"]), "--twin", "gresnetfc2.tiny"])
    assert exit_info.value.code == 2


def test_a_bad_twin_is_refused_before_anything_is_written(tiny):
    cfgs, zoo = tiny.cfgs, tiny.zoo
    runs = {"gresnetfc2": tiny.train("gresnetfc2", 1), "resnetfc2": tiny.train("resnetfc2", 2)}
    release.release(runs["gresnetfc2"], zoo=zoo, register_in=cfgs)
    before = {p.name: p.read_text() for p in cfgs.rglob("*.json")}
    with pytest.raises(ValueError, match="not released"):
        release.release(runs["resnetfc2"], zoo=zoo, register_in=cfgs, twins=["plainnet2.tiny"])
    with pytest.raises(ValueError, match="not twins"):  # 2 epochs vs 1
        release.release(runs["resnetfc2"], zoo=zoo, register_in=cfgs, twins=["gresnetfc2.tiny"])
    assert {p.name: p.read_text() for p in cfgs.rglob("*.json")} == before
    assert not (zoo / "resnetfc2.tiny").exists()
    assert "Twin comparison" not in (zoo / "gresnetfc2.tiny" / "README.md").read_text()


def test_caveat_is_carded_registered_warned_on_load_and_amendable(tmp_path, tiny, monkeypatch):
    import warnings

    from keras_gated.release import listing as zoo_index
    from keras_gated.weights import pretrained_cfgs_overlay

    cfgs, zoo = tiny.cfgs, tiny.zoo
    readme = tmp_path / "README.md"
    readme.write_text(f"{zoo_index.BEGIN}\n{zoo_index.END}\n")
    run = tiny.train("gresnetfc2")
    folder = release.release(run, zoo=zoo, register_in=cfgs, readme=readme,
                             caveat="did not converge (a test).")
    [cfg] = release.registered_cfgs(cfgs)
    assert cfg.caveat == "did not converge (a test)."
    assert "### Caveat\n\ndid not converge (a test)." in (folder / "README.md").read_text()
    assert zoo_index.CAVEAT_MARK in readme.read_text()
    monkeypatch.setenv("KERAS_GATED_ZOO", str(zoo))
    with pretrained_cfgs_overlay(cfg), pytest.warns(UserWarning, match="did not converge"):
        kg.create_model("gresnetfc2", weights="tiny")  # the registered tag
    sha = cfg.sha256

    # Amending clears it (weights, pin and Hub fields unchanged); then nothing warns.
    release.amend_caveat(folder, "", register_in=cfgs, readme=readme, zoo=zoo)
    [cfg] = release.registered_cfgs(cfgs)
    assert cfg.caveat == "" and cfg.sha256 == sha
    assert zoo_index.CAVEAT_MARK not in readme.read_text()
    assert "### Caveat" not in (folder / "README.md").read_text()
    with pretrained_cfgs_overlay(cfg), warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        kg.create_model("gresnetfc2", weights="tiny")

    with pytest.raises(ValueError, match="not registered"):
        release.amend_caveat(zoo / "gresnetfc2.tiny", "x", register_in=tmp_path / "none", readme=None,
                             zoo=zoo)
    card = (folder / "README.md").read_text()
    with (folder / "model.weights.h5").open("ab") as f:
        f.write(b"changed")
    with pytest.raises(ValueError, match="differ from the registered"):
        release.amend_caveat(folder, "x", register_in=cfgs, readme=None, zoo=zoo)
    assert (folder / "README.md").read_text() == card  # refused before anything was written


def test_amending_the_notes_keeps_the_weights_the_caveat_and_the_twin_table(tmp_path, tiny):
    cfgs, zoo = tiny.cfgs, tiny.zoo
    folder = release.release(tiny.train("gresnetfc2"), zoo=zoo, register_in=cfgs,
                             notes="First words.\n\nSaid twice.\n\nSaid twice.",
                             caveat="a test caveat.")
    before = (folder / "README.md").read_text()
    [cfg] = release.registered_cfgs(cfgs)
    release.amend_caveat(folder, None, register_in=cfgs, readme=None,
                         notes="First words.\n\nSaid once.", zoo=zoo)
    card = (folder / "README.md").read_text()
    assert "## Notes\n\nFirst words.\n\nSaid once.\n\n### Caveat\n\na test caveat." in card
    assert "Said twice" not in card
    assert card.split("## Notes")[0] == before.split("## Notes")[0]
    assert card.split("## Data caveats")[1] == before.split("## Data caveats")[1]
    [amended] = release.registered_cfgs(cfgs)
    assert amended.caveat == "a test caveat." and amended.sha256 == cfg.sha256

    # Notes removed from a card without subsections: the section goes with them.
    plain = release.release(tiny.train("resnetfc2"), zoo=zoo, register_in=cfgs, notes="Gone.")
    release.amend_caveat(plain, None, register_in=cfgs, readme=None, notes="", zoo=zoo)
    assert "## Notes" not in (plain / "README.md").read_text()


def test_only_a_registered_zoo_folder_is_amended_and_only_with_register(tmp_path, tiny, capsys):
    import shutil

    cfgs, zoo = tiny.cfgs, tiny.zoo
    folder = release.release(tiny.train("gresnetfc2"), zoo=zoo, register_in=cfgs)
    copy = tmp_path / "copy" / folder.name
    shutil.copytree(folder, copy)
    registered = {p: p.read_text() for p in cfgs.rglob("*.json")}
    with pytest.raises(ValueError, match="is not in the zoo .* give .*gresnetfc2.tiny itself"):
        release.amend_caveat(copy, "x", register_in=cfgs, readme=None, zoo=zoo)
    assert {p: p.read_text() for p in cfgs.rglob("*.json")} == registered
    assert (copy / "README.md").read_text() == (folder / "README.md").read_text()

    with pytest.raises(SystemExit) as exit_:
        release.main([str(copy), "--amend", "--caveat", "x"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        "--amend changes a release in zoo/ and registers it again: add --register")


def test_amend_without_anything_to_change_is_refused_in_one_sentence(capsys):
    with pytest.raises(SystemExit):
        release.main(["zoo/gresnet20.cifar10", "--amend", "--register"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith("--amend changes the --caveat (\"\" clears it), the --notes or, with "
                        "--remeasure, the test accuracy: give one")


@pytest.mark.parametrize("flags", [["--caveat", "x"], ["--remeasure"]])
def test_amending_a_folder_that_does_not_exist_is_refused_in_one_sentence(tmp_path, capsys,
                                                                          flags):
    missing = tmp_path / "gresnetfc10.fashion_mnist"
    assert release.main([str(missing), "--amend", "--register", *flags]) == 2
    assert capsys.readouterr().err == (f"training.release: error: {missing} is not a folder: "
                                       "--amend takes a released zoo/<weight id> folder.\n")


def test_a_convolutional_release_without_keras_hub_is_refused_before_anything_is_written(
        tmp_path, monkeypatch):
    import keras

    folder = tmp_path / "zoo" / "gresnet8.cifar10"
    (folder / "keras_hub").mkdir(parents=True)  # an earlier release's preset
    run = tmp_path / "runs" / "gresnet8.cifar10"
    run.mkdir(parents=True)
    (run / "metrics.json").write_text(json.dumps({"model": "gresnet8", "test_accuracy": 0.5}))
    keras.saving.save_model(kg.GResNet(8), run / "last.keras")
    monkeypatch.setattr(release, "kerashub_installed", lambda: False)
    with pytest.raises(ValueError, match=r"keras-hub is not installed.*pip install -e '\.\[kerashub\]'"):
        release.release(run, zoo=tmp_path / "zoo", register_in=tmp_path)
    assert (folder / "keras_hub").is_dir() and not (folder / "README.md").exists()
    # A fully connected net has no preset to lose: keras-hub is not needed.
    assert not release.is_convolutional(kg.GResNetFC(2))
    assert release.is_convolutional(kg.GResNet(8))
