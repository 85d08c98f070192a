"""The README a newcomer reads top-down, and the docs/ pages it links: short, every link
resolves, the quickstart runs, the set-up commands are the ones CI runs."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 150
# The two commands a newcomer copies: install and run the demo on the bundled
# checkpoint; run the tests (what .ci/run ends with).
SETUP_COMMANDS = [
    'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && keras-gated demo',
    ". .venv/bin/activate && bash tests/run.sh",
]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def section(text: str, heading: str) -> str:
    """The text under ``## heading`` up to the next ``## `` heading."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces
    as hyphens."""
    headings = re.findall(r"(?m)^#{1,6} (.+)$", page.read_text())
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_readme_is_short():
    lines = README.read_text().splitlines()
    assert 30 < len(lines) <= MAX_README_LINES


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_relative_link_resolves(page):
    links = LINK.findall(page.read_text())
    missing = []
    for link in links:
        if re.match(r"[a-z]+:", link):  # https:, mailto:, hf: ...
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            missing.append(link)
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            missing.append(link)
    assert not missing, f"{page.name} links to what does not exist: {missing}"


def test_readme_links_every_docs_page():
    linked = {Path(link).name for link in LINK.findall(README.read_text())}
    pages = {p.name for p in PAGES[1:]}
    assert pages and not sorted(pages - linked)


def test_setup_commands_are_the_two_ci_relies_on():
    text = README.read_text()
    assert [c.strip() for c in code_blocks(section(text, "Set up"), "bash")] == SETUP_COMMANDS
    ci = (ROOT / ".ci" / "run").read_text()
    install, tests = SETUP_COMMANDS
    # The README installs a subset of CI's extras, editable, then runs the bundled demo...
    readme_extras = set(re.search(r'-e "\.\[([\w,]+)\]"', install).group(1).split(","))
    ci_extras = set(re.search(r'pip install -e "\.\[([\w,]+)\]"', ci).group(1).split(","))
    assert readme_extras <= ci_extras
    assert 'keras-gated = "keras_gated.cli:main"' in (ROOT / "pyproject.toml").read_text()
    # ...and CI runs the very test command the README gives, in each of its passes (with
    # the backends of that pass: TensorFlow with TensorFlow, JAX without it).
    test_command = shlex.split(tests.split("&&")[-1])
    runs = [shlex.split(line.split("||")[0]) for line in ci.splitlines()
            if line.strip() and not line.lstrip().startswith("#") and "tests/run.sh" in line]
    assert [run[1:] for run in runs] == [test_command] * 2, runs
    assert [run[0] for run in runs] == ["KERAS_GATED_TEST_BACKENDS=tensorflow",
                                        "KERAS_GATED_TEST_BACKENDS=jax"]
    assert (ROOT / test_command[-1]).is_file()


def test_readme_quickstart_runs_in_a_fresh_process():
    """The quickstart as a newcomer pastes it: released weights, predict, gates,
    fine-tune (offline: the weights ship in zoo/)."""
    [code] = code_blocks(section(README.read_text(), "Quickstart"), "python")
    for step in ("weights=", ".predict(", "gate_values(", ".fit("):
        assert step in code
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=600, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "stage3_unit3" in result.stdout and "airplane" in result.stdout
