"""``plan demote``'s core against the exact integer program: no demoted leader where another
replica can lead, the least spread over the other brokers, then the fewest leader changes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
from balance_oracle import least_spread_then_fewest_changes
from hypothesis import given, settings
from hypothesis import strategies as st

from kadmin.balance.demote import Demotion, demote
from kadmin.model import Replicas

Case = tuple[list[Replicas], set[int], set[int]]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """Small clusters, leaders skewed or not, replication factors 1 to 4 mixed, one to three
    brokers demoted, now and then a broker that is not registered (demoted or not)."""
    n = draw(st.integers(2, 7))
    brokers = list(range(n))
    demoted = set(draw(st.lists(st.sampled_from(brokers), min_size=1, max_size=min(3, n - 1),
                                unique=True)))
    dead = set(draw(st.lists(st.sampled_from(brokers), max_size=2, unique=True)))
    skewed = draw(st.booleans())
    pool = st.sampled_from([b for b in brokers for _ in range((b + 1) ** 2 if skewed else 1)])
    parts = []
    for _ in range(draw(st.integers(1, 14))):
        rf = draw(st.integers(1, min(4, n)))
        parts.append(tuple(draw(st.lists(pool, min_size=rf, max_size=rf, unique=True))))
    return parts, demoted, set(brokers) - dead


def expected(parts: Sequence[Replicas], demoted: set[int], registered: set[int],
             minimal: bool) -> tuple[list[int], list[bool]]:
    """The brokers that may lead and the partitions that may change, from the words."""
    live = registered - demoted
    brokers = sorted({b for r in parts for b in r if b in live})
    movable = [bool(set(r) & live) and (r[0] in demoted or (not minimal and r[0] in live))
               for r in parts]
    return brokers, movable


def check(parts: Sequence[Replicas], demoted: set[int], registered: set[int], result: Demotion
          ) -> list[Replicas]:
    new = [result.final.get(i, r) for i, r in enumerate(parts)]
    live = registered - demoted
    for p, (old, now) in enumerate(zip(parts, new, strict=True)):
        assert sorted(now) == sorted(old)  # reordered only: no replica moves
        if now != old:  # the new leader first, the others in their order
            assert now[1:] == tuple(b for b in old if b != now[0])
            assert now[0] in live  # never a demoted or dead leader
        if set(old) & live and old[0] in demoted:
            assert now[0] in live
        elif old[0] in demoted:
            assert now == old and p in result.all_demoted + result.no_live_replica
    assert result.all_demoted == [p for p, r in enumerate(parts) if set(r) <= demoted]
    assert result.dead_led == [p for p, r in enumerate(parts)
                               if r[0] not in registered and r[0] not in demoted]
    assert result.leader_changes == sum(a[0] != b[0] for a, b in zip(parts, new, strict=True))
    assert sum(result.handovers.values()) == result.leader_changes
    leaders = Counter(r[0] for r in new)
    assert dict(result.after) == {b: leaders[b] for b in result.targets}
    return new


@settings(max_examples=300)
@given(cases(), st.booleans())
def test_demotion_is_the_exact_optimum(case: Case, minimal: bool) -> None:
    parts, demoted, registered = case
    result = demote(parts, demoted, registered, minimal=minimal)
    check(parts, demoted, registered, result)
    brokers, movable = expected(parts, demoted, registered, minimal)
    assert list(result.targets) == brokers
    if not brokers:
        assert result.final == {}
        return
    optimum = least_spread_then_fewest_changes(parts, [r[0] for r in parts], brokers, movable)
    assert optimum is not None
    assert (result.spread_after, result.leader_changes) == optimum
    assert result.least_spread == result.spread_after


def test_a_balanced_demotion_hands_the_leaderships_out_evenly() -> None:
    """Broker 0 leads 6 of 12 partitions of RF 3 over 4 brokers; demoting it leaves 12 over 3:
    4 each, every one of 0's leaderships to a replica of the same partition."""
    parts = [(0, 1, 2), (0, 2, 3), (0, 3, 1), (0, 1, 2), (0, 2, 3), (0, 3, 1),
             (1, 0, 2), (2, 0, 3), (3, 0, 1), (1, 2, 3), (2, 3, 1), (3, 1, 2)]
    result = demote(parts, {0}, {0, 1, 2, 3})
    check(parts, {0}, {0, 1, 2, 3}, result)
    assert dict(result.after) == {1: 4, 2: 4, 3: 4}
    assert result.leader_changes == 6 and sum(n for (a, _), n in result.handovers.items()
                                              if a == 0) == 6


def test_the_smallest_spread_is_reached_when_one_is_out_of_reach() -> None:
    """Broker 1 leads five partitions of RF 1: no reordering takes them; the demoted broker's
    two partitions go to 2 and 3, and the spread left is 5 - 1 = 4, the least there is."""
    parts = [(1,)] * 5 + [(0, 2), (0, 3), (2,), (3,)]
    result = demote(parts, {0}, {0, 1, 2, 3})
    check(parts, {0}, {0, 1, 2, 3}, result)
    assert (result.spread_after, result.least_spread) == (3, 3)
    assert dict(result.after) == {1: 5, 2: 2, 3: 2}


@pytest.mark.parametrize("minimal", [False, True])
def test_stuck_partitions_are_named_and_stay(minimal: bool) -> None:
    """Partition 0 lives on demoted brokers only; 1's other replica is on dead broker 9; 2 is
    led by dead broker 9, which is not demoted; 3 moves to 4."""
    parts = [(3, 7), (3, 9), (9, 4), (3, 4)]
    result = demote(parts, {3, 7}, {3, 4, 7}, minimal=minimal)
    check(parts, {3, 7}, {3, 4, 7}, result)
    assert (result.all_demoted, result.no_live_replica, result.dead_led) == ([0], [1], [2])
    assert result.final == {3: (4, 3)} and result.targets == (4,)


def test_minimal_changes_only_what_the_demoted_broker_leads() -> None:
    """Broker 1 leads 4 partitions and 2 leads none: the full plan evens that out (3 changes:
    0's two leaderships, and one of 1's), --minimal moves 0's two only and gives both to 2."""
    parts = [(0, 1, 2), (0, 2, 1), (1, 2, 0), (1, 2, 0), (1, 2, 0), (1, 2, 0)]
    full = demote(parts, {0}, {0, 1, 2})
    assert (full.leader_changes, dict(full.after)) == (3, {1: 3, 2: 3})
    minimal = demote(parts, {0}, {0, 1, 2}, minimal=True)
    assert minimal.final == {0: (2, 0, 1), 1: (2, 0, 1)}
    assert dict(minimal.after) == {1: 4, 2: 2} and minimal.least_spread == 2


@given(st.integers(-50, 50), st.integers(0, 100), st.integers(0, 100))
def test_the_search_finds_the_least_value_that_holds(low: int, width: int, answer: int) -> None:
    from kadmin.balance.demote import _least
    high = low + width
    target = low + min(answer, width)
    checked: list[int] = []

    def holds(x: int) -> bool:
        checked.append(x)
        return x >= target

    assert _least(low, high, holds) == target
    assert len(checked) <= 2 * max(1, width).bit_length() + 2
