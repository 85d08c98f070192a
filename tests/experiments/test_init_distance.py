"""experiments/tools/init_distance.py: ΣW² of a fresh n×n matrix grows as n (variance
1/n for glorot_uniform, 2/n for he_normal), its Euclidean norm as √n."""

import math

from experiments.tools.init_distance import distances, markdown


def test_the_sum_of_squares_is_about_n_times_the_scale():
    for n in (50, 400):
        glorot, he = distances(n, "glorot_uniform"), distances(n, "he_normal")
        assert abs(glorot["sum_of_squares"] / n - 1.0) < 0.1
        assert abs(he["sum_of_squares"] / n - 2.0) < 0.2
        assert math.isclose(he["euclidean"], math.sqrt(he["sum_of_squares"]))


def test_the_table_has_a_row_per_width_and_initializer():
    text = markdown(sizes=(50, 100))
    rows = [line for line in text.splitlines() if line.startswith("| 50 ") or line.startswith("| 100 ")]
    assert len(rows) == 4 and all(row.endswith("| 1 |") for row in rows)
    assert distances(50, "he_normal", seed=0) == distances(50, "he_normal", seed=0)
