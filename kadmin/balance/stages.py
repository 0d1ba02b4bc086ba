"""The stages every rebalance runs, in this order, whichever planner runs them:

1. ``replicas``: the fewest replica moves that balance the target brokers (by capacity shares
   where given), keeping each partition's racks; with racks of unequal size the rack rules
   decide the end state (:mod:`kadmin.balance.across`);
2. ``topics``: the topics as even as those moves allow, or the fewest moves that keep every
   topic within ``--topic-spread`` (:mod:`kadmin.balance.evenness`); only when every replica
   found a place;
3. ``cut``: with ``--max-moves``, the moves the budget keeps (:mod:`kadmin.balance.cut`);
4. ``leaders``: preferred leaders balanced by reordering only, so leadership never costs a
   copy.

The one-machine planner (:mod:`kadmin.balance.machine`) runs them over the whole table, the
Spark driver (:mod:`kadmin.balance.chunks`) over chunks of topics; :func:`run` is the one
sequence both follow, and :class:`~kadmin.balance.objective.Objective` says which stages
apply. A new goal is a field of the objective and a stage (or a step of one) here.
"""

from __future__ import annotations

from typing import Protocol

from kadmin.balance.objective import Objective

STAGES = ("replicas", "topics", "cut", "leaders")


class Stages(Protocol):
    """One planner's way of running each stage over the plan it holds."""

    def replicas(self) -> None:
        """Plan the replica moves."""
        ...

    def unplaced(self) -> int:
        """Replica units the plan could not place (0: every replica found its place)."""
        ...

    def topics(self) -> None:
        """Even the topics out over the replica plan."""
        ...

    def moves(self) -> int:
        """Replica moves planned so far."""
        ...

    def cut(self, budget: int) -> None:
        """Keep at most ``budget`` replica moves."""
        ...

    def leaders(self) -> None:
        """Balance preferred leaders over the planned replica lists."""
        ...


def run(plan: Stages, objective: Objective) -> None:
    """Run the stages ``objective`` asks for over ``plan``, in order (see the module
    docstring)."""
    plan.replicas()
    if objective.evens_topics and not plan.unplaced():
        plan.topics()
    budget = objective.limits.max_moves
    if budget is not None and plan.moves() > budget:
        plan.cut(budget)
    if objective.leaders:
        plan.leaders()
