"""keras_gated.training.loop's description of the hardware a run used (it goes into every card)."""

import os

import pytest

from keras_gated.training import loop


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity API here")
def test_cpu_cores_says_when_the_process_is_pinned(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5, 6, 7})
    assert loop.cpu_cores() == "8 CPU cores"
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    assert loop.cpu_cores() == "1 of 8 CPU cores"
    assert loop.hardware().startswith("1 of 8 CPU cores (")


def test_cpu_cores_without_an_affinity_api(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    assert loop.cpu_cores() == "4 CPU cores"
