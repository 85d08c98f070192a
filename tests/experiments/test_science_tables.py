"""docs/science.md's seeded tables are what the tools print from the committed records:
every data row of `seed_table` (Table 1, the G-PlainNet/ResNet and pre-/post-activation
ResNet pairs, Table 2, Fig. 3),
`fig5_seeds` and `seed_pair` appears verbatim on the page."""

import contextlib
import io
from pathlib import Path

import pytest

from experiments.highway import seed_pair
from experiments.residual_gates import fig5_seeds, seed_table

SCIENCE = Path(__file__).resolve().parents[2] / "docs" / "science.md"


def _printed(main, argv: list[str]) -> list[str]:
    """The table rows (past the header and rule) and the gap sentences a tool prints."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        main(argv)
    lines = buffer.getvalue().splitlines()
    rows = [line for line in lines if line.startswith("|")][2:]
    return rows + [line for line in lines
                   if line.startswith(("Training loss at the last epoch", "Test accuracy gap"))]


@pytest.mark.parametrize("main, argv", [
    (seed_table.main, []),
    (seed_table.main, ["--pair", "gplainnet", "resnetfc"]),
    (seed_table.main, ["--pair", "resnetfc_preact", "resnetfc"]),
    (seed_table.main, ["--k"]),
    (seed_table.main, ["--loss"]),
    (fig5_seeds.main, []),
])
def test_every_row_the_tool_prints_is_on_the_page(main, argv):
    page = SCIENCE.read_text(encoding="utf-8").splitlines()
    printed = _printed(main, argv)
    assert printed, "the tool printed no table"
    missing = [row for row in printed if row not in page]
    assert missing == [], f"not on docs/science.md: {missing}"


def test_the_highway_pair_on_the_page_carries_welchs_p():
    page = SCIENCE.read_text(encoding="utf-8")
    printed = _printed(seed_pair.main, [])
    assert len(printed) == 2 and all("p = " in row for row in printed)
    for row in printed:
        label, highway, plain, found = (cell.strip() for cell in row.strip("|").split("|"))
        assert highway in page and plain in page and found in page, row
