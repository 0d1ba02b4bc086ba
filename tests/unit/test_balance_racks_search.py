"""Racks of unequal size on clusters too large for the exact program: the
broker-level search balances the whole cluster, no partition losing a rack, and is kept only
when it meets the rack-free lower bound, which no rack-aware plan can beat."""

from __future__ import annotations

import random
from collections import Counter
from itertools import product
from unittest.mock import patch

import pytest
from balance_oracle import fewest_moves, least_spread_then_fewest_moves
from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_balance import after, check_valid, spec_lower_bound

from kadmin.balance import evenness
from kadmin.balance.evenness import DEFAULT_LIMIT, arcs
from kadmin.balance.metrics import replica_moves
from kadmin.balance.racks import rack_ends, rack_level, toward
from kadmin.balance.rebalance import rebalance, replica_quota
from kadmin.balance.replicas import move_across
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Group, Quota, fewest_to_ranges
from kadmin.model import Replicas
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
    change rack: the search cannot reach the rack-free bound, and the rack-level program
    proves each rack balanced inside the most even the rule allows (spread 9000 - 3000)."""
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
    assert not result.racks.across and result.racks.proven and result.racks.spread == 6000
    assert result.replica_moves == result.lower_bound == 3000 + 4500


def new_rack(n: int, seed: int = 1) -> tuple[PartitionTable, list[int], dict[int, str]]:
    """Racks a {0..4}, b {5,6} and a new rack c {7} with one broker; ``n`` partitions of two
    replicas, one in a and one in b: a replica may leave a or b for c (the partition keeps two
    racks), never go between a and b (it would lose one), so a cannot gain and the whole
    cluster cannot be balanced; b and c share what b holds. Topics of 100 partitions."""
    rack_of = {b: "a" for b in range(5)} | {5: "b", 6: "b", 7: "c"}
    rnd = random.Random(seed)
    topics: list[tuple[str, dict[int, Replicas]]] = [
        (f"t{t:03d}", {p: (rnd.randrange(5), 5 + rnd.randrange(2)) for p in range(100)})
        for t in range(n // 100)]
    return PartitionTable.of(topics), list(rack_of), rack_of


@pytest.mark.parametrize("even_topics", [True, False])
def test_a_new_rack_of_one_broker_gets_its_share_where_the_cluster_cannot_balance(
        even_topics: bool) -> None:
    """20,000 partitions (too many for the exact program): broker c ends with its share of
    what b and c can hold, 40,000 / 8 being out of reach for rack a; each rack's brokers
    within one, the fewest moves at that spread (b's units to c, then a's and b's brokers
    evened inside)."""
    table, targets, rack_of = new_rack(20_000)
    assert arcs(table, targets) > DEFAULT_LIMIT
    result = rebalance(table, targets, rack_of, leaders=False, even_topics=even_topics)
    new_lists = after(table.replicas, result.final)
    check_valid(table.replicas, new_lists, targets, rack_of)
    counts = Counter(b for r in new_lists for b in r)
    assert [counts[b] for b in range(5)] == [4000] * 5  # a holds 20,000 and can only give
    assert sorted(counts[b] for b in (5, 6, 7)) == [6666, 6667, 6667]
    before = Counter(b for r in table.replicas for b in r)
    inside = sum(max(0, 4000 - before[b]) for b in range(5)) + sum(
        max(0, counts[b] - before[b]) for b in (5, 6))
    assert result.racks is not None and not result.racks.across and result.racks.proven
    assert result.racks.spread == 6667 - 4000 and result.unplaced == 0
    assert result.replica_moves == result.lower_bound == counts[7] + inside
    assert result.racks.rack_free_bound == 10_000  # balanced would need 5000 on broker 7
    if even_topics:  # broker 7 holds its share of every topic, not the first topics whole
        on_7 = Counter(table.topic_of[i] for i, r in enumerate(new_lists) if 7 in r)
        assert min(on_7[t] for t in range(200)) >= counts[7] // 200 - 2


# --- the rack-level end state and the moves across racks it asks for (kadmin.balance.racks) ---


@st.composite
def racked_ranges(draw: st.DrawFn) -> tuple[dict[int, int], dict[int, tuple[int, int]],
                                            dict[int, str], dict[int, int]]:
    """Counts per target broker, balanced ranges over the whole cluster (alike or weighted),
    racks of any size (some drained brokers in racks of their own), units outside."""
    n = draw(st.integers(1, 8))
    counts = {b: draw(st.integers(0, 12)) for b in range(n)}
    outside = {b: draw(st.integers(1, 6)) for b in range(n, n + draw(st.integers(0, 2)))}
    rack_of = {b: f"r{draw(st.integers(0, 3))}" for b in [*counts, *outside]}
    weights = draw(st.one_of(st.none(), st.just({b: draw(st.integers(1, 4)) for b in counts})))
    total = sum(counts.values()) + sum(outside.values())
    group = Group(tuple(counts), total, None if weights is None else
                  tuple(weights[b] for b in counts))
    return counts, group.bounds(), rack_of, outside


@settings(max_examples=300)
@given(racked_ranges())
def test_rack_ends_reach_the_fewest_moves_then_the_fewest_units_across_racks(
        c: tuple[dict[int, int], dict[int, tuple[int, int]], dict[int, str], dict[int, int]]
) -> None:
    """Against every end state within the ranges (brute force): the fewest moves any reaches,
    and among those the fewest units that change rack; the flows are what each rack sends."""
    counts, ranges, rack_of, outside = c
    total = sum(counts.values()) + sum(outside.values())
    found = rack_ends(counts, ranges, rack_of, outside)
    brokers = sorted(ranges)
    assert all(ranges[b][0] <= found.ends[b] <= ranges[b][1] for b in brokers)
    assert sum(found.ends.values()) == total
    assert found.moves == sum(max(0, found.ends[b] - counts[b]) for b in brokers)
    sent: Counter[str] = Counter()
    for b, n in [*counts.items(), *outside.items()]:
        sent[rack_of[b]] += n - found.ends.get(b, 0)
    assert {r: n for r, n in found.flow.items() if n} == {r: n for r, n in sent.items() if n}
    best: tuple[int, int] | None = None
    for ends in product(*(range(ranges[b][0], ranges[b][1] + 1) for b in brokers)):
        if sum(ends) != total:
            continue
        moves = sum(max(0, e - counts[b]) for b, e in zip(brokers, ends, strict=True))
        flow: Counter[str] = Counter()
        for b, n in [*counts.items(), *outside.items()]:
            flow[rack_of[b]] += n
        for b, e in zip(brokers, ends, strict=True):
            flow[rack_of[b]] -= e
        score = (moves, sum(max(0, n) for n in flow.values()))
        best = score if best is None or score < best else best
    assert best == (found.moves, sum(max(0, n) for n in found.flow.values()))
    assert found.moves == fewest_to_ranges(counts, ranges, total)  # the rack-free bound
    give, take = toward(counts, found.ends, outside)
    assert sum(give.values()) == sum(take.values()) == found.moves


@st.composite
def unequal_racks(draw: st.DrawFn) -> tuple[list[Replicas], list[int], dict[int, str]]:
    """Small clusters with racks of any size: skewed or not, drained brokers, replication
    factors 1 to 3, partitions spanning fewer racks than they could."""
    n = draw(st.integers(3, 7))
    everyone = list(range(n + draw(st.integers(0, 1))))
    targets = list(range(n))
    rack_of = {b: f"r{draw(st.integers(0, 2))}" for b in everyone}
    skewed = draw(st.booleans())
    pool = st.sampled_from([b for i, b in enumerate(everyone)
                            for _ in range((i + 1) ** 2 if skewed else 1)])
    parts = [tuple(draw(st.lists(pool, min_size=rf, max_size=rf, unique=True)))
             for rf in draw(st.lists(st.integers(1, 3), min_size=1, max_size=14))]
    return parts, targets, rack_of


@pytest.mark.parametrize("even_topics", [True, False])
@settings(max_examples=150)
@given(unequal_racks())
def test_moves_across_racks_meet_the_rack_free_bound_the_integer_program_confirms(
        even_topics: bool, c: tuple[list[Replicas], list[int], dict[int, str]]) -> None:
    """Whenever :func:`move_across` returns a plan, it is valid (no partition loses a rack),
    ends at the rack-level end state (every broker within one of the whole cluster), and moves
    the rack-free bound, which the integer program with rack constraints confirms is the
    fewest; where it returns None the caller searches as before."""
    parts, targets, rack_of = c
    table = PartitionTable.of([("t", dict(enumerate(parts)))])
    counts = Counter(b for r in parts for b in r)
    inside = {b: counts.get(b, 0) for b in targets}
    outside = {b: n for b, n in counts.items() if b not in inside}
    whole = replica_quota(parts, targets, None, counts)
    ranges = Group(tuple(targets), sum(counts.values())).bounds()
    ends = rack_ends(inside, ranges, rack_of, outside)
    assert ends.moves == whole.units
    give, take = toward(inside, ends.ends, outside)
    moved = move_across(table, targets, Quota(give, take, frozenset(), frozenset()), rack_of,
                        ends.flow, even_topics=even_topics)
    if moved is None:
        return
    plan = moved.final
    new = after(parts, plan)
    check_valid(parts, new, targets, rack_of)
    end = Counter(b for r in new for b in r)
    assert {b: end[b] for b in targets} == ends.ends
    assert replica_moves(parts, plan) == whole.units == fewest_moves(parts, targets, rack_of)


def test_moves_across_racks_are_made_directly_on_a_large_cluster() -> None:
    """racks 8/7/7: the few partitions that may change rack carry the units the end state
    sends across, and every other move stays inside its rack (no search needed)."""
    table, targets, rack_of = racked(21, 1, 3, 400)
    counts = Counter(b for r in table.replicas for b in r)
    whole = replica_quota(table.replicas, targets, None, counts)
    ends = rack_ends(counts, Group(tuple(targets), sum(counts.values())).bounds(), rack_of, {})
    assert sum(max(0, n) for n in ends.flow.values()) > 0  # some units must change rack
    give, take = toward(counts, ends.ends, {})
    moved = move_across(table, targets, Quota(give, take, frozenset(), frozenset()), rack_of,
                        ends.flow)
    assert moved is not None
    plan = moved.final
    check_valid(table.replicas, after(table.replicas, plan), targets, rack_of)
    assert replica_moves(table.replicas, plan) == whole.units


# --- as evenly as the rule allows (kadmin.balance.racks.rack_level) ---------------------------


@st.composite
def blocked_racks(draw: st.DrawFn) -> tuple[list[Replicas], list[int], dict[int, str]]:
    """Clusters where racks often forbid balance: racks a and b of any size, a new rack c of
    one or two empty brokers, most partitions spanning a and b (a replica may leave for c,
    not go between a and b), a few on one rack or on all three; loads skewed or not; maybe a
    broker of a drained (its replicas must move, inside a or out to c), or a drained broker
    with no rack, standing in for one of a (its replicas count in no rack)."""
    a, b, c = draw(st.integers(2, 4)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    rack_of = {x: "a" if x < a else "b" if x < a + b else "c" for x in range(a + b + c)}
    targets = list(rack_of)
    ina, inb = list(range(a)), list(range(a, a + b))
    drained = draw(st.sampled_from(["", "a", "none"]))
    if drained:
        if drained == "a":
            rack_of[a + b + c] = "a"
        ina.append(a + b + c)
    skew = draw(st.booleans())
    pick_a = st.sampled_from([x for i, x in enumerate(ina) for _ in range((i + 1) if skew else 1)])
    pick_b = st.sampled_from([x for i, x in enumerate(inb) for _ in range((i + 1) if skew else 1)])
    shapes = st.sampled_from(["ab"] * 6 + ["a", "b", "abc"])
    parts: list[Replicas] = []
    for shape in draw(st.lists(shapes, min_size=4, max_size=16)):
        members = [draw(pick_a)] if "a" in shape else []
        members += [draw(pick_b)] if "b" in shape else []
        members += [a + b] if "c" in shape else []
        parts.append(tuple(members))
    return parts, targets, rack_of


@settings(max_examples=200)
@given(st.one_of(blocked_racks(), unequal_racks()), st.booleans(), st.booleans())
def test_where_racks_forbid_balance_brokers_end_as_evenly_as_the_rule_allows(
        c: tuple[list[Replicas], list[int], dict[int, str]], even_topics: bool, large: bool
) -> None:
    """Against the integer program with rack constraints (least spread, each rack's brokers
    within one, then fewest moves): the rack-level program's spread is the least, its moves a
    bound no plan beats; a plan that does not balance every broker reaches that spread, and
    its moves are the program's fewest wherever it says proven (never fewer). ``large``: the
    partition program stands aside as on a large cluster, so the plan is the search's."""
    parts, targets, rack_of = c
    table = PartitionTable.of([("t", dict(enumerate(parts)))])
    spread, fewest = least_spread_then_fewest_moves(parts, targets, rack_of)
    level = rack_level(parts, targets, rack_of)
    assert level is not None and level.spread == spread and level.moves <= fewest
    event("a drained broker without a rack" if any(b not in rack_of for r in parts for b in r)
          else "every broker in a rack")
    with patch.object(evenness, "DEFAULT_LIMIT", 0 if large else evenness.DEFAULT_LIMIT):
        result = rebalance(table, targets, rack_of, leaders=False, even_topics=even_topics)
    if result.racks is None:
        assert spread <= 1
        return
    if result.racks.across:
        assert spread <= 1 and result.racks.spread is None
    else:
        assert spread > 1 and result.racks.spread == spread
    new = after(parts, result.final)
    check_valid(parts, new, targets, rack_of)
    end = Counter(b for r in new for b in r)
    assert max(end[b] for b in targets) - min(end[b] for b in targets) == spread
    for rack in set(rack_of[b] for b in targets):
        mine = [end[b] for b in targets if rack_of[b] == rack]
        assert max(mine) - min(mine) <= 1
    assert result.replica_moves >= fewest >= result.lower_bound >= level.moves
    if not result.racks.across:
        assert result.lower_bound == level.moves
    if result.racks.proven:
        assert result.replica_moves == fewest == result.lower_bound
    rackless = any(b not in rack_of for r in parts for b in r)
    if not result.racks.across and result.replica_moves == fewest and not rackless:
        # the bound knows which broker of a small rack gains; with a drained broker without
        # a rack it can still be a move short (a plan of the fewest moves then says not
        # proven: [(0,3),(0,3),(0,3),(1,3),(1,3,4),(5,3,4)], racks a {0,1,2}, b {3}, c {4})
        assert result.racks.proven


@pytest.mark.parametrize("parts, targets, rack_of", [
    # one rack of two targets: the partition on no target must take both, so broker 0 too
    ([(3, 7), (0,), (0,)], [0, 4], {0: "r0", 3: "r0", 4: "r0", 7: "r0"}),
    # r1's only target, broker 1, gains every partition ending on r1 that it does not hold
    ([(2, 0), (0, 1), (1, 2), (2, 0), (0, 1)], [1, 2, 3],
     {0: "r0", 1: "r1", 2: "r0", 3: "r1"}),
    # broker 5 (rack b of two) sends its one partition to a and must take one back from 4,
    # whose partitions can leave b only for c
    ([(0, 4), (0, 4), (1, 4), (5,), (0, 4)], list(range(7)),
     {0: "a", 1: "a", 2: "a", 3: "a", 4: "b", 5: "b", 6: "c", 7: "a"}),
    ([(3,), (2, 5), (3, 4), (2, 5), (4,), (3, 4), (3, 5), (2, 5), (3, 4), (3, 5, 6), (1, 5),
      (3, 5), (3, 5), (3, 5), (1, 4), (1, 5)], list(range(7)),
     {0: "a", 1: "a", 2: "a", 3: "a", 4: "b", 5: "b", 6: "c"}),
])
def test_the_rack_level_bound_counts_what_the_brokers_of_a_small_rack_gain(
        parts: list[Replicas], targets: list[int], rack_of: dict[int, str]) -> None:
    """Clusters where the rack-level program, blind to which broker of a rack holds a
    replica, once bounded the moves one below the integer program's fewest (so the plan
    making them said "not proven"): in a rack a partition can fill, a broker gains each
    partition filling it that it does not hold, and one for each partition holding it that
    leaves the rack, beside what it nets. The bound is now the fewest, and the plan proven."""
    spread, fewest = least_spread_then_fewest_moves(parts, targets, rack_of)
    level = rack_level(parts, targets, rack_of)
    assert level is not None and (level.spread, level.moves) == (spread, fewest)
    table = PartitionTable.of([("t", dict(enumerate(parts)))])
    result = rebalance(table, targets, rack_of, leaders=False)
    assert result.replica_moves == fewest
    assert result.racks is None or result.racks.across or result.racks.proven
