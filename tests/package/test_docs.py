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

ROOT = Path(__file__).resolve().parents[2]
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
    ci = [line.split("||")[0].strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    install, tests = SETUP_COMMANDS
    # CI's first pass makes a venv and runs the README's install and demo as written...
    readme_install = install.split("&&", 2)[-1].strip()  # after the venv and its activation
    assert readme_install == 'pip install -e ".[test]" && keras-gated demo'
    assert readme_install in ci
    assert 'keras-gated = "keras_gated.cli:main"' in (ROOT / "pyproject.toml").read_text()
    # ...then the README's test command as written; the later passes run it again for the
    # optional packages' tests only, and for the PyTorch backend.
    test_command = tests.split("&&")[-1].strip()
    runs = [line for line in ci if "tests/run.sh" in line]
    assert runs == [test_command, f"KERAS_GATED_TEST_OPTIONAL_ONLY=1 {test_command}",
                    f"KERAS_GATED_TEST_BACKENDS=torch {test_command}"], runs
    assert ci.index(readme_install) < ci.index(test_command)
    assert (ROOT / shlex.split(test_command)[-1]).is_file()


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
