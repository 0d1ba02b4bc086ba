"""The order in which a giver hands over its partitions: its topics by rank, each rank the one
the topic has when its turn comes (``replicas._ReplicaProblem._candidates``)."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from kadmin.balance.rebalance import replica_quota
from kadmin.balance.replicas import _ReplicaProblem
from kadmin.balance.table import PartitionTable


def rank_now(problem: _ReplicaProblem, x: int, t: int) -> int:
    """The rank the module docstring names, counted from the problem's state: the topic's
    replicas on ``x`` above its fair share, less what each taker received of it, then the
    replicas held."""
    held = sum(1 for p, topic in enumerate(problem.topic_of)
               if topic == t and x in problem.members(p))
    received = problem.received.get(t, 0) // problem.taker_count
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
