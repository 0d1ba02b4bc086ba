"""The class-aggregated rack program (:mod:`kadmin.balance.classes`) held to the integer program
of the partitions (tests/unit/balance_oracle.py): its fewest moves are the oracle's, its plan
makes them, keeps every partition's racks and balances the brokers, and the worst topic spread
it calls proven is the least the oracle finds at those moves (never below its bound)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from balance_oracle import fewest_moves, least_topic_spread
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_balance import after, check_valid

from kadmin.balance import classes, classflow, machine
from kadmin.balance.bound import lower_bound
from kadmin.balance.evenness import even_topics
from kadmin.balance.metrics import replica_moves
from kadmin.balance.objective import Limits
from kadmin.balance.rebalance import rebalance
from kadmin.balance.table import PartitionTable
from kadmin.model import Replicas

Cluster = tuple[list[tuple[int, Replicas]], list[int], dict[int, str]]


def ranges(parts: list[Replicas], targets: list[int]) -> dict[int, tuple[int, int]]:
    total = sum(map(len, parts))
    return {b: (total // len(targets), -(-total // len(targets))) for b in targets}


def table_of(parts: list[tuple[int, Replicas]]) -> PartitionTable:
    """Topic ``t`` of each entry, partitions in the order given (topics named in order)."""
    by_topic: dict[int, dict[int, Replicas]] = {}
    for t, replicas in parts:
        by_topic.setdefault(t, {})[len(by_topic.get(t, {}))] = replicas
    return PartitionTable.of((f"t{t}", p) for t, p in by_topic.items())


@st.composite
def racked(draw: st.DrawFn) -> Cluster:
    """Racks of equal or unequal size (a new rack among them sometimes, holding nothing),
    replication factors up to the racks and below, brokers drained (some without a rack, some
    in a rack with no target left), up to three topics."""
    sizes = draw(st.lists(st.integers(1, 3), min_size=2, max_size=3))
    rack_of: dict[int, str] = {}
    for r, size in enumerate(sizes):
        for _ in range(size):
            rack_of[len(rack_of)] = f"r{r}"
    targets = list(rack_of)
    drained = draw(st.integers(0, 2))
    for d in range(drained):  # drained brokers, the second without a rack
        if d == 0:  # in a rack of targets, or in a rack leaving the cluster
            rack_of[len(targets) + d] = f"r{draw(st.integers(0, len(sizes)))}"
    everyone = list(range(len(targets) + drained))
    new_rack = draw(st.booleans()) and sizes[-1] == 1
    holders = [b for b in everyone if not (new_rack and rack_of.get(b) == f"r{len(sizes) - 1}")]
    rf = draw(st.integers(1, min(3, len(holders))))
    parts = draw(st.lists(st.tuples(st.integers(0, 2),
                                    st.permutations(holders).map(lambda p: tuple(p[:rf]))),
                          min_size=1, max_size=7))
    return parts, targets, rack_of


def table_and_order(parts: list[tuple[int, Replicas]]) -> tuple[PartitionTable, list[Replicas],
                                                                  list[int]]:
    table = table_of(parts)
    return table, list(table.replicas), list(table.topic_of)


@settings(max_examples=60, deadline=None)
@given(racked())
@example(([(0, (0, 2)), (0, (0, 2)), (0, (0,)), (0, (0, 2, 5))], [0, 1, 2, 3, 4],
          {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "d"}))  # rack d leaves with broker 5
def test_the_fewest_moves_are_the_integer_programs(c: Cluster) -> None:
    parts, targets, rack_of = c
    table, replicas, _ = table_and_order(parts)
    assert classes.fewest_moves(table, targets, ranges(replicas, targets), rack_of) == (
        fewest_moves(replicas, targets, rack_of))


@settings(max_examples=40, deadline=None)
@given(racked())
def test_the_plan_makes_them_and_its_proven_topic_spread_is_the_least(c: Cluster) -> None:
    parts, targets, rack_of = c
    table, replicas, topics = table_and_order(parts)
    fewest = fewest_moves(replicas, targets, rack_of)
    found = classes.plan(table, targets, ranges(replicas, targets), rack_of)
    if fewest is None:
        assert found is None
        return
    assert found is not None
    new = after(replicas, found.final)
    check_valid(replicas, new, targets, rack_of)
    end = Counter(b for r in new for b in r)
    assert max(end[b] for b in targets) - min(end[b] for b in targets) <= 1
    assert found.moves == replica_moves(replicas, found.final) == fewest
    assert lower_bound(replicas, new, targets, rack_of) == fewest  # what plan stats prints
    least = least_topic_spread(replicas, targets, topics, fewest, rack_of)
    assert found.least <= least <= found.spread
    if found.least == found.spread:
        assert found.spread == least
    # out of time before any flow is solved, nothing beyond the means' bound is proven
    hurried = classes.plan(table, targets, ranges(replicas, targets), rack_of, seconds=0.0)
    assert hurried is not None and hurried.moves == fewest and hurried.least <= least


def test_a_target_without_a_rack_is_left_to_the_search() -> None:
    table = table_of([(0, (0, 1)), (0, (1, 2))])
    assert classes.plan(table, [0, 1, 2], {0: (1, 2), 1: (1, 2), 2: (1, 2)},
                        {0: "a", 1: "b"}) is None


def issue_shape(partitions: int, topics: int = 20) -> PartitionTable:
    """21 brokers in 3 racks (broker b in rack b % 3), broker 20 new, every topic RF 3 on
    three consecutive brokers of 0..19: a tenth of the partitions span two racks only."""
    return PartitionTable.of(
        (f"t{t:02d}", {p: tuple((t + p + k) % 20 for k in range(3)) for p in range(
            partitions // topics)}) for t in range(topics))


def test_the_issue_cluster_is_planned_exactly() -> None:
    """Every partition spanning three racks may move only inside its racks: the fewest moves
    exceed the rack-free bound, and the topics end as even as any plan of those moves."""
    table = issue_shape(1_200)
    targets = list(range(21))
    rack_of = {b: f"r{b % 3}" for b in targets}
    found = classes.plan(table, targets, ranges(table.replicas, targets), rack_of)
    assert found is not None
    assert found.moves == replica_moves(table.replicas, found.final)
    rack_free = 3 * 1_200 // 21  # broker 20 takes its floor, every other one gives
    assert found.moves > rack_free
    assert found.spread == found.least
    new = after(table.replicas, found.final)
    check_valid(table.replicas, new, targets, rack_of)


def least_within(replicas: list[Replicas], targets: list[int], topics: list[int],
                 rack_of: dict[int, str], asked: int) -> tuple[int, int] | None:
    """The oracle's answer to ``--topic-spread asked``: the least spread from ``asked`` up that
    a plan keeping the racks reaches, and its fewest moves (None: no plan keeps the racks)."""
    if fewest_moves(replicas, targets, rack_of) is None:
        return None
    k = asked
    while (found := fewest_moves(replicas, targets, rack_of, topics=topics,
                                 topic_spread=k)) is None:
        k += 1
    return k, found


@settings(max_examples=50, deadline=None)
@given(racked(), st.integers(0, 3))
@example(([(0, (0, 2)), (0, (0, 2)), (0, (0,)), (0, (0, 2, 5))], [0, 1, 2, 3, 4],
          {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "d"}), 0)
def test_topic_spread_makes_the_integer_programs_fewest_moves(c: Cluster, asked: int) -> None:
    """``--topic-spread`` over the classes: the least spread reachable from the one asked, the
    fewest moves within it (proven: the printed bound is them), every partition's racks kept
    and every broker within its range."""
    parts, targets, rack_of = c
    table, replicas, topics = table_and_order(parts)
    expected = least_within(replicas, targets, topics, rack_of, asked)
    found = classes.within_spread(table, targets, ranges(replicas, targets), rack_of, asked)
    if expected is None:
        assert found is None
        return
    assert found is not None
    assert (found.allowed, found.moves) == expected
    assert found.fewest == found.moves == replica_moves(replicas, found.final)
    assert found.plain == fewest_moves(replicas, targets, rack_of)
    new = after(replicas, found.final)
    check_valid(replicas, new, targets, rack_of)
    end = Counter(b for r in new for b in r)
    assert max(end[b] for b in targets) - min(end[b] for b in targets) <= 1
    assert found.spread <= found.allowed
    for t in set(topics):
        held = Counter(b for r, tt in zip(new, topics, strict=True) if tt == t for b in r)
        assert max(held[b] for b in targets) - min(held[b] for b in targets) <= found.allowed


def test_topic_spread_on_the_issue_cluster_is_exact_where_the_windows_are_not_forced() -> None:
    """Spreads 1 and 2 on the issue's cluster, where the plan of the fewest moves ends at 3:
    each within its spread, proven the fewest, and the narrower never the cheaper."""
    table = issue_shape(600)
    targets = list(range(21))
    rack_of = {b: f"r{b % 3}" for b in targets}
    plain = classes.plan(table, targets, ranges(table.replicas, targets), rack_of)
    assert plain is not None and plain.spread == plain.least == 3
    moves = []
    for asked in (1, 2):
        found = classes.within_spread(table, targets, ranges(table.replicas, targets), rack_of,
                                      asked)
        assert found is not None
        assert found.allowed == asked and found.spread <= asked
        assert found.moves == found.fewest == replica_moves(table.replicas, found.final)
        assert found.plain == plain.moves < found.moves
        check_valid(table.replicas, after(table.replicas, found.final), targets, rack_of)
        moves.append(found.moves)
    assert moves[0] >= moves[1]


@settings(max_examples=40, deadline=None)
@given(racked(), st.sampled_from([None, 0, 1, 2]))
def test_plan_rebalance_with_racks_says_proven_only_when_it_is(c: Cluster,
                                                               asked: int | None) -> None:
    """The whole planner (machine.Whole: the class program, the search, and the class program
    challenging an unproven search) against the integer program: its lower bound never above
    the fewest moves, and what it calls proven is the optimum: by default the least worst
    topic spread at the fewest moves, with ``--topic-spread`` the fewest moves within the
    least spread reachable from the one asked."""
    parts, targets, rack_of = c
    table, replicas, topics = table_and_order(parts)
    fewest = fewest_moves(replicas, targets, rack_of)
    result = rebalance(table, targets, rack_of, leaders=False, topic_spread=asked)
    goal = result.topics
    if fewest is None or goal is None or result.unplaced:
        return
    new = after(replicas, result.final)
    check_valid(replicas, new, targets, rack_of)
    if asked is not None:
        allowed, within = least_within(replicas, targets, topics, rack_of, asked) or (0, 0)
        assert result.lower_bound <= within <= result.replica_moves
        if goal.exact:
            assert result.replica_moves == within and goal.spread <= allowed
        return
    assert result.lower_bound <= fewest <= result.replica_moves
    if result.replica_moves != fewest:
        return
    least = least_topic_spread(replicas, targets, topics, fewest, rack_of)
    assert goal.least is None or goal.least <= least <= goal.spread
    if goal.exact:
        assert goal.spread == least


@settings(max_examples=40, deadline=None)
@given(racked())
def test_an_unproven_search_is_challenged_and_never_made_worse(c: Cluster) -> None:
    """The search's plan as if it had run out of time (not proven, no bound), and the class
    program allowed on every cluster: the plan that stands makes no more moves and no wider
    topics than the search's, its bound holds against the integer program, and it says
    proven only where its spread is the least at the fewest moves."""
    parts, targets, rack_of = c
    table, replicas, topics = table_and_order(parts)
    fewest = fewest_moves(replicas, targets, rack_of)
    searched: list[tuple[int, int]] = []

    def unproven(*args: object, **kwargs: object) -> object:
        found = even_topics(*args, **kwargs)  # type: ignore[arg-type]
        if found is None:
            return None
        final, goal = found
        searched.append((replica_moves(table.replicas, final), goal.spread))
        return final, replace(goal, exact=False, least=0)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(machine.evenness, "even_topics", unproven)
        patch.setattr(machine.classes, "aggregates", lambda _: True)
        result = rebalance(table, targets, rack_of, leaders=False)
    goal = result.topics
    if fewest is None or goal is None or not searched or result.unplaced:
        return
    moves, spread = searched[0]
    check_valid(replicas, after(replicas, result.final), targets, rack_of)
    assert result.replica_moves <= moves
    assert (result.replica_moves, goal.spread) <= (moves, spread)
    assert result.lower_bound <= fewest <= result.replica_moves
    if result.replica_moves == fewest:
        least = least_topic_spread(replicas, targets, topics, fewest, rack_of)
        assert goal.least is not None and goal.least <= least <= goal.spread
        if goal.exact:
            assert goal.spread == least


@settings(max_examples=30, deadline=None)
@given(racked())
def test_branch_and_bound_on_the_windows_closes_what_rounding_leaves(c: Cluster) -> None:
    """From the plan of the fewest moves alone and no bound but 0 (as where the relaxation's
    windows all fail): branch and bound over the windows finds the least worst topic spread
    at the fewest moves, the integer program's, and proves it."""
    parts, targets, rack_of = c
    table, replicas, topics = table_and_order(parts)
    bounds = ranges(replicas, targets)
    plain = classes.plan(table, targets, bounds, rack_of, seconds=0.0)
    if plain is None:
        return
    fewest = plain.moves
    start = classes.RackPlan(plain.final, fewest, plain.spread, 0)
    grouped = classflow.grouped(table, by_topic=True)
    found = classes._branched(table, grouped, sorted({t for t, _ in grouped}), sorted(targets),
                              bounds, rack_of, start, 30.0)
    assert found.moves == fewest == replica_moves(replicas, found.final)
    check_valid(replicas, after(replicas, found.final), targets, rack_of)
    least = least_topic_spread(replicas, targets, topics, fewest, rack_of)
    assert found.spread == found.least == least


def test_max_moves_on_the_class_plan_keeps_every_partitions_racks() -> None:
    """``--max-moves`` keeps part of the class program's plan one copy at a time; a replica
    the plan moves within its rack is cut with the copy it adds there, so the partial plan
    loses no partition a rack (it paired copies by position before)."""
    table = issue_shape(1_200)
    targets = list(range(21))
    rack_of = {b: f"r{b % 3}" for b in targets}
    result = rebalance(table, targets, rack_of, limits=Limits(100))
    assert result.partial
    new = after(table.replicas, result.final)
    assert replica_moves(table.replicas, dict(enumerate(new))) == 100
    check_valid(table.replicas, new, targets, rack_of)
