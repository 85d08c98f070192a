"""Benchmark smoke runs write to a scratch folder outside the checkout."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_benchmarks_quick_writes_to_a_scratch_folder_outside_the_checkout():
    from benchmarks.run import RESULTS_DIR, default_out

    scratch = default_out(quick=True).resolve()
    assert ROOT not in scratch.parents and scratch != ROOT
    assert default_out(quick=False) == RESULTS_DIR == Path("benchmarks/results")
