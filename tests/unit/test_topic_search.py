"""The local topic search over a plan's fixed moves (kadmin.balance.topics): it swaps which
partitions make the moves, and stops at the bound it is given."""

from __future__ import annotations

from typing import Any

import pytest

from kadmin.balance import machine
from kadmin.balance import rebalance as rebalance_module
from kadmin.balance.replicas import Moved, plan_replicas
from kadmin.balance.table import PartitionTable
from kadmin.balance.topics import even_out_topics

ORIGINAL = [(0,), (0,), (0,), (0,), (1,)]
"""Topic 0 (A): partitions 0-2 on broker 0; topic 1 (B): partition 3 on 0, 4 on 1."""
TOPIC_OF = [0, 0, 0, 1, 1]


def planned() -> tuple[dict[int, list[int]], list[dict[int, int]]]:
    """Broker 0 gives B's partition 3 to broker 2 and A's partition 2 to broker 1: A ends
    2/1/0 over brokers 0/1/2 (spread 2), B 0/1/1 (spread 1)."""
    current = {3: [2], 2: [1]}
    counts: list[dict[int, int]] = [{0: 2, 1: 1, 2: 0}, {0: 0, 1: 1, 2: 1}]
    return current, counts


def test_a_swap_lowers_the_worst_spread_and_keeps_every_broker_s_moves() -> None:
    current, counts = planned()
    even_out_topics(ORIGINAL, current, TOPIC_OF, counts, frozenset({0, 1, 2}),
                    lambda *_: True)
    # broker 0 now gives A's partition to 2 instead of B's: A 1/1/1, B 1/1/0
    assert current == {2: [1], 0: [2]}
    assert counts == [{0: 1, 1: 1, 2: 1}, {0: 1, 1: 1, 2: 0}]
    given = sorted(o[0] for p, o in enumerate(ORIGINAL) if p in current)
    taken = sorted(m[0] for m in current.values())
    assert (given, taken) == ([0, 0], [1, 2])


def test_a_plan_already_at_the_bound_is_left_as_it_is() -> None:
    """``enough`` is a lower bound no plan of these moves goes below: a plan at it is not
    searched (at a million partitions the search costs seconds for nothing)."""
    current, counts = planned()
    even_out_topics(ORIGINAL, current, TOPIC_OF, counts, frozenset({0, 1, 2}),
                    lambda *_: True, enough=2)
    assert (current, counts) == planned()


def test_a_plan_of_more_than_the_fewest_moves_is_searched_in_full(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound the topic search stops at holds plans of the fewest moves there are (``F``).
    Broker 3 is drained and its replica in (3, 0, 1) can only reach broker 2 through a chain,
    so this plan makes 4 moves where ``F`` is 3: the bound does not hold it, and the search
    runs again with no stop (here the bound is forced high to see it)."""
    parts = [(2,), (0, 2), (0, 2, 1), (2, 1), (2, 1), (3, 0, 1), (2, 0), (2,), (3, 2), (0,), (0,)]
    table = PartitionTable.of([("t", dict(enumerate(parts)))])
    stops: list[int] = []

    def spy(*args: object, **options: Any) -> Moved:
        stops.append(options.get("enough", 1))
        return plan_replicas(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(machine, "plan_replicas", spy)
    monkeypatch.setattr(machine.evenness, "least_if_fewest", lambda *_: 5)
    result = rebalance_module.rebalance(table, [0, 1, 2], leaders=False)
    assert (result.replica_moves, result.lower_bound) == (4, 3)
    assert stops == [5, 1]
    monkeypatch.setattr(machine.evenness, "least_if_fewest", lambda *_: 1)
    stops.clear()
    assert rebalance_module.rebalance(table, [0, 1, 2], leaders=False).final == result.final
    assert stops == [1]
