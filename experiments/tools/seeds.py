"""Numbers over seeded runs: a mean with its spread, and whether the gap between two arms
is significant.

The page's one significance rule: a gap (mean of arm a minus mean of arm b) is
*significant* when both arms have at least ``MIN_SEEDS`` runs and Welch's two-sided t-test
gives p < ``ALPHA``; otherwise it is *within noise*, or *too few seeds* to tell. Welch's
test does not assume equal variances: t = gap / √(s_a²/n_a + s_b²/n_b) with the
Welch–Satterthwaite degrees of freedom, and the two-sided p-value is the regularized
incomplete beta function I_{ν/(ν+t²)}(ν/2, 1/2), computed here without SciPy so that every
printed p-value is the same wherever the tables are run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MIN_SEEDS = 3
ALPHA = 0.05


def spread(values: Iterable[float]) -> tuple[float | None, float | None, int]:
    """Mean, sample standard deviation (None under two values) and count."""
    values = list(values)
    if not values:
        return None, None, 0
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None, len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)), len(values)


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            return h
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x = {x} is outside [0, 1]")
    if x in (0.0, 1.0):
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    # The fraction converges fast for x below (a + 1) / (a + b + 2); above, use symmetry.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """The two-sided p-value of Student's t statistic ``t`` with ``df`` degrees of freedom."""
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def welch(a: Iterable[float], b: Iterable[float]) -> dict:
    """Welch's t-test of mean(a) − mean(b): the gap, t, the Welch–Satterthwaite degrees of
    freedom and the two-sided p-value (each arm needs two values or more)."""
    (ma, sa, na), (mb, sb, nb) = spread(a), spread(b)
    if sa is None or sb is None:
        raise ValueError("Welch's test needs at least two values per arm")
    va, vb = sa ** 2 / na, sb ** 2 / nb
    difference = ma - mb
    if va + vb == 0.0:  # two constant arms: any gap is certain, none is no evidence
        return {"gap": difference, "t": math.copysign(math.inf, difference) if difference else 0.0,
                "df": float(na + nb - 2), "p": 0.0 if difference else 1.0}
    t = difference / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    return {"gap": difference, "t": t, "df": df, "p": t_two_sided_p(t, df)}


def gap(a: Iterable[float], b: Iterable[float]) -> dict:
    """The gap of the means (a − b), Welch's t, degrees of freedom and p, and the verdict:
    significant, within noise, too few seeds or not run."""
    a, b = list(a), list(b)
    if not a or not b:
        return {"gap": None, "p": None, "verdict": "not run"}
    if min(len(a), len(b)) < MIN_SEEDS:
        return {"gap": spread(a)[0] - spread(b)[0], "p": None, "verdict": "too few seeds"}
    found = welch(a, b)
    found["verdict"] = "significant" if found["p"] < ALPHA else "within noise"
    return found


def spread_text(values: Iterable[float], digits: int = 2) -> str:
    """``mean ± std (n)``, ``mean (1)`` for one value, ``—`` for none."""
    mean, std, n = spread(values)
    if mean is None:
        return "—"
    return f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if std is not None else "") + f" ({n})"


def p_text(p: float) -> str:
    """A p-value as the page prints it: three decimals, ``< 0.001`` below that."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def gap_text(found: dict, digits: int = 2) -> str:
    """``+gap, p = 0.012: significant`` as the tables print it."""
    if found["gap"] is None:
        return "—"
    p = f", {p_text(found['p'])}" if found.get("p") is not None else ""
    return f"{found['gap']:+.{digits}f}{p}: {found['verdict']}"
