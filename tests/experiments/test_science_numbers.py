"""Every number on docs/science.md says where it comes from: each paragraph (blank-line
separated; each table row is a paragraph of its own, read with its table's header row,
which may name the source of every row) that holds a decimal number or a percentage also
holds a command (a code span with "python" or "keras-gated"), a file (a
code span or link target with "/" or ending in .json, .csv, .png or .md) or a paper
reference (RG, HW, He16, Greff17, "Table N", "Fig. N", "§").

Not counted as numbers: anything inside code spans or code blocks, link targets, and
section numbers (§3.1, 3.1.2)."""

import re
from pathlib import Path

SCIENCE = Path(__file__).resolve().parents[2] / "docs" / "science.md"

CODE_BLOCK = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`([^`]+)`")
LINK_TARGET = re.compile(r"\]\(([^)]+)\)")
SECTION = re.compile(r"§\s*\d+(\.\d+)*|\b\d+(\.\d+){2,}")
NUMBER = re.compile(r"\d+(?:\.\d+)?\s*%|\d+\.\d+")
PAPER = re.compile(r"\b(RG|HW|He16|Greff17)\b|\bTable \d|\bFig\. \d|§")


def paragraphs(text: str) -> list[tuple[str, str]]:
    """(paragraph, its table's header row or "") for the blank-line separated paragraphs,
    code blocks left out, a table row each."""
    found = []
    for block in re.split(r"\n\s*\n", CODE_BLOCK.sub("", text)):
        rows = [line for line in block.splitlines() if line.lstrip().startswith("|")]
        prose = "\n".join(line for line in block.splitlines() if not line.lstrip().startswith("|"))
        found += [(row, rows[0]) for row in rows]
        if prose.strip():
            found.append((prose, ""))
    return found


def backed(paragraph: str) -> bool:
    spans = CODE_SPAN.findall(paragraph)
    if any("python" in span or "keras-gated" in span for span in spans):
        return True
    if any("/" in path or path.endswith((".json", ".csv", ".png", ".md"))
           for path in spans + LINK_TARGET.findall(paragraph)):
        return True
    return bool(PAPER.search(paragraph))


def numbers(paragraph: str) -> list[str]:
    prose = SECTION.sub("", LINK_TARGET.sub("]", CODE_SPAN.sub("", paragraph)))
    return [match.group(0) for match in NUMBER.finditer(prose)]


def test_the_rules_on_examples():
    assert numbers("see §3.1.2 and `0.5`, [a](figures/x.json): 87.1 % and 0.42") == ["87.1 %", "0.42"]
    assert not backed("it gets 87.1 %") and backed("it gets 87.1 % (`results/run/metrics.json`)")
    assert backed("87.1 % with `python -m training.train`") and backed("the paper's 1.26 % (RG Table 1)")
    assert paragraphs("| a (`x.json`) |\n| 2.5 |\n\ntext\n```\n0.5\n\n```\n") == [
        ("| a (`x.json`) |", "| a (`x.json`) |"), ("| 2.5 |", "| a (`x.json`) |"), ("text", "")]


def test_every_number_on_the_science_page_has_its_source_in_its_paragraph():
    unbacked = [f"{found[:3]} in: {paragraph[:120]!r}"
                for paragraph, header in paragraphs(SCIENCE.read_text(encoding="utf-8"))
                if (found := numbers(paragraph)) and not (backed(paragraph) or backed(header))]
    assert not unbacked, "numbers without a command, file or paper reference:\n" + "\n".join(unbacked)
