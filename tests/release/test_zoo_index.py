"""The zoo tables (the full ones in docs/zoo.md, the short one in the README) are generated
from the registry and cannot drift from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from keras_gated.cli import main as cli_main
from keras_gated.weights import get_pretrained_cfg, list_pretrained
from keras_gated.release import listing as zoo_index

PLANNED = list_pretrained(planned=True)

ROOT = Path(__file__).resolve().parents[2]


def _cfgs():
    return [get_pretrained_cfg(w) for w in list_pretrained()]


def _all_cfgs():
    return _cfgs() + [get_pretrained_cfg(w) for w in PLANNED]


def test_zoo_page_and_readme_tables_match_the_registry():
    from training.release import short_block

    stale = ("zoo tables are stale: run `python -m training.release RUN --register` "
             "or rewrite them with training.release.update_readme_tables().")
    zoo_page = (ROOT / "docs" / "zoo.md").read_text()
    assert zoo_index.readme_block(_all_cfgs()) in zoo_page, f"docs/zoo.md's {stale}"
    readme = (ROOT / "README.md").read_text()
    assert short_block(_all_cfgs()) in readme, f"README.md's {stale}"
    assert zoo_index.BEGIN not in readme  # the full tables live on the zoo page only


def test_readme_short_table_lists_every_released_weight_with_its_accuracy():
    from training.release import short_table

    rows = short_table(_all_cfgs()).splitlines()
    assert rows[0] == "| weight id | test accuracy | data |" and len(rows) == 2 + len(_cfgs())
    for cfg in _cfgs():
        row = next(line for line in rows if f"`{cfg.weight_id}`" in line)
        assert zoo_index.accuracy_text(cfg.metrics) in row and cfg.dataset.split(",")[0] in row


def test_released_table_has_every_weight_and_its_measured_accuracy():
    table = zoo_index.released_table(_cfgs())
    for cfg in _cfgs():
        row = next(line for line in table.splitlines() if f"`{cfg.weight_id}`" in line)
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        mark = zoo_index.CAVEAT_MARK if cfg.caveat else ""  # e.g. a run that did not converge
        assert cells[1] == f"{100 * cfg.metrics['test_accuracy']:.2f} %{mark}"
        assert cfg.dataset in cells[2] and cells[3].endswith(f", {cfg.metrics['epochs']}")
    assert len(table.splitlines()) == 2 + len(_cfgs())


def test_planned_table_labels_every_compute_figure_as_an_estimate():
    rows = zoo_index.planned_table(get_pretrained_cfg(w) for w in PLANNED).splitlines()[2:]
    assert len(rows) == len(PLANNED)
    for row in rows:
        assert "GPU-hours (estimate:" in row and "assumed" in row


def test_replace_readme_block_rewrites_only_between_the_markers():
    text = f"intro\n{zoo_index.BEGIN}\nold table\n{zoo_index.END}\noutro\n"
    new = zoo_index.replace_readme_block(text, _cfgs())
    assert new.startswith("intro\n") and new.endswith("\noutro\n") and "old table" not in new
    assert zoo_index.replace_readme_block(new, _cfgs()) == new
    with pytest.raises(ValueError, match="marker"):
        zoo_index.replace_readme_block("no markers here", _cfgs())


def test_release_rewrites_the_readme_from_the_registry_file(tmp_path):
    from training.release import CFGS_DIR, update_readme_tables

    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{zoo_index.BEGIN}\n{zoo_index.END}\n")
    update_readme_tables(readme, CFGS_DIR)
    assert zoo_index.readme_block(_all_cfgs()) in readme.read_text()


def test_release_rewrites_the_zoo_page_beside_the_readme(tmp_path):
    from training.release import CFGS_DIR, SHORT_BEGIN, SHORT_END, short_block
    from training.release import update_readme_tables

    readme, page = tmp_path / "README.md", tmp_path / "docs" / "zoo.md"
    page.parent.mkdir()
    readme.write_text(f"# x\n{SHORT_BEGIN}\nold\n{SHORT_END}\nend\n")
    page.write_text(f"# zoo\n{zoo_index.BEGIN}\n{zoo_index.END}\n")
    assert update_readme_tables(readme, CFGS_DIR) == [readme, page]
    assert readme.read_text() == f"# x\n{short_block(_all_cfgs())}\nend\n"
    assert zoo_index.readme_block(_all_cfgs()) in page.read_text()
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="marker"):
        update_readme_tables(readme, CFGS_DIR)


def test_cli_lists_released_weights_with_accuracy_and_markdown(capsys):
    assert cli_main(["list", "--pretrained"]) == 0
    out = capsys.readouterr().out
    for cfg in _cfgs():
        assert cfg.weight_id in out and f"{100 * cfg.metrics['test_accuracy']:.2f} %" in out
        assert not cfg.caveat or f"caveat: {cfg.caveat}" in out
    assert out.count("caveat: ") == sum(bool(cfg.caveat) for cfg in _cfgs())
    assert cli_main(["list", "--pretrained", "--markdown"]) == 0
    assert zoo_index.released_table(_cfgs()) in capsys.readouterr().out


def test_a_config_without_measured_accuracy_shows_a_question_mark():
    import dataclasses

    cfg = dataclasses.replace(_cfgs()[0], weight_id="gresnet20.unmeasured", metrics={})
    row = zoo_index.released_table([cfg]).splitlines()[2]
    assert row.startswith("| `gresnet20.unmeasured` | ? |")


def test_twins_must_share_data_recipe_epochs_and_command():
    from training.release import twin_note

    metrics = {"test_accuracy": 0.9, "epochs": 40, "recipe": "preact_cifar", "backend": "jax",
               "command": "python -m training.train --model gresnet20 --dataset cifar10"}
    twin = {**metrics, "command": metrics["command"].replace("gresnet20", "preactresnet20")}
    note = twin_note({"gresnet20.cifar10": metrics, "preactresnet20.cifar10": twin})
    assert note.count("| `") == 2 and "one run each" in note and "90.00 %" in note
    for other in ({**twin, "epochs": 41}, {**twin, "command": twin["command"] + " --seed 1"}):
        with pytest.raises(ValueError, match="not twins"):
            twin_note({"gresnet20.cifar10": metrics, "preactresnet20.cifar10": other})
    with pytest.raises(ValueError, match="two or more different"):
        twin_note({"gresnet20.cifar10": metrics})
