"""The compressed architectures, as data: one JSON object per line of ``architectures.jsonl``.

A compressed architecture is a registered source architecture without some of its
blocks, each pruned to its identity shortcut (``keras_gated.models.prune``), under a
name of its own: ``gresnet20_c50`` is ``gresnet20`` at (at most) 50 % of its counted MACs.
``python -m training.release_compressed --register`` adds a line; the family's module
(``compressed.py``) registers one model per line. Nothing here imports Keras.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ARCHITECTURES_FILE = Path(__file__).with_name("architectures.jsonl")
_NAME = re.compile(r"^(?P<source>[a-z0-9_]+)_c(?P<percent>[0-9]{1,2})$")


@dataclass(frozen=True)
class CompressedArch:
    """One compressed architecture.

    Attributes:
        name: its registry name, ``<source>_c<percent>`` (``gresnet20_c50``).
        source: the registered architecture it was compressed from (``gresnet20``).
        removed_blocks: the source's blocks it goes without (``stage1_unit2``, ...).
        budget: the budget it was compressed at, as ``keras_gated.compress`` records it
            (``{"macs": 0.5}`` or ``{"blocks": 5}``).
        description: one line for listings.
        parameters: its trainable parameters with the source's default head, recorded
            when it was released (``tests/models/test_parameter_counts.py`` checks it).
    """

    name: str
    source: str
    removed_blocks: tuple[str, ...]
    budget: Mapping[str, float] = field(default_factory=dict)
    description: str = ""
    parameters: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "removed_blocks", tuple(self.removed_blocks))
        found = _NAME.match(self.name)
        if found is None or found["source"] != self.source:
            raise ValueError(f"A compressed architecture of {self.source} is named "
                             f"{self.source}_c<percent of its MACs>, got {self.name!r}.")
        if not self.removed_blocks:
            raise ValueError(f"{self.name}: a compressed architecture removes at least one block.")

    def to_dict(self) -> dict[str, Any]:
        """Its line in the data file, as JSON-ready data."""
        data = asdict(self)
        data["removed_blocks"] = list(self.removed_blocks)
        data["budget"] = dict(self.budget)
        return data


def budget_percent(budget: Mapping[str, float], macs_fraction: float) -> int:
    """The percent in the name: the MACs budget (0.5 -> 50), or for a budget in blocks the
    fraction of the source's counted MACs left (``macs_fraction``), rounded up."""
    if "macs" in budget:
        percent = round(100 * float(budget["macs"]))
    else:
        percent = math.ceil(100 * macs_fraction)
    if not 1 <= percent <= 99:
        raise ValueError(f"A compressed net is named by the percent of its source's counted MACs "
                         f"it is budgeted (1 to 99); this budget gives {percent}: "
                         f"{'remove more blocks' if percent > 99 else 'give a budget of at least 0.01'}.")
    return percent


def compressed_name(source: str, percent: int) -> str:
    """``gresnet20``, 50 -> ``gresnet20_c50``."""
    return f"{source}_c{percent}"


def read_architectures(path: str | os.PathLike = ARCHITECTURES_FILE) -> list[CompressedArch]:
    """The architectures of a data file, in its order; a malformed line is a ValueError
    naming the file and the line."""
    architectures = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            architectures.append(CompressedArch(**json.loads(line)))
        except (ValueError, TypeError) as error:
            raise ValueError(f"{path}, line {number}: {error}") from None
    return architectures


def write_architecture(arch: CompressedArch, path: str | os.PathLike = ARCHITECTURES_FILE) -> Path:
    """Add ``arch`` to the data file ``path`` (created if new), replacing a line of the
    same name; lines stay sorted by name."""
    path = Path(path)
    kept = {a.name: a for a in (read_architectures(path) if path.is_file() else [])}
    kept[arch.name] = arch
    lines = [json.dumps(kept[name].to_dict(), ensure_ascii=False) for name in sorted(kept)]
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def describe(source: str, removed: Sequence[str], macs_fraction: float, method: str) -> str:
    """The one-line description of a compressed architecture."""
    how = "gate pressure" if method == "pressure" else f"the {method} baseline"
    return (f"{source} without {len(removed)} Residual-Gated blocks ({macs_fraction:.0%} of its "
            f"counted MACs), compressed by {how} (keras_gated.compress)")
