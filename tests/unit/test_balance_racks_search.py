"""Racks of unequal size on clusters too large for the exact program (issue 17): the
broker-level search balances the whole cluster, no partition losing a rack, and is kept only
when it meets the rack-free lower bound, which no rack-aware plan can beat."""

from __future__ import annotations

from collections import Counter

import pytest
from test_balance import after, check_valid, spec_lower_bound

from kadmin.balance.evenness import DEFAULT_LIMIT, arcs
from kadmin.balance.rebalance import rebalance
from kadmin.balance.table import PartitionTable
from kadmin.synthetic import synthetic_cluster


def racked(old: int, new: int, racks: int, topics: int) -> tuple[PartitionTable, list[int],
                                                                  dict[int, str]]:
    """kadmin's skewed synthetic cluster, broker b in rack b % racks, ``new`` empty brokers
    added to the racks in turn (so the racks end unequal in size)."""
    snapshot = synthetic_cluster(old, topics, 10, 3, racks=racks, seed=old)
    table = PartitionTable.from_topics(snapshot.topics, sorted(snapshot.topics))
    targets = list(range(old + new))
    return table, targets, {b: f"r{b % racks}" for b in targets}


@pytest.mark.parametrize("even_topics", [True, False])
@pytest.mark.parametrize(("old", "new", "racks"), [(21, 1, 3), (12, 2, 4)])
def test_large_clusters_are_balanced_across_unequal_racks_at_the_rack_free_bound(
        old: int, new: int, racks: int, even_topics: bool) -> None:
    table, targets, rack_of = racked(old, new, racks, 400)
    assert arcs(table, targets) > DEFAULT_LIMIT  # the exact program stands aside
    assert len(Counter(rack_of.values()).values()) > 1
    result = rebalance(table, targets, rack_of, even_topics=even_topics)
    new_lists = after(table.replicas, result.final)
    check_valid(table.replicas, new_lists, targets, rack_of)
    counts = Counter(b for r in new_lists for b in r)
    assert max(counts[b] for b in targets) - min(counts[b] for b in targets) <= 1
    free = spec_lower_bound(table.replicas, targets)
    assert result.replica_moves == result.lower_bound == free  # no rack-aware plan does better
    assert result.racks is not None and result.racks.across
    assert result.racks.rack_free_bound == free and result.unplaced == 0


def test_where_racks_forbid_balance_across_them_each_rack_is_balanced_inside() -> None:
    """Racks a {0,1,2}, b {3,4}, c {5}; every partition spans all three, so no replica may
    change rack: the search cannot reach the rack-free bound, and each rack is balanced on its
    own (the direct phase keeps moves inside their rack; none is left unplaced)."""
    rack_of = {b: "a" if b < 3 else "b" if b < 5 else "c" for b in range(6)}
    parts = [(0 if p % 3 else 1, 3, 5) for p in range(9000)]
    table = PartitionTable.of([("t", dict(enumerate(parts)))])
    assert arcs(table, list(rack_of)) > DEFAULT_LIMIT
    result = rebalance(table, list(rack_of), rack_of, leaders=False)
    new_lists = after(table.replicas, result.final)
    check_valid(table.replicas, new_lists, list(rack_of), rack_of)
    counts = Counter(b for r in new_lists for b in r)
    assert [counts[b] for b in range(6)] == [3000, 3000, 3000, 4500, 4500, 9000]
    assert result.unplaced == 0 and result.racks is not None
    assert not result.racks.across and not result.racks.proven
    assert result.replica_moves == result.lower_bound == 3000 + 4500
