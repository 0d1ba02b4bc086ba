"""Where racks forbid balancing the brokers, on clusters too large for the partition program
: the plan reaches the rack-level end state (:func:`kadmin.balance.racks.rack_level`)
with exactly the fewest moves the integer program with rack constraints finds at the least
spread, and says so ("proven")."""

from __future__ import annotations

from collections import Counter
from unittest.mock import patch

from balance_oracle import fewest_moves, least_spread_then_fewest_moves
from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from test_balance import after, check_valid

from kadmin.balance import evenness
from kadmin.balance import rebalance as planner
from kadmin.balance.metrics import replica_moves
from kadmin.balance.racks import rack_level
from kadmin.balance.realise import reach
from kadmin.balance.rebalance import Rebalance, rebalance
from kadmin.balance.replicas import Moved
from kadmin.balance.table import PartitionTable
from kadmin.model import Replicas


def searched(parts: list[Replicas], targets: list[int], rack_of: dict[int, str],
             even_topics: bool = True) -> Rebalance:
    """The plan as on a large cluster: the partition program stands aside (as
    tests/unit/test_balance_racks_search.py forces it), so the search and the rack-level
    program decide."""
    table = PartitionTable.of([("t", dict(enumerate(parts)))])
    with patch.object(evenness, "DEFAULT_LIMIT", 0):
        return rebalance(table, targets, rack_of, leaders=False, even_topics=even_topics)


def check_reaches_the_oracle(parts: list[Replicas], targets: list[int],
                             rack_of: dict[int, str], result: Rebalance) -> None:
    """Valid, at the least spread (each rack's brokers within one), at the oracle's fewest
    moves, and proven."""
    spread, fewest = least_spread_then_fewest_moves(parts, targets, rack_of)
    new = after(parts, result.final)
    check_valid(parts, new, targets, rack_of)
    end = Counter(b for r in new for b in r)
    assert max(end[b] for b in targets) - min(end[b] for b in targets) == spread
    for rack in {rack_of[b] for b in targets}:
        mine = [end[b] for b in targets if rack_of[b] == rack]
        assert max(mine) - min(mine) <= 1
    assert result.unplaced == 0 and result.replica_moves == fewest
    if result.racks is None:  # racks of equal size: each balanced inside is the whole
        assert spread <= 1 and result.lower_bound <= fewest  # the spec's closed form
        return
    assert result.lower_bound == fewest
    assert result.racks.proven
    assert result.racks.across == (spread <= 1)


def test_a_partition_on_a_rack_with_no_target_left_may_end_on_every_target_rack() -> None:
    """Brokers 3 (rack r2) and 4 (rack r0, its only broker) drained onto 0 (r1), 1 and 2 (r2).
    Partitions such as (3, 4, 0) span three racks, and only two have a target left: the rule
    (and the rack-level program, and the integer program) asks them to keep two, so
    (3, 4, 0) ends on {0, 1, 2}. The search used to ask them to keep three, found no place for
    broker 4's replica in (3, 4, 0), (4, 0, 1) and (0, 2, 4), and fell back to balancing each
    rack on its own: 17 moves, 3 replicas left on drained broker 4, "not proven". Now the
    rack-level end state (spread 1, 20 moves, the rack-free bound) is reached, proven."""
    parts: list[Replicas] = [
        (2, 3, 4), (3, 4, 0), (4, 0, 1), (0, 1, 2), (2, 4), (3, 0), (4, 1), (0, 2), (1, 3),
        (2, 4), (1, 3, 0), (2, 4, 1), (3, 0, 2), (4, 1, 3), (0, 2, 4), (0, 1), (1, 2), (2, 3),
        (3, 4), (4, 0)]
    targets = [0, 1, 2]
    rack_of = {0: "r1", 1: "r2", 2: "r2", 3: "r2", 4: "r0"}
    level = rack_level(parts, targets, rack_of)
    assert level is not None and (level.spread, level.moves) == (1, 20)
    assert least_spread_then_fewest_moves(parts, targets, rack_of) == (1, 20)
    for even_topics in (True, False):
        result = searched(parts, targets, rack_of, even_topics)
        check_reaches_the_oracle(parts, targets, rack_of, result)
        assert result.racks is not None and result.racks.across
        new = after(parts, result.final)
        assert set(new[1]) == {0, 1, 2}  # (3, 4, 0) kept two racks of the three


@st.composite
def blocked_racks(draw: st.DrawFn) -> tuple[list[Replicas], list[int], dict[int, str]]:
    """Racks a and b of any size and a new rack c of one or two empty brokers; most
    partitions span a and b (a replica may leave for c, not go between a and b), a few span
    one rack or all three; loads skewed or not; maybe drained brokers: one of rack a, or the
    only broker of a rack d that keeps no target (partitions on it may end on one rack
    fewer)."""
    a, b, c = draw(st.integers(2, 4)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    rack_of = {x: "a" if x < a else "b" if x < a + b else "c" for x in range(a + b + c)}
    targets = list(rack_of)
    ina, inb, ind = list(range(a)), list(range(a, a + b)), [a + b]
    drained = draw(st.sampled_from(["", "a", "d"]))
    gone = a + b + c
    if drained == "a":
        rack_of[gone] = "a"
        ina.append(gone)
    elif drained == "d":
        rack_of[gone] = "d"
        ind = [gone]
    skew = draw(st.booleans())

    def pick(pool: list[int]) -> st.SearchStrategy[int]:
        return st.sampled_from([x for i, x in enumerate(pool) for _ in range(
            (i + 1) if skew else 1)])

    shapes = st.sampled_from(["ab"] * 6 + ["a", "b", "abc", "abd", "ad"] if drained == "d"
                             else ["ab"] * 6 + ["a", "b", "abc"])
    parts: list[Replicas] = []
    for shape in draw(st.lists(shapes, min_size=4, max_size=16)):
        members = [draw(pick(ina))] if "a" in shape else []
        members += [draw(pick(inb))] if "b" in shape else []
        members += [a + b] if "c" in shape else []
        members += ind if "d" in shape else []
        parts.append(tuple(members))
    return parts, targets, rack_of


@settings(max_examples=200)
@given(blocked_racks(), st.booleans())
@example(([(1, 4), (0, 4, 6), (0, 4, 6), (0, 4, 6), (0, 4, 6)], list(range(8)),
          {0: "a", 1: "a", 2: "a", 3: "a", 4: "b", 5: "b", 6: "c", 7: "c"}), False)
def test_the_search_reaches_the_rack_level_end_state_with_the_oracles_fewest_moves(
        c: tuple[list[Replicas], list[int], dict[int, str]], even_topics: bool) -> None:
    """Against the integer program with rack constraints (least spread, each rack's brokers
    within one, then fewest moves), with the partition program off: every plan reaches the
    least spread with exactly the oracle's fewest moves, and says proven."""
    parts, targets, rack_of = c
    event("a rack with no target" if any(rack_of[b] == "d" for r in parts for b in r)
          else "every rack has a target")
    check_reaches_the_oracle(parts, targets, rack_of, searched(parts, targets, rack_of,
                                                               even_topics))


@settings(max_examples=150)
@given(blocked_racks())
@example(([(1, 4), (0, 4, 6), (0, 4, 6), (0, 4, 6), (0, 4, 6)], list(range(8)),
          {0: "a", 1: "a", 2: "a", 3: "a", 4: "b", 5: "b", 6: "c", 7: "c"}))
def test_the_min_cost_flow_reaches_given_ends_with_the_fewest_moves(
        c: tuple[list[Replicas], list[int], dict[int, str]]) -> None:
    """:func:`reach` against the integer program with every broker's end count fixed (no
    partition losing a rack): the same fewest moves, a valid plan ending there; with the
    ends free at the least spread, the oracle's fewest there. The example: rack_level's own
    ends (its bound, 6, is met only in the racks' totals) take 7 moves, other ends 6."""
    parts, targets, rack_of = c
    level = rack_level(parts, targets, rack_of)
    assert level is not None
    fixed = [({(p, b): 1.0 for p in range(len(parts))}, float(n), float(n))
             for b, n in level.ends.items()]
    fewest = fewest_moves(parts, targets, rack_of, balanced=False, extra=fixed)
    plan = reach(parts, targets, level.ends, rack_of)
    assert (plan is None) == (fewest is None)
    if plan is None:
        return
    new = after(parts, plan)
    check_valid(parts, new, targets, rack_of)
    end = Counter(b for r in new for b in r)
    assert {b: end[b] for b in targets} == level.ends
    assert all(r[0] == old[0] for old, r in zip(parts, new, strict=True) if old[0] in r)
    assert replica_moves(parts, plan) == fewest
    spread, least = least_spread_then_fewest_moves(parts, targets, rack_of)
    free = reach(parts, targets, {}, rack_of, spread)  # any end state at the least spread
    assert free is not None and replica_moves(parts, free) == least <= fewest
    new = after(parts, free)
    check_valid(parts, new, targets, rack_of)
    end = Counter(b for r in new for b in r)
    assert max(end[b] for b in targets) - min(end[b] for b in targets) <= spread


@settings(max_examples=60)
@given(blocked_racks())
def test_where_the_search_falls_short_the_plan_is_the_min_cost_flows(
        c: tuple[list[Replicas], list[int], dict[int, str]]) -> None:
    """The search made to fail (every unit unplaced, as it was where it knew too strict a
    rule): the plan still reaches the rack-level end state with the oracle's fewest moves,
    proven, by :func:`reach`."""
    parts, targets, rack_of = c
    with patch.object(planner, "move_across", lambda *a, **k: None), \
            patch.object(planner, "plan_replicas", lambda *a, **k: Moved({}, 1, None)):
        result = searched(parts, targets, rack_of)
    if result.racks is None:
        return  # racks of equal size: each balanced inside, no realisation (the search's)
    check_reaches_the_oracle(parts, targets, rack_of, result)
