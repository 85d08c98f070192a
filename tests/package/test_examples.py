"""The examples run and show what they say they show."""

import ast
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import keras_gated as kg

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))


def test_every_example_is_listed_in_the_examples_readme():
    readme = (EXAMPLES / "README.md").read_text()
    assert SCRIPTS and all(f"`{script.name}`" in readme for script in SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_example_imports_resolve_and_help_runs(script, capsys, monkeypatch):
    """Every example parses, names only attributes keras_gated has, and answers --help
    (its imports and argument parser run)."""
    tree = ast.parse(script.read_text())
    used = {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "kg"}
    assert not sorted(name for name in used if not hasattr(kg, name))
    monkeypatch.setattr(sys, "argv", [script.name, "--help"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(script), run_name="__main__")
    assert exit_.value.code == 0 and "usage:" in capsys.readouterr().out


def test_gate_removal_example(capsys):
    released = "gresnet20.cifar10" in kg.list_models(pretrained=True)
    example = runpy.run_path(str(EXAMPLES / "gate_removal.py"))
    result = example["main"](["--weights", "cifar10"] if released else [])
    out = capsys.readouterr().out

    # It removes exactly the units whose shortcut is the identity (9 units, 2 downsample),
    # and reports each removal as printed.
    model = kg.GResNet20()
    same_shape = [n for n in kg.gate_values(model) if not model.get_layer(n).changes_shape]
    assert list(result["removed"]) == same_shape and len(same_shape) == 7
    assert f"accuracy with every unit: {result['accuracy']:.0%}" in out
    for name, (k, accuracy, change) in result["removed"].items():
        assert f"without {name:<13} accuracy {accuracy:4.0%}" in out
        assert 0.0 <= change <= 1.0 and 0.0 <= accuracy <= 1.0
    changes = np.array([change for _, _, change in result["removed"].values()])
    assert changes.max() > 0  # removing a unit changes the predictions
    if released:
        # The trained net classifies most of the 20 bundled images, and every unit it
        # removes was in use (g(k) = ReLU(k) > 0).
        assert result["accuracy"] >= 0.6
        assert all(k > 0 for k, _, _ in result["removed"].values())
