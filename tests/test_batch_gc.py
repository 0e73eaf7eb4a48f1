"""The cyclic collector is spaced out while a batch is judged, and put back afterwards."""

from __future__ import annotations

import gc

import pytest

from orchestrator.commit.batch_judge import BATCH_GC_THRESHOLD, collections_spaced


def test_threshold_raised_inside_and_restored_after() -> None:
    saved = gc.get_threshold()
    with collections_spaced():
        inside = gc.get_threshold()
    assert inside == (max(BATCH_GC_THRESHOLD, saved[0]), *saved[1:])
    assert gc.get_threshold() == saved


def test_restored_when_judging_raises() -> None:
    saved = gc.get_threshold()
    with pytest.raises(RuntimeError), collections_spaced(5_000):
        assert gc.get_threshold()[0] == max(5_000, saved[0])
        raise RuntimeError("judging failed")
    assert gc.get_threshold() == saved


def test_a_higher_threshold_already_set_is_kept() -> None:
    saved = gc.get_threshold()
    gc.set_threshold(100_000, *saved[1:])
    try:
        with collections_spaced(20_000):
            assert gc.get_threshold()[0] == 100_000
        assert gc.get_threshold()[0] == 100_000
    finally:
        gc.set_threshold(*saved)
