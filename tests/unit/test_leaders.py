"""Preferred leaders by reordering (kadmin.balance.leaders): the fewest leader changes that
balance leadership, held to the integer program (balance_oracle.fewest_leader_changes), with
leaders of today that lost their replica (their partitions change leader whatever is chosen),
which is what gives handovers of cost 0 and the relayed paths."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
from balance_oracle import fewest_leader_changes
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kadmin.balance import leaders as leaders_module
from kadmin.balance.leaders import order_leaders
from kadmin.balance.shares import leader_quota
from kadmin.model import Replicas


def changes(replicas: Sequence[Replicas], before: Sequence[int],
            reordered: dict[int, Replicas]) -> int:
    return sum(reordered.get(p, members)[0] != before[p] for p, members in enumerate(replicas))


def spread(replicas: Sequence[Replicas], reordered: dict[int, Replicas],
           targets: Sequence[int]) -> int:
    count = Counter(reordered.get(p, members)[0] for p, members in enumerate(replicas))
    return max(count[b] for b in targets) - min(count[b] for b in targets)


def test_a_giver_sharing_no_partition_with_the_taker_hands_on_through_a_relay(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Broker 0 leads three partitions it shares only with 1 (one too many); broker 2 leads
    nothing. Broker 1 leads a partition whose leader of today (3) lost its replica: 0 hands one
    of its own to 1 (cost 1) and 1 hands that one on to 2 (cost 0), one change beyond the
    forced one."""
    replicas = [(0, 1), (0, 1), (0, 1), (1, 2)]
    before = [0, 0, 0, 3]
    relayed: list[int] = []
    original = leaders_module._LeaderProblem._relayed

    def spy(self: leaders_module._LeaderProblem, *args: object) -> int:
        relayed.append(original(self, *args))  # type: ignore[arg-type]
        return relayed[-1]

    monkeypatch.setattr(leaders_module._LeaderProblem, "_relayed", spy)
    reordered, unmet = order_leaders(replicas, before, [0, 1, 2],
                                     leader_quota(replicas, [0, 1, 2]))
    assert unmet == 0
    assert reordered == {0: (1, 0), 3: (2, 1)}
    assert relayed[0] == 1
    assert changes(replicas, before, reordered) == 2 == fewest_leader_changes(
        replicas, before, [0, 1, 2])


@st.composite
def leaderships(draw: st.DrawFn) -> tuple[list[Replicas], list[int], list[int]]:
    """Replica lists over a few brokers, a skewed leader of today for each: mostly a member
    (the first), sometimes a broker that no longer holds a replica."""
    brokers = draw(st.integers(3, 7))
    count = draw(st.integers(brokers, 5 * brokers))
    heavy = draw(st.integers(0, brokers - 1))
    replicas: list[Replicas] = []
    before: list[int] = []
    for _ in range(count):
        factor = draw(st.integers(1, min(3, brokers)))
        first = heavy if draw(st.booleans()) else draw(st.integers(0, brokers - 1))
        others = [b for b in range(brokers) if b != first]
        rest = draw(st.lists(st.sampled_from(others), min_size=factor - 1,
                             max_size=factor - 1, unique=True))
        members = (first, *rest)
        replicas.append(members)
        gone = draw(st.integers(0, 4)) == 0
        before.append(brokers + 1 if gone else members[0])
    return replicas, before, list(range(brokers))


@settings(max_examples=300)
@given(leaderships())
def test_leaders_meet_the_quota_with_the_fewest_changes(
        case: tuple[list[Replicas], list[int], list[int]]) -> None:
    replicas, before, targets = case
    optimum = fewest_leader_changes(replicas, before, targets)
    assume(optimum is not None)
    reordered, unmet = order_leaders(replicas, before, targets, leader_quota(replicas, targets))
    assert unmet == 0
    assert spread(replicas, reordered, targets) <= 1
    assert changes(replicas, before, reordered) == optimum
    for p, members in reordered.items():
        assert sorted(members) == sorted(replicas[p])


@settings(max_examples=200)
@given(leaderships())
def test_the_index_kept_by_every_handover_is_the_one_built_afresh(
        case: tuple[list[Replicas], list[int], list[int]]) -> None:
    """The one index of hops of cost 1 (partitions a broker leads as their leader of today, by
    each other replica) is built once and then kept by :meth:`hand`: after a whole solve,
    every broker's index holds exactly the partitions a fresh build finds, so the ends of the
    hops the search reads and the witnesses a path takes are never stale."""
    replicas, before, targets = case
    problem = leaders_module._LeaderProblem(replicas, before, targets,
                                            leader_quota(replicas, targets))
    for x in targets:  # built before any handover: every later change goes through hand
        problem._index(x)
    leaders_module.solve(problem, cost=0)
    kept = problem.index
    problem.index = {}
    for x in targets:
        fresh = problem._index(x)
        assert {z: set(ps) for z, ps in kept[x].items() if ps} == {
            z: set(ps) for z, ps in fresh.items()}
        for z, ps in fresh.items():
            for p in ps:
                assert problem.lead(p) == x == before[p] and z in replicas[p]
