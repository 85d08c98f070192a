"""The README's zoo tables are generated from the registry and cannot drift from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from keras_gated.cli import main as cli_main
from keras_gated.pretrained import get_pretrained_cfg, list_pretrained
from keras_gated.pretrained import listing as zoo_index

PLANNED = list_pretrained(planned=True)

ROOT = Path(__file__).resolve().parent.parent


def _cfgs():
    return [get_pretrained_cfg(w) for w in list_pretrained()]


def _all_cfgs():
    return _cfgs() + [get_pretrained_cfg(w) for w in PLANNED]


def test_readme_zoo_tables_match_the_registry():
    readme = (ROOT / "README.md").read_text()
    assert zoo_index.readme_block(_all_cfgs()) in readme, (
        "README.md's zoo tables are stale: run `python -m training.release RUN --register` "
        "or rewrite them with training.release.update_readme_tables()."
    )


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
