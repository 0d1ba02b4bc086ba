"""The sandbox's data model: copies sharing broker bandwidth and throttles, in exact time."""

from __future__ import annotations

from kadmin.sandbox.copying import Copy, Side, Transfers

MB = 10**6


def test_copies_share_a_broker_and_a_finish_frees_bandwidth() -> None:
    transfers = Transfers(100 * MB)
    transfers.start([Copy("a", 100 * MB, leader=1, follower=2, throttled_out=False,
                         throttled_in=False)], 0.0)
    transfers.start([Copy("b", 300 * MB, leader=1, follower=3, throttled_out=False,
                         throttled_in=False)], 0.0)
    # both leave broker 1: 50 MB/s each; a is done at 2 s, then b runs alone at 100 MB/s
    assert transfers.finish_time("a") == 2.0
    transfers.advance(2.0)
    assert transfers.finished == {"a": 2.0}
    assert transfers.progress("b", 2.0) == (100 * MB, 300 * MB, 100 * MB)
    assert transfers.finish_time("b") == 4.0
    transfers.advance(10.0)
    assert transfers.finished == {"a": 2.0, "b": 4.0}


def test_a_throttle_is_a_quota_per_broker_and_retuning_applies_it_from_then_on() -> None:
    limits: dict[Side, float] = {(2, "in"): 10 * MB}
    transfers = Transfers(100 * MB, limits.get)
    transfers.start([Copy("a", 100 * MB, 1, 2, throttled_out=False, throttled_in=True)], 0.0)
    transfers.start([Copy("b", 100 * MB, 3, 2, throttled_out=False, throttled_in=True)], 0.0)
    assert transfers.progress("a", 0.0) == (0, 100 * MB, 5 * MB)  # 10 MB/s shared by two
    assert transfers.next_finish() == 20.0

    limits.clear()  # the throttle is removed at 4 s: 20 MB each copied so far
    transfers.retune(4.0, lambda copy: (False, False))
    assert transfers.progress("a", 4.0) == (20 * MB, 100 * MB, 50 * MB)
    assert transfers.finish_time("a") == 4.0 + 80 / 50


def test_a_copy_without_bytes_is_done_at_once() -> None:
    transfers = Transfers(1.0)
    transfers.start([Copy("empty", 0, 1, 2, False, False)], 7.0)
    assert transfers.finished == {"empty": 7.0} and transfers.next_finish() is None
