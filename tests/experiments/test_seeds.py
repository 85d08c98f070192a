"""experiments/tools/seeds.py: Welch's t-test (statistic, Welch–Satterthwaite degrees of
freedom, two-sided p-value through the regularized incomplete beta function) against
textbook values and, where SciPy is installed, against SciPy."""

import math
import random

import pytest

from experiments.tools.seeds import ALPHA, betainc, gap, gap_text, p_text, t_two_sided_p, welch


@pytest.mark.parametrize("t, df", [(12.706, 1), (4.303, 2), (2.776, 4), (2.571, 5),
                                   (2.228, 10), (2.042, 30)])
def test_the_two_sided_p_of_a_tabled_95_percent_critical_t_is_0_05(t, df):
    # Student's t table, two-sided 5 % critical values (rounded to three decimals there).
    assert abs(t_two_sided_p(t, df) - 0.05) < 2e-4


def test_the_incomplete_beta_function_meets_closed_forms():
    assert betainc(1.0, 1.0, 0.3) == pytest.approx(0.3, abs=1e-14)  # uniform distribution
    assert betainc(2.0, 1.0, 0.3) == pytest.approx(0.09, abs=1e-14)  # I_x(a, 1) = x^a
    assert betainc(0.5, 0.5, 0.5) == pytest.approx(0.5, abs=1e-14)  # arcsine law, symmetric
    assert betainc(0.5, 0.5, 0.25) == pytest.approx(2 / math.pi * math.asin(0.5), abs=1e-13)
    assert betainc(3.0, 0.5, 0.0) == 0.0 and betainc(3.0, 0.5, 1.0) == 1.0
    with pytest.raises(ValueError):
        betainc(1.0, 1.0, 1.5)


def test_welch_follows_its_formulas_on_unequal_arms():
    a, b = [27.5, 21.0, 19.0, 23.6, 17.0], [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8]
    found = welch(a, b)
    ma, mb = sum(a) / 5, sum(b) / 7
    va = sum((x - ma) ** 2 for x in a) / 4 / 5
    vb = sum((x - mb) ** 2 for x in b) / 6 / 7
    assert found["gap"] == pytest.approx(ma - mb)
    assert found["t"] == pytest.approx((ma - mb) / math.sqrt(va + vb))
    assert found["df"] == pytest.approx((va + vb) ** 2 / (va ** 2 / 4 + vb ** 2 / 6))
    assert 4 < found["df"] < 10 and 0.05 < found["p"] < 1


def test_welch_agrees_with_scipy_on_random_arms():
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(1)
    for _ in range(300):
        a = [rng.gauss(0.0, rng.uniform(0.1, 3.0)) for _ in range(rng.randint(2, 8))]
        b = [rng.gauss(rng.uniform(-3, 3), rng.uniform(0.1, 3.0)) for _ in range(rng.randint(2, 8))]
        ours, theirs = welch(a, b), stats.ttest_ind(a, b, equal_var=False)
        assert ours["t"] == pytest.approx(theirs.statistic, rel=1e-9)
        assert ours["p"] == pytest.approx(theirs.pvalue, rel=1e-8, abs=1e-14)


def test_a_gap_is_significant_only_with_three_seeds_a_side_and_p_under_5_percent():
    assert ALPHA == 0.05
    assert gap([1.0, 2.0], [3.0, 4.0, 5.0])["verdict"] == "too few seeds"
    assert gap([], [1.0])["verdict"] == "not run"
    # Twice the standard error cleared at 4 degrees of freedom is not enough (p ≈ 0.12).
    two_se = gap([10.0, 11.0, 12.0], [11.64, 12.64, 13.64])
    assert two_se["gap"] / math.sqrt(2 / 3) == pytest.approx(-2.009, abs=1e-3)
    assert two_se["df"] == pytest.approx(4.0) and 0.1 < two_se["p"] < 0.15
    assert two_se["verdict"] == "within noise"
    far = gap([10.0, 11.0, 12.0], [14.0, 15.0, 16.0])
    assert far["p"] < ALPHA and far["verdict"] == "significant"
    assert gap([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])["verdict"] == "within noise"
    assert gap([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])["verdict"] == "significant"


def test_the_tables_print_the_p_value_with_the_verdict():
    assert p_text(0.0004) == "p < 0.001" and p_text(0.0412) == "p = 0.041"
    assert gap_text(gap([10.0, 11.0, 12.0], [14.0, 15.0, 16.0])) == "-4.00, p = 0.008: significant"
    assert gap_text(gap([1.0, 2.0], [3.0, 4.0, 5.0])) == "-2.50: too few seeds"
    assert gap_text(gap([], [1.0])) == "—"
