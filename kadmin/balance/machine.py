"""The stages of :mod:`kadmin.balance.stages` over the whole table, on one machine: what
``kadmin plan rebalance`` runs. The order matters: leaders are balanced over the replica lists
the moves produce, by reordering only, so leadership never costs a copy."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from itertools import count
from operator import itemgetter

from kadmin.balance import classes, evenness, stages
from kadmin.balance.across import RackBalance, across_racks, ends_after, searched_across
from kadmin.balance.bound import lower_bound
from kadmin.balance.budget import Change
from kadmin.balance.cut import cut_moves, within
from kadmin.balance.evenness import TopicGoal
from kadmin.balance.held import hold
from kadmin.balance.leaders import order_leaders
from kadmin.balance.metrics import leader_changes, replica_moves
from kadmin.balance.objective import Limits, Objective
from kadmin.balance.racks import held_in_racks, toward
from kadmin.balance.replicas import leader_kept, plan_replicas, replica_counts
from kadmin.balance.result import Rebalance
from kadmin.balance.shares import Split, leader_quota
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Quota, fewest_to_ranges
from kadmin.model import InvalidInput, Replicas


def plan_whole(table: PartitionTable, brokers: Collection[int], objective: Objective,
               counts: Mapping[int, int] | None = None, kept: Collection[int] = ()
               ) -> Rebalance:
    """The plan ``objective`` asks for over ``table`` (see :func:`kadmin.balance.rebalance.
    rebalance` for the goals): the stages of :func:`kadmin.balance.stages.run` over
    :class:`Whole`."""
    whole = Whole(table, brokers, objective, counts, kept)
    stages.run(whole, whole.objective)
    return whole.result()


class Whole:
    """One plan over the whole table as the stages change it. ``kept``: the targets that are
    not registered (:func:`kadmin.balance.held.hold`); the partitions holding one are left
    out, and then so are the exact programs (topics, racks), which know no fixed load: the
    flow balances what is left."""

    def __init__(self, table: PartitionTable, brokers: Collection[int], objective: Objective,
                 counts: Mapping[int, int] | None, kept: Collection[int]) -> None:
        self.held = held = hold(table, brokers, kept)
        self.table, self.brokers, self.rack_of = held.free, held.targets, objective.rack_of
        self.before = before = self.table.replicas
        # the search prefers moves that keep topics even (off: the fastest), as asked even
        # where the held partitions leave the topic programs out
        self.prefer_even = objective.prefers_even
        if held.index is not None:
            counts = Counter(replica_counts(before)) + Counter(held.replicas)
            objective = replace(objective, even_topics=False, topic_spread=None)
        self.objective = objective
        self.counts = counts = replica_counts(before) if counts is None else counts
        self.split = split = Split.of(counts, self.brokers, self.rack_of, objective.weights)
        self.wanted = split.quota(racks=True)
        self.ranges = split.ranges(racks=True)
        # The certificate's bound on the worst topic spread of any plan of the fewest moves
        # (:func:`evenness.least_if_fewest`), computed before the plan so that the topic
        # search can stop at it: where the quota balances the cluster as one (the search's
        # plan then makes the fewest moves; a rack-aware plan is one of them, held to the
        # same bound).
        self.least = evenness.least_if_fewest(self.table, self.brokers, self.ranges, counts) \
            if objective.least_spread and not split.by_rack else None
        self.racks: RackBalance | None = None
        self.moved: Mapping[int, Replicas] = {}
        self.missing = 0  # replica units no valid plan places
        # the worst topic of ``moved`` where the replica step counted it (Moved.worst)
        self.counted: tuple[int, int] | None = None
        self.bound = 0
        self.goal: TopicGoal | None = None
        self.worst: tuple[int, int] | None = None
        # the replica moves of ``moved``, where counted: the final plan's too while ``moved``
        # stands (the leader stage only reorders)
        self.made: int | None = None
        self.partial = False
        # the search's plan across racks, kept because it meets the rack-free bound (the
        # quota's units, which no rack-aware plan beats): that is the bound, no program to run
        self._at_free_bound = False
        # the class program's topic goal, where it planned (:meth:`_by_classes`), and with
        # ``--topic-spread`` the fewest moves it proved (the lower bound)
        self.classed: TopicGoal | None = None
        self.classed_bound: int | None = None

    def replicas(self) -> None:
        """The replica stage: racks of unequal size first (:mod:`kadmin.balance.across`), else
        the broker-level search; then the lower bound; then, where the search stopped early
        at the topic bound and missed the fewest moves, the search again in full."""
        self._place()
        self.bound = self._bound()
        before, least = self.before, self.least
        self.made = None if least is None else replica_moves(before, self.moved)
        if least is not None and least > 1 and (self.missing or self.made != fewest_to_ranges(
                {b: self.counts.get(b, 0) for b in self.brokers}, self.ranges,
                sum(map(len, before)))):
            # the bound holds plans of the fewest moves there are, and this one makes more (a
            # chain through a full broker): the topic search it stopped must run in full
            plan = plan_replicas(self.table, self.brokers, self.wanted, self.rack_of,
                                 even_topics=self.prefer_even)
            self.moved, self.missing, self.counted = plan.final, plan.pending, plan.worst
            self.made = None

    def _place(self) -> None:
        """The replica plan: the exact program across racks of unequal size where it is small
        enough (:func:`kadmin.balance.across.across_racks`), else the search across them
        (:func:`kadmin.balance.across.searched_across`), else the broker-level search rack by
        rack (or over all brokers where racks are equal or ignored)."""
        table, brokers, rack_of, split = self.table, self.brokers, self.rack_of, self.split
        alone = self.held.index is None  # no held partition: the exact programs may run
        weights = self.objective.weights
        if alone and self._by_classes():
            return
        across = across_racks(table, brokers, split, rack_of, weights) if alone else None
        if across is not None and across[1] is not None:
            self.racks, exact = across[0], across[1]
            self.moved, self.missing = exact.final, 0
            if self.racks.across:
                self.ranges = split.ranges(racks=False)
            return
        self.racks = None if across is None else across[0]
        tried = split.by_rack and across is None and alone  # the search across racks
        # the same bound for a plan across racks of unequal size at the rack-free bound (the
        # fewest moves within the rack-free ranges), where the search tries one
        free_least = evenness.least_if_fewest(table, brokers, split.ranges(racks=False),
                                              self.counts) \
            if tried and self.objective.least_spread else None
        searched = searched_across(table, brokers, split, rack_of, weights, self.prefer_even,
                                   free_least or 1) if tried else None
        if searched is not None and searched[1] is not None:
            self.racks, (self.wanted, plan) = searched[0], searched[1]
            self.moved, self.missing, self.counted = plan.final, 0, plan.worst
            self._at_free_bound = self.racks.across
            if self.racks.across:
                self.ranges = split.ranges(racks=False)
                if self.racks.fewest is None:  # at the rack-free bound: the bound holds it
                    self.least = free_least
            return
        self.racks = self.racks if searched is None else searched[0]
        plan = plan_replicas(table, brokers, self.wanted, rack_of, enough=self.least or 1,
                             even_topics=self.prefer_even, within_racks=split.by_rack)
        self.moved, self.missing, self.counted = plan.final, plan.pending, plan.worst

    def _by_classes(self) -> bool:
        """With racks, exactly, at any size the class program takes: every broker within its
        range of the whole cluster with the fewest moves that keep every partition's racks.
        ``--topic-spread``: the fewest such moves with every topic within it
        (:func:`kadmin.balance.classes.within_spread`, the printed lower bound). The default
        objective, where the racks cost moves over the rack-free bound
        (:func:`kadmin.balance.classes.plan`): those moves (the lower bound, proven) and the
        least worst topic spread at them (proven, or the bound below it). The topic stage
        then reports it. False where the program does not apply (no plan balances every
        broker without a partition losing a rack, too many classes, capacities) or the racks
        cost no move over the rack-free bound: the search (with its topic certificate) and
        the rack-level program decide."""
        objective, rack_of, split = self.objective, self.rack_of, self.split
        if rack_of is None or objective.weights is not None:
            return False
        free = split.quota(racks=False).units
        if objective.topic_spread is not None:
            spread_plan = classes.within_spread(self.table, self.brokers, split.ranges(racks=False),
                                           rack_of, objective.topic_spread)
            if spread_plan is None:
                return False
            self._classed(spread_plan.final, spread_plan.plain, free)
            self.classed = TopicGoal(objective.topic_spread, spread_plan.spread,
                                     spread_plan.plain, spread_plan.moves,
                                     spread_plan.fewest == spread_plan.moves)
            self.classed_bound = spread_plan.fewest
            return True
        if not objective.even_topics:
            return False
        found = classes.plan(self.table, self.brokers, split.ranges(racks=False), rack_of,
                             beyond=free)
        if found is None:
            return False
        self._classed(found.final, found.moves, free)
        self.classed = TopicGoal(None, found.spread, found.moves, None,
                                 found.least == found.spread, found.least)
        return True

    def _classed(self, final: dict[int, Replicas], fewest: int, free: int) -> None:
        """The class program's plan ``final``; ``fewest``: the fewest moves keeping the racks
        (topics aside), ``free``: the rack-free bound."""
        rack_of, split, before = self.rack_of, self.split, self.before
        assert rack_of is not None
        served = len({rack_of[b] for b in self.brokers})
        within = sum(1 for r in before if held_in_racks(r, rack_of, served))
        self.racks = RackBalance(True, free, True, fewest, within=within)
        self.moved, self.missing = final, 0
        ends = ends_after({**split.inside, **split.outside}, before, final, self.brokers)
        give, take = toward(split.inside, ends, split.outside)
        self.wanted = Quota(give, take, frozenset(), frozenset())
        self.least = None  # the rack-free certificate: these moves may be more than its fewest

    def _bound(self) -> int:
        """When the plan balances, the quota's units are :func:`lower_bound` (the same closed
        form); across racks of unequal size the exact program's fewest moves (also
        :func:`lower_bound`); where no plan balances across them, the rack-level program's
        fewest at the least spread (and the topics are evened at the end state it reached);
        otherwise only what any plan is forced to move. A partial plan reports the bound of
        the whole plan it is a step of."""
        racks, before, moved = self.racks, self.before, self.moved
        if racks is not None and racks.fewest is not None:
            self.ranges = {b: (n, n) for b, n in ends_after(self.counts, before, moved,
                                                           self.brokers).items()}
            return racks.fewest
        if not self.missing and (racks is None or self._at_free_bound):
            return self.wanted.units
        return lower_bound(before, [moved.get(i, r) for i, r in enumerate(before)],
                           self.brokers, self.rack_of, self.objective.weights)

    def unplaced(self) -> int:
        return self.missing

    def topics(self) -> None:
        """The topic stage (:func:`kadmin.balance.evenness.even_topics`): another plan of the
        same moves where it evens the topics more, or the fewest moves within the spread
        asked (then the lower bound)."""
        table, before, moved = self.table, self.before, self.moved
        if self.classed is not None:  # the class program decided the topics with the moves
            self.goal, self.worst = self.classed, evenness.worst_topic(table, moved, self.brokers)
            self.bound = self.bound if self.classed_bound is None else self.classed_bound
            return
        self.worst = evenness.worst_topic(table, moved, self.brokers) if self.counted is None \
            else self.counted
        self.made = replica_moves(before, moved) if self.made is None else self.made
        evened = evenness.even_topics(table, self.brokers, self.ranges, self.rack_of, moved,
                                      self.bound, self.objective.topic_spread, self.counts,
                                      self.least, self.worst[0], self.made)
        if evened is None:
            return
        if evened[0] != moved:  # another plan: its figures are counted again
            self.worst = self.made = None
            self.moved = {i: leader_kept(before[i], list(r)) for i, r in evened[0].items()}
        self.goal = evened[1]
        self.bound = self.goal.fewest if self.goal.fewest is not None else self.bound
        if not self.goal.exact:
            self._challenged()

    def _challenged(self) -> None:
        """The default objective with racks where the search's plan is not proven: the class
        program (:func:`kadmin.balance.classes.plan`) plans too, where its classes aggregate,
        and the better plan stands (fewer moves, then a smaller worst topic spread), with
        the larger of the two proven bounds; proven only where its spread meets it."""
        objective, rack_of, goal, table = self.objective, self.rack_of, self.goal, self.table
        if rack_of is None or goal is None or goal.asked is not None \
                or not objective.least_spread or objective.weights is not None \
                or self.held.index is not None or self.missing \
                or not (self.racks is None or self.racks.across) \
                or not classes.aggregates(table):
            return
        found = classes.plan(table, self.brokers, self.split.ranges(racks=False), rack_of,
                             seconds=classes.CHALLENGE_SECONDS)
        if found is None:
            return
        moves = replica_moves(self.before, self.moved)
        spread = evenness.worst_topic(table, self.moved, self.brokers)[0]
        if found.moves > moves or (found.moves == moves and found.spread >= spread
                                   and found.least <= (goal.least or 0)):
            return
        least = found.least if found.moves < moves else max(found.least, goal.least or 0)
        if found.moves < moves or found.spread < spread:
            self.moved, self.worst, self.made = found.final, None, None
            spread = found.spread
        self.bound = max(self.bound, found.moves)
        self.goal = TopicGoal(None, spread, found.moves, None, least >= spread, min(least, spread))

    def moves(self) -> int:
        return replica_moves(self.before, self.moved)

    def cut(self, budget: int) -> None:
        self.moved = cut_moves(self.before, self.moved, self.wanted, budget, self.rack_of)
        self.partial, self.worst, self.made = True, None, None

    def leaders(self) -> None:
        self.moved, cut = reorder_leaders(self.before, self.moved, self.brokers,
                                          self.objective.limits, self.objective.weights,
                                          self.held.leaders)
        self.partial = self.partial or cut

    def result(self) -> Rebalance:
        before = self.before
        final = changed(before, self.moved)
        return Rebalance(self.held.whole(final),
                         replica_moves(before, final) if self.made is None else self.made,
                         self.bound, leader_changes(before, final), self.missing, self.partial,
                         topics=self.goal, racks=self.racks, held=self.held.partitions,
                         worst_topic=self.worst)


def changed(before: Sequence[Replicas], final: Mapping[int, Replicas]) -> dict[int, Replicas]:
    """The lists of ``final`` that differ from ``before``."""
    return {i: r for i, r in final.items() if r != before[i]}


def reorder_leaders(before: Sequence[Replicas], moved: Mapping[int, Replicas],
                    brokers: Collection[int], limits: Limits,
                    weights: Mapping[int, int] | None = None,
                    fixed: Mapping[int, int] | None = None) -> tuple[dict[int, Replicas], bool]:
    """``moved`` plus the fewest reorderings that balance preferred leaders within
    ``limits.max_leader_changes``, and whether that limit cut them. ``fixed``: leaderships on
    the targets of partitions that do not change."""
    after = list(map(moved.get, count(), before))
    final = dict(moved)
    partial = False
    reordered, _ = order_leaders(after, list(map(itemgetter(0), before)), brokers,
                                 leader_quota(after, brokers, weights, fixed))
    if limits.max_leader_changes is not None:
        forced = leader_changes(before, moved)
        budget = limits.max_leader_changes - forced
        if budget < 0:
            raise InvalidInput(
                f"the replica moves change the preferred leader of {forced} partition(s), "
                f"more than --max-leader-changes {limits.max_leader_changes}; raise it or "
                f"lower --max-moves")
        cost = {i: int(after[i][0] == before[i][0]) for i in reordered}
        if sum(cost.values()) > budget:
            reordered = within(after, reordered, leader_quota(after, brokers, weights, fixed),
                               budget, lambda i, old, new: Change(i, old[:1], cost[i]))
            partial = True
    final.update(reordered)
    return final, partial
