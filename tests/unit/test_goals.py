"""Balancing goals: brokers of different sizes, every topic even, racks as they are;
each held to the exact integer program of ``balance_oracle``."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from balance_oracle import exact, fewest_moves, least_topic_spread, share_bounds
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from test_balance import Cluster, after, check_valid, clusters, table_of

from kadmin import plans
from kadmin.balance.capacity import (
    MB,
    over_capacity,
    parse_capacities,
    read_capacities,
    used_share,
)
from kadmin.balance.evenness import fewest_moves_within, lexicographic
from kadmin.balance.factor import change_replication_factor
from kadmin.balance.metrics import replica_moves
from kadmin.balance.rebalance import change_factor, rebalance, rebalance_bytes
from kadmin.balance.replicas import replica_counts
from kadmin.balance.scope import racks
from kadmin.balance.table import PartitionTable
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    InvalidInput,
    PartitionMove,
    ReassignmentPlan,
    Replicas,
)
from kadmin.placement import PlacementOptions, Strategy, place
from kadmin.synthetic import synthetic_cluster

# --- capacity files -------------------------------------------------------------------------


def test_cruise_control_capacity_file_with_default_and_jbod(tmp_path: Path) -> None:
    path = tmp_path / "capacity.json"
    path.write_text(json.dumps({"brokerCapacities": [
        {"brokerId": "-1", "capacity": {"DISK": "500000", "CPU": "100", "NW_IN": "50000"},
         "doc": "the default"},
        {"brokerId": "6", "capacity": {"DISK": {"/data1": "250000", "/data2": "750000.5"},
                                       "CPU": {"num.cores": "8"}}},
        {"brokerId": 7, "capacity": {"DISK": 2000}}]}))
    found = read_capacities(path)
    assert found.weights([0, 6, 7]) == {0: 500000 * MB, 6: round(1000000.5 * MB), 7: 2000 * MB}


def test_plain_capacity_map() -> None:
    found = parse_capacities({"0": 10**12, "1": 2 * 10**12}, "cap.json")
    assert found.weights([0, 1]) == {0: 10**12, 1: 2 * 10**12}
    with pytest.raises(InvalidInput, match=r"cap.json: no capacity for broker\(s\) 2 and no "
                                           r"default"):
        found.weights([0, 1, 2])


@pytest.mark.parametrize(("doc", "message"), [
    ([], r"c.json: \$: expected Cruise Control's"),
    ({}, r"c.json: \$: expected"),
    ({"0": "12"}, r"c.json: \$\[\"0\"\]: expected a capacity in bytes .*'12'"),
    ({"0": 0}, r"c.json: \$\[\"0\"\]: expected a capacity in bytes"),
    ({"x": 5}, r"c.json: \$.x: expected a broker id"),
    ({"-2": 5}, r"c.json: \$\[\"-2\"\]: expected a broker id"),
    ({"brokerCapacities": {}}, r"c.json: \$.brokerCapacities: expected a non-empty list"),
    ({"brokerCapacities": [5]}, r"\$.brokerCapacities\[0\]: expected an object"),
    ({"brokerCapacities": [{"capacity": {"DISK": "1"}}]},
     r"\$.brokerCapacities\[0\].brokerId: missing"),
    ({"brokerCapacities": [{"brokerId": "a", "capacity": {"DISK": "1"}}]},
     r"\$.brokerCapacities\[0\].brokerId: expected a broker id"),
    ({"brokerCapacities": [{"brokerId": "1"}]},
     r"\$.brokerCapacities\[0\].capacity: expected an object with DISK"),
    ({"brokerCapacities": [{"brokerId": "1", "capacity": {"CPU": "1"}}]},
     r"\$.brokerCapacities\[0\].capacity.DISK: missing"),
    ({"brokerCapacities": [{"brokerId": "1", "capacity": {"DISK": "lots"}}]},
     r"\$.brokerCapacities\[0\].capacity.DISK: expected a size in MB .*'lots'"),
    ({"brokerCapacities": [{"brokerId": "1", "capacity": {"DISK": "-5"}}]},
     r"\$.brokerCapacities\[0\].capacity.DISK: expected a size in MB"),
    ({"brokerCapacities": [{"brokerId": "1", "capacity": {"DISK": {"/d": "x"}}}]},
     r"\$.brokerCapacities\[0\].capacity.DISK\[\"/d\"\]: expected a size in MB"),
    ({"brokerCapacities": [{"brokerId": "1", "capacity": {"DISK": {}}}]},
     r"\$.brokerCapacities\[0\].capacity.DISK: no log dir listed"),
    ({"brokerCapacities": [{"brokerId": "1", "capacity": {"DISK": "1"}},
                           {"brokerId": 1, "capacity": {"DISK": "2"}}]},
     r"\$.brokerCapacities\[1\].brokerId: broker 1 is given twice"),
])
def test_malformed_capacity_files_name_the_json_path(doc: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as caught:
        parse_capacities(doc, "c.json")
    assert "\n" not in str(caught.value)


def test_an_unreadable_capacity_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "capacity.json"
    path.write_text('{"brokerCapacities": [')
    with pytest.raises(InvalidInput, match=r"capacity\.json: not valid JSON"):
        read_capacities(path)


# --- capacity shares ---------------------------------------------------------------------------


@st.composite
def weighted(draw: st.DrawFn) -> tuple[Cluster, dict[int, int]]:
    cluster = draw(clusters())
    weights = {b: draw(st.sampled_from([1, 2, 3, 5])) for b in cluster[1]}
    return cluster, weights


def within_shares(new: Sequence[Replicas], targets: Sequence[int],
                  weights: Mapping[int, int] | None) -> bool:
    counts = Counter(b for r in new for b in r)
    bounds = share_bounds(sum(map(len, new)), targets, weights)
    return all(lo <= counts[b] <= hi for b, (lo, hi) in bounds.items())


@settings(max_examples=200)
@given(weighted())
def test_capacity_shares_are_met_with_the_exact_fewest_moves(c: tuple[Cluster, dict[int, int]]
                                                             ) -> None:
    """Every broker ends at the floor or ceiling of ``R * w_b / sum(w)``, with exactly as
    few moves as the integer program; the printed bound is no more than that, and equal to it
    whenever the cheapest plan moves each replica once (the bound is the sum of excesses over
    the best floor/ceiling choice)."""
    (parts, targets, _), weights = c
    optimum = fewest_moves(parts, targets, weights=weights)
    assume(optimum is not None)
    result = rebalance(table_of(parts), targets, leaders=False, weights=weights)
    new = after(parts, result.final)
    check_valid(parts, new, targets, None)
    assert result.unplaced == 0
    assert within_shares(new, targets, weights)
    assert result.replica_moves == optimum
    assert result.lower_bound <= optimum


@settings(max_examples=120)
@given(weighted())
def test_preferred_leaders_follow_the_capacity_shares(c: tuple[Cluster, dict[int, int]]) -> None:
    (parts, targets, _), weights = c
    result = rebalance(table_of(parts), targets, weights=weights)
    assume(result.unplaced == 0)
    new = after(parts, result.final)
    leaders = [(r[0],) for r in new]
    moved_only = after(parts, rebalance(table_of(parts), targets, leaders=False,
                                        weights=weights).final)
    optimum = fewest_leader_changes_weighted(moved_only, [r[0] for r in parts], targets, weights)
    assume(optimum is not None)
    assert within_shares(leaders, targets, weights)
    assert result.leader_changes == optimum


def fewest_leader_changes_weighted(replicas: Sequence[Replicas], before: Sequence[int],
                                   targets: Sequence[int], weights: Mapping[int, int]
                                   ) -> int | None:
    """Leaders as one replica per partition: the replica program with leaders alone, where a
    partition may only lead with one of its replicas (brokers outside its list cost more than
    any plan: the program then says None when no reordering can do it)."""
    lists = [(b,) for b in before]
    allowed = [set(r) & set(targets) for r in replicas]
    found = fewest_moves_restricted(lists, targets, weights, allowed)
    return found


def fewest_moves_restricted(lists: Sequence[Replicas], targets: Sequence[int],
                            weights: Mapping[int, int], allowed: Sequence[set[int]]
                            ) -> int | None:
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    brokers = sorted(targets)
    cells = [(p, b) for p in range(len(lists)) for b in brokers if b in allowed[p]]
    if not cells:
        return None
    cost = np.array([float(b not in lists[p]) for p, b in cells])
    rows, low, high = [], [], []
    for p in range(len(lists)):
        rows.append([1.0 if c[0] == p else 0.0 for c in cells])
        low.append(1)
        high.append(1)
    for b, (lo, hi) in share_bounds(len(lists), brokers, weights).items():
        rows.append([1.0 if c[1] == b else 0.0 for c in cells])
        low.append(lo)
        high.append(hi)
    found = milp(cost, constraints=LinearConstraint(np.array(rows), low, high),
                 integrality=np.ones(len(cells)), bounds=Bounds(0, 1), options=exact())
    return None if found.status != 0 else round(found.fun)


def test_a_broker_twice_the_size_ends_with_twice_the_replicas() -> None:
    parts = [(0, 1), (1, 2), (2, 0), (0, 1), (1, 2), (2, 0)] * 4
    weights = {0: 1, 1: 1, 2: 1, 3: 3}
    result = rebalance(table_of(parts), [0, 1, 2, 3], weights=weights)
    counts = Counter(b for r in after(parts, result.final) for b in r)
    assert counts == {0: 8, 1: 8, 2: 8, 3: 24}
    assert result.replica_moves == result.lower_bound == 24
    leaders = Counter(r[0] for r in after(parts, result.final))
    assert leaders == {0: 4, 1: 4, 2: 4, 3: 12}


# --- one lower bound ----------------------------------------------------------


@st.composite
def snapshots(draw: st.DrawFn) -> tuple[ClusterSnapshot, list[int], dict[int, int] | None]:
    """A cluster of up to three topics of mixed replication factors over registered brokers
    (some with racks of unequal size), targets that drain some and add others, and maybe
    capacities."""
    parts, targets, _ = draw(clusters())
    everyone = sorted({b for r in parts for b in r} | set(targets))
    racks = draw(st.sampled_from(["none", "equal", "unequal"]))
    rack_of = {b: ("a" if racks == "equal" and i % 2 else
                   "a" if racks == "unequal" and i % 3 == 0 else "b") for i, b in
               enumerate(everyone)} if racks != "none" else {}
    brokers = {b: Broker(b, rack=rack_of.get(b)) for b in everyone}
    names = [f"t{draw(st.integers(0, 2))}" for _ in parts]
    topics: dict[str, dict[int, Replicas]] = {}
    for name, members in zip(names, parts, strict=True):
        topics.setdefault(name, {})[len(topics.get(name, {}))] = members
    weights = draw(st.one_of(st.none(), st.just({b: 1 + b % 3 for b in everyone})))
    return ClusterSnapshot(brokers, topics), targets, weights


@settings(max_examples=100)
@given(snapshots(), st.booleans())
@example(  # racks forbid balance (rack a's one target must hold 3): the bound is rack_level's
    (ClusterSnapshot({b: Broker(b, rack="a" if b in (1, 3) else "b") for b in range(5)},
                     {"t0": {0: (0, 1), 1: (0, 1), 2: (3, 0), 3: (1,)}}), [0, 1, 2, 4], None),
    True)
def test_plan_stats_prints_the_bound_plan_rebalance_prints(
        c: tuple[ClusterSnapshot, list[int], dict[int, int] | None], rack_aware: bool) -> None:
    """The same plan on the same cluster: the same lower bound from ``plan stats`` as from the
    rebalance that made it (racks, mixed replication factors, capacities), and never more than
    the plan's moves; a replication factor change likewise."""
    snapshot, targets, weights = c
    table = PartitionTable.from_topics(snapshot.topics, sorted(snapshot.topics))
    rack_of = racks(snapshot.brokers, targets, rack_aware)
    result = rebalance(table, targets, rack_of, weights=weights)
    plan = ReassignmentPlan(tuple(table.moves(result.final)[0]))
    new = after(table.replicas, result.final)
    assume({m.topic for m in plan.moves} == set(snapshot.topics))  # the plan's topics
    assume(set(targets) == {b for r in new for b in r})  # the brokers stats sees as targets
    stats = plans.plan_stats(plan, snapshot, rack_aware=rack_aware, weights=weights)
    assert stats.replica_moves == result.replica_moves
    assert stats.lower_bound == result.lower_bound <= result.replica_moves
    factor = max(map(len, table.replicas))
    changed = change_factor(table, factor, targets, replica_counts(table.replicas), rack_of)
    plan = ReassignmentPlan(tuple(table.moves(changed.final)[0]))
    if plan.moves and {m.topic for m in plan.moves} == set(snapshot.topics) and set(
            targets) == {b for r in after(table.replicas, changed.final) for b in r}:
        stats = plans.plan_stats(plan, snapshot, rack_aware=rack_aware)
        assert stats.lower_bound == changed.lower_bound <= changed.replica_moves


def test_a_replication_factor_decrease_is_bound_by_what_it_forces() -> None:
    """Dropping followers moves nothing, so its bound is 0, not the moves that would balance
    the replicas as they were (the stats once said 27 for a plan of 21)."""
    snapshot = ClusterSnapshot({b: Broker(b) for b in range(3)},
                               {"t": {0: (0, 1, 2), 1: (0, 1, 2), 2: (0, 1)}})
    plan = ReassignmentPlan((PartitionMove("t", 0, (0, 1)), PartitionMove("t", 1, (0, 2))))
    stats = plans.plan_stats(plan, snapshot)
    assert (stats.replica_moves, stats.lower_bound) == (0, 0)


# --- every topic even ----------------------------------------------------------------------------


@st.composite
def topical(draw: st.DrawFn, racks: bool = False) -> tuple[Cluster, list[int]]:
    """A cluster whose partitions belong to up to three topics (in table order)."""
    cluster = draw(clusters(racks=racks))
    topics = sorted(draw(st.lists(st.integers(0, 2), min_size=len(cluster[0]),
                                  max_size=len(cluster[0]))))
    return cluster, topics


def topic_table(parts: Sequence[Replicas], topics: Sequence[int]) -> PartitionTable:
    grouped: dict[str, dict[int, Replicas]] = {}
    for t, members in zip(topics, parts, strict=True):
        grouped.setdefault(f"t{t}", {})[len(grouped.get(f"t{t}", {}))] = members
    return PartitionTable.of(grouped.items())


def uniform(parts: Sequence[Replicas], targets: Sequence[int]) -> dict[int, tuple[int, int]]:
    return share_bounds(sum(map(len, parts)), targets, None)


def worst_topic(new: Sequence[Replicas], topics: Sequence[int], targets: Sequence[int]) -> int:
    worst = 0
    for t in set(topics):
        counts = Counter(b for r, u in zip(new, topics, strict=True) if u == t for b in r)
        worst = max(worst, max(counts[b] for b in targets) - min(counts[b] for b in targets))
    return worst


@settings(max_examples=150)
@given(topical(), st.integers(0, 3))
def test_fewest_moves_with_a_topic_spread_are_the_integer_programs(
        c: tuple[Cluster, list[int]], k: int) -> None:
    (parts, targets, _), topics = c
    table = topic_table(parts, topics)
    optimum = fewest_moves(table.replicas, targets, topics=table.topic_of, topic_spread=k)
    found = fewest_moves_within(table, targets, uniform(parts, targets), k)
    assert (found is None) == (optimum is None)
    if found is None:
        return
    new = after(table.replicas, found.final)
    check_valid(table.replicas, new, targets, None)
    assert found.moves == optimum == replica_moves(table.replicas, found.final)
    assert worst_topic(new, table.topic_of, targets) <= k
    assert within_shares(new, targets, None)


@settings(max_examples=100)
@given(topical(racks=True), st.sampled_from([None, 1, 2]))
def test_racks_and_topic_spread_together_are_the_integer_programs(
        c: tuple[Cluster, list[int]], k: int | None) -> None:
    (parts, targets, rack_of), topics = c
    table = topic_table(parts, topics)
    optimum = fewest_moves(table.replicas, targets, rack_of, topics=table.topic_of,
                           topic_spread=k)
    found = fewest_moves_within(table, targets, uniform(parts, targets), k, rack_of)
    assert (found is None) == (optimum is None)
    if found is not None:
        new = after(table.replicas, found.final)
        check_valid(table.replicas, new, targets, rack_of)
        assert found.moves == optimum


@settings(max_examples=100)
@given(topical())
def test_the_default_is_the_lexicographic_optimum(c: tuple[Cluster, list[int]]) -> None:
    """The fewest moves there are, then the least worst topic spread among plans that make
    that many: both keys equal the integer program's."""
    (parts, targets, _), topics = c
    table = topic_table(parts, topics)
    moves = fewest_moves(table.replicas, targets)
    assume(moves is not None)
    found = lexicographic(table, targets, uniform(parts, targets))
    assert found is not None
    new = after(table.replicas, found.final)
    assert found.moves == moves
    least = least_topic_spread(table.replicas, targets, table.topic_of, moves)
    assert worst_topic(new, table.topic_of, targets) == found.topic_spread == least
    result = rebalance(table, targets)  # the default of plan rebalance
    new = after(table.replicas, result.final)
    assert result.replica_moves == moves and result.topics is not None and result.topics.exact
    assert worst_topic(new, table.topic_of, targets) == result.topics.spread == least


@settings(max_examples=100)
@given(topical(), st.sampled_from([{0: 1, 1: 2}, {0: 3, 1: 1, 2: 1}, {0: 1, 1: 1, 2: 1, 3: 4}]))
def test_the_default_with_capacities_is_the_lexicographic_optimum(
        c: tuple[Cluster, list[int]], sizes: dict[int, int]) -> None:
    """Brokers of different sizes: the fewest moves that meet the capacity shares, then the
    least worst topic spread among plans of that many; both keys the integer program's (the
    search starts at the spread the shares force, ``(max lo - min hi) / topics``)."""
    (parts, targets, _), topics = c
    weights = {b: sizes.get(i, 1) for i, b in enumerate(sorted(targets))}
    table = topic_table(parts, topics)
    moves = fewest_moves(table.replicas, targets, weights=weights)
    assume(moves is not None)
    result = rebalance(table, targets, leaders=False, weights=weights)
    assume(result.unplaced == 0)
    new = after(table.replicas, result.final)
    assert result.replica_moves == moves and within_shares(new, targets, weights)
    assert result.topics is not None and result.topics.exact
    least = least_topic_spread(table.replicas, targets, table.topic_of, moves, weights=weights)
    assert worst_topic(new, table.topic_of, targets) == result.topics.spread == least


# --- racks as they really are -----------------------------------------------------------------


@st.composite
def uneven_racks(draw: st.DrawFn) -> Cluster:
    """Racks of any size: a new rack of one broker, racks of different sizes."""
    parts, targets, _ = draw(clusters())
    everyone = sorted({b for r in parts for b in r} | set(targets))
    rack_of = {b: f"r{draw(st.integers(0, 2))}" for b in everyone}
    return parts, targets, rack_of


def rack_spreads(new: Sequence[Replicas], targets: Sequence[int], rack_of: Mapping[int, str]
                 ) -> list[int]:
    counts = Counter(b for r in new for b in r)
    out = []
    for rack in {rack_of[b] for b in targets}:
        inside = [counts[b] for b in targets if rack_of[b] == rack]
        out.append(max(inside) - min(inside))
    return out


@settings(max_examples=150)
@given(uneven_racks())
def test_racks_of_any_size_balance_all_brokers_whenever_the_rule_allows(c: Cluster) -> None:
    """No partition ends on fewer racks than it has; the brokers end within one of each other
    with exactly the integer program's fewest moves whenever some plan can; otherwise each rack
    is balanced inside and the result says so."""
    parts, targets, rack_of = c
    assert rack_of is not None
    optimum = fewest_moves(parts, targets, rack_of)
    result = rebalance(table_of(parts), targets, rack_of, leaders=False)
    new = after(parts, result.final)
    if result.unplaced:
        assume(False)  # partitions as wide as a rack's brokers: nothing to compare
    check_valid(parts, new, targets, None)
    kept = len({rack_of[b] for b in targets})
    for old, now in zip(parts, new, strict=True):  # a rack with no target left cannot be kept
        assert len({rack_of[b] for b in now}) >= min(kept, len({rack_of[b] for b in old}))
    if result.racks is None:  # equal racks: the broker-level search, exact
        assert optimum is not None and result.replica_moves == optimum
        return
    assert result.racks.across == (optimum is not None)
    if optimum is not None:
        assert result.replica_moves == result.lower_bound == optimum
        assert within_shares(new, targets, None)
        assert result.lower_bound >= result.racks.rack_free_bound
    else:
        assert max(rack_spreads(new, targets, rack_of)) <= 1


def test_a_new_rack_of_one_broker_fills_up() -> None:
    """Racks a {0,1,2}, b {3,4,5} and a new rack c {6}; every partition spans a and b. Moving
    replicas onto 6 loses no partition a rack (it adds one): every broker ends within one."""
    rack_of = {b: "a" if b < 3 else "b" if b < 6 else "c" for b in range(7)}
    parts = [(i % 3, 3 + (i * 7) % 3) for i in range(60)]
    targets = list(range(7))
    result = rebalance(table_of(parts), targets, rack_of)
    new = after(parts, result.final)
    check_valid(parts, new, targets, rack_of)
    counts = Counter(b for r in new for b in r)
    assert max(counts.values()) - min(counts.values()) <= 1 and counts[6] == 17
    assert result.racks is not None and result.racks.across
    assert result.replica_moves == result.lower_bound == fewest_moves(parts, targets, rack_of) == 17


# --- bytes and capacity -------------------------------------------------------------------------


@settings(max_examples=30)
@given(st.integers(0, 10_000), st.sampled_from([None, 3]))
def test_bytes_per_unit_of_capacity_end_within_one_largest_partition(
        seed: int, drained: int | None) -> None:
    """Brokers of three sizes: bytes over capacity end within one largest partition over the
    smallest capacity of each other, no byte left on a drained broker, and no plan moves fewer
    bytes than the bound."""
    snapshot = synthetic_cluster(9, 40, 10, 3, seed=seed)
    table = PartitionTable.from_topics(snapshot.topics, sorted(snapshot.topics))
    rng = random.Random(seed)
    sizes = [int(rng.lognormvariate(16, 1.0)) for _ in table.replicas]
    targets = [b for b in range(12) if b != drained]
    capacity = {b: (1 + b % 3) * 10**12 for b in targets}
    result = rebalance_bytes(table, sizes, targets, capacities=capacity)
    new = after(table.replicas, result.final)
    check_valid(table.replicas, new, targets, None)
    held = {b: sum(s for s, r in zip(sizes, new, strict=True) if b in r) for b in targets}
    loads = [held[b] / capacity[b] for b in targets]
    assert max(loads) - min(loads) <= max(sizes) / min(capacity.values())
    assert result.bytes_moved is not None and result.bytes_moved >= result.lower_bound


def test_bytes_beyond_the_total_capacity_are_refused() -> None:
    table = table_of([(0, 1), (1, 2), (2, 0)])
    with pytest.raises(InvalidInput, match=r"hold 60 B, more than the 45 B capacity of the 3 "
                                           r"target broker\(s\)"):
        rebalance_bytes(table, [10, 10, 10], [0, 1, 2], capacities={0: 15, 1: 15, 2: 15})


def test_brokers_over_capacity_are_named_with_their_use() -> None:
    assert over_capacity({0: 10, 1: 30, 2: 5}, {0: 20, 1: 20, 2: 20}) == [(1, 30, 20)]
    assert used_share({0: 10, 1: 30}, {0: 20, 1: 20}) == {0: 0.5, 1: 1.5}


def test_three_racks_of_seven_one_new_and_partitions_placed_before_rack_awareness() -> None:
    """21 brokers in 3 racks of 7 and a new broker in the first rack; 100 of 1,000 partitions
    were placed before rack awareness (two replicas in one rack). Every broker ends within one
    of the others with the integer program's fewest moves under the diversity rule (more than
    the rack-free bound, and the summary's bound is that minimum); the topics end as even as
    plans of those moves allow."""
    rack_of = {b: f"r{b % 3}" for b in range(21)}
    rack_of[21] = "r0"
    current = {f"t{i:02d}": {p: (0, 0, 0) for p in range(20)} for i in range(50)}
    topics = {t: dict(parts) for t, parts in place(
        current, sorted(current), [Broker(b, rack=rack_of[b]) for b in range(21)],
        PlacementOptions(strategy=Strategy.KAFKA)).items()}
    rng = random.Random(1)
    names = sorted(topics)
    for k in range(100):
        a, b = rng.sample([x for x in range(21) if rack_of[x] == "r1"], 2)
        topics[names[k % 50]][k // 50] = (a, b, rng.choice([x for x in range(21)
                                                             if rack_of[x] == "r2"]))
    table = PartitionTable.from_topics(topics, sorted(topics))
    targets = list(range(22))
    result = rebalance(table, targets, rack_of)
    new = after(table.replicas, result.final)
    check_valid(table.replicas, new, targets, rack_of)
    assert result.racks is not None and result.racks.across
    assert result.replica_moves == result.lower_bound == fewest_moves(table.replicas, targets,
                                                                       rack_of)
    assert result.lower_bound > result.racks.rack_free_bound
    counts = Counter(b for r in new for b in r)
    assert max(counts.values()) - min(counts.values()) <= 1
    assert result.topics is not None and result.topics.exact
    assert worst_topic(new, table.topic_of, targets) == result.topics.spread


def test_a_factor_increase_keeps_the_topic_even() -> None:
    """--replication-factor 3 --topics t0 on a cluster where other topics load brokers 4-7:
    t0's new replicas go where t0 has fewest, so it ends within one with the same 24 moves
    (on the least loaded brokers cluster-wide they all went to 0-3: spread 0 -> 6)."""
    parts = [(p % 8, (p + 3) % 8) for p in range(24)]  # t0: 6 per broker
    loads = {b: 2 + (500 if b >= 4 else 0) for b in range(8)}
    final = change_replication_factor(table_of(parts), 3, range(8), loads)
    new = after(parts, final)
    counts = Counter(b for r in new for b in r)
    assert max(counts.values()) - min(counts.values()) <= 1
    assert replica_moves(parts, final) == 24
