"""Numbers over seeded runs: a mean with its spread, and whether the gap between two arms
clears that spread.

A gap (mean of arm a minus mean of arm b) *clears the spread* when both arms have at least
``MIN_SEEDS`` runs and |gap| > 2·√(s_a²/n_a + s_b²/n_b) (twice the standard error of the
difference of two means, s the sample standard deviations); otherwise it is *within the
spread*, or *too few seeds* to tell.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MIN_SEEDS = 3


def spread(values: Iterable[float]) -> tuple[float | None, float | None, int]:
    """Mean, sample standard deviation (None under two values) and count."""
    values = list(values)
    if not values:
        return None, None, 0
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None, len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)), len(values)


def gap(a: Iterable[float], b: Iterable[float]) -> dict:
    """The gap of the means (a − b), the bound it must clear, and the verdict."""
    (ma, sa, na), (mb, sb, nb) = spread(a), spread(b)
    if ma is None or mb is None:
        return {"gap": None, "bound": None, "verdict": "not run"}
    difference = ma - mb
    if min(na, nb) < MIN_SEEDS:
        return {"gap": difference, "bound": None, "verdict": "too few seeds"}
    bound = 2.0 * math.sqrt(sa ** 2 / na + sb ** 2 / nb)
    return {"gap": difference, "bound": bound,
            "verdict": "clears the spread" if abs(difference) > bound else "within the spread"}


def spread_text(values: Iterable[float], digits: int = 2) -> str:
    """``mean ± std (n)``, ``mean (1)`` for one value, ``—`` for none."""
    mean, std, n = spread(values)
    if mean is None:
        return "—"
    return f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if std is not None else "") + f" ({n})"


def gap_text(found: dict, digits: int = 2) -> str:
    """``+gap, bound b: verdict`` as the tables print it."""
    if found["gap"] is None:
        return "—"
    bound = f", bound {found['bound']:.{digits}f}" if found["bound"] is not None else ""
    return f"{found['gap']:+.{digits}f}{bound}: {found['verdict']}"
