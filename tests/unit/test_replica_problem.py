"""The replica step's own figures: the order in which a giver hands over its partitions (its
topics by rank, each rank the one the topic has when its turn comes:
``replicas._ReplicaProblem._candidates``), and the worst topic it counts for the summary."""

from __future__ import annotations

import random
from unittest.mock import patch

from hypothesis import assume, given
from hypothesis import strategies as st

from kadmin.balance.evenness import worst_topic
from kadmin.balance.replicas import _ReplicaProblem, plan_replicas
from kadmin.balance.shares import replica_quota
from kadmin.balance.table import PartitionTable


def rank_now(problem: _ReplicaProblem, x: int, t: int) -> int:
    """The rank the module docstring names, counted from the problem's state: the topic's
    replicas on ``x`` above its fair share, less what each taker received of it, then the
    replicas held."""
    held = sum(1 for p, topic in enumerate(problem.topic_of)
               if topic == t and x in problem.members(p))
    received = problem.received[t] // problem.taker_count
    excess = len(problem.targets) * (held - received) - problem.topic_share[t]
    return excess * problem.rank_scale + 2 * held


@given(seed=st.integers(0, 100_000), new=st.integers(1, 4), outside=st.integers(0, 3))
def test_each_partition_a_giver_hands_over_is_of_a_topic_ranked_first(seed: int, new: int,
                                                                     outside: int) -> None:
    """Givers take turns (so takers receive other givers' replicas of a topic between two of
    this giver's, which lowers its rank where no sort foresaw it), and some replicas leave a
    giver outside its queue: each partition a queue yields is of a topic whose rank then is
    the highest among the topics the giver still holds."""
    rng = random.Random(seed)
    old = list(range(5))
    targets = old + list(range(5, 5 + new))
    topics = {f"t{k}": {i: tuple(rng.sample(old[:2] if rng.random() < 0.5 else old, 2))
                        for i in range(rng.randint(1, 6))} for k in range(6)}
    table = PartitionTable.from_topics(topics, sorted(topics))
    problem = _ReplicaProblem(table, targets, replica_quota(table.replicas, targets, None), None)
    givers = sorted(problem.ledger.give)
    queues = {x: problem._order(x) for x in givers}
    checked = 0
    while queues:
        for x in list(queues):
            p = next(queues[x], None)
            if p is None:
                del queues[x]
                continue
            members = problem.members(p)
            if x not in members:
                continue
            held = {problem.topic_of[q] for q in range(len(table))
                    if x in problem.members(q)}
            assert rank_now(problem, x, problem.topic_of[p]) == max(
                rank_now(problem, x, t) for t in held)
            checked += 1
            y = next((b for b in targets if b not in members and b not in givers), None)
            if y is None:  # no broker to take it: x's turn is over
                del queues[x]
                continue
            problem.move(p, x, y, True)
            if outside and rng.random() < 0.3:  # another replica leaves x outside its queue
                q = next((q for q in range(len(table)) if x in problem.members(q)), None)
                z = None if q is None else next(
                    (b for b in targets if b not in problem.members(q) and b not in givers),
                    None)
                if z is not None:
                    problem.move(q, x, z)
    assert checked or not givers


@given(seed=st.integers(0, 100_000), new=st.integers(0, 3), drained=st.integers(0, 2),
       racks=st.booleans(), enough=st.integers(1, 4))
def test_the_worst_topic_the_replica_step_counts_is_the_plan_s(seed: int, new: int,
                                                              drained: int, racks: bool,
                                                              enough: int) -> None:
    """Brokers added, drained, racks or not, the topic search stopped early or not: where the
    plan meets its quota, the worst topic spread it reports (and the first topic at it) is the
    one counted afresh from the plan over the targets."""
    rng = random.Random(seed)
    old = list(range(6))
    targets = old[drained:] + list(range(6, 6 + new))
    topics = {f"t{k}": {i: tuple(rng.sample(old, rng.randint(1, 3)))
                        for i in range(rng.randint(0, 8))} for k in range(5)}
    table = PartitionTable.from_topics(topics, sorted(topics))
    rack_of = {b: "ab"[b % 2] for b in range(12)} if racks else None
    moved = plan_replicas(table, targets, replica_quota(table.replicas, targets, None),
                          rack_of, enough=enough)
    if moved.pending:
        assert moved.worst is None
    else:
        assert moved.worst == worst_topic(table, moved.final, targets)


@given(seed=st.integers(0, 100_000), new=st.integers(1, 4))
def test_without_numpy_each_giver_sorts_its_partitions_as_numpy_does(seed: int, new: int
                                                                     ) -> None:
    """Spark's executors may lack numpy: the pure-Python sort of a giver's partitions by rank
    yields exactly numpy's order (partition, topic, rank) for every giver of a solve, and the
    plan is the same."""
    rng = random.Random(seed)
    old = rng.randint(3, 8)
    topics = {f"t{t}": {i: tuple(rng.sample(range(old), rng.randint(1, min(3, old))))
                        for i in range(rng.randint(1, 15))} for t in range(rng.randint(1, 6))}
    table = PartitionTable.from_topics(topics, sorted(topics))
    targets = list(range(old + new))
    compared: list[int] = []
    numpy_order = _ReplicaProblem._sorted_by_rank

    def checked(self: _ReplicaProblem, x: int, *args: object) -> object:
        ours = list(numpy_order(self, x, *args))  # type: ignore[arg-type]
        assert list(self._sorted_by_rank_in_python(x, *args)) == ours  # type: ignore[arg-type]
        compared.append(x)
        return iter(ours)

    quota = replica_quota(table.replicas, targets, None)
    plain = plan_replicas(table, targets, quota, even_topics=True)
    with patch.object(_ReplicaProblem, "_sorted_by_rank", checked):
        again = plan_replicas(table, targets, quota, even_topics=True)
    assert again.final == plain.final
    assume(compared)  # some giver's queue was sorted (not every cluster needs one)
