"""A rebalance of some topics over some target brokers: replica moves, then preferred leaders.

The order matters: leaders are balanced over the replica lists the moves produce, by reordering
only, so leadership never costs a copy. Both steps take their quota as an argument
(:func:`replica_quota`, :func:`leader_quota` compute the single-machine one); a Spark task runs
the same steps on its chunk of topics with quotas the driver hands out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import count
from operator import itemgetter
from typing import Any

from kadmin.balance import classes, evenness
from kadmin.balance.bound import lower_bound
from kadmin.balance.budget import Change, most_loaded_first
from kadmin.balance.capacity import refuse_overfull
from kadmin.balance.evenness import TopicGoal
from kadmin.balance.factor import change_replication_factor
from kadmin.balance.leaders import order_leaders
from kadmin.balance.metrics import leader_changes, replica_moves
from kadmin.balance.racks import RackLevel, rack_ends, rack_level, racks_kept, toward
from kadmin.balance.realise import reach
from kadmin.balance.replicas import Moved, leader_kept, move_across, plan_replicas, replica_counts
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Group, Quota, fewest_to_ranges, groups_of, quota
from kadmin.balance.weighted import balance_bytes
from kadmin.model import InvalidInput, Replicas


@dataclass(frozen=True)
class Limits:
    """A partial plan: at most this many replica moves / leader changes (None: no limit)."""

    max_moves: int | None = None
    max_leader_changes: int | None = None


@dataclass(frozen=True)
class Rebalance:
    final: Mapping[int, Replicas]
    """New replica lists by partition index, only those that change."""
    replica_moves: int
    lower_bound: int
    """The fewest moves any plan balancing these topics over these brokers makes."""
    leader_changes: int
    unplaced: int
    """Replica moves the balanced end state needs that no valid plan allows (racks, or
    partitions as wide as the broker list); 0 means the spread ends at most 1."""
    partial: bool
    """True when a limit cut the plan short: running again continues."""
    bytes_moved: int | None = None
    """With ``--balance bytes``: the bytes the plan copies (``lower_bound`` is then in bytes)."""
    topics: TopicGoal | None = None
    """What the plan does for each topic's evenness (None where no goal was pursued)."""
    racks: RackBalance | None = None
    """With racks of unequal size: whether brokers were balanced across racks."""
    held: int = 0
    """Partitions left as they are because they hold a replica on a target broker that is not
    registered (see :func:`hold`)."""
    worst_topic: tuple[int, int] | None = None
    """The final plan's worst topic spread over the targets and the first topic at it (its
    index in the table), where the topic step computed it (None: not computed)."""


@dataclass(frozen=True)
class Held:
    """The partitions a plan may change, and what the others leave on the registered targets.

    A target broker that is not registered (dead, or stopped, and named to be kept) keeps its
    replicas, and nothing new goes there. A partition holding one of its replicas is left as it
    is: a reassignment naming that broker never completes (its replica cannot join the ISR),
    and ``plan validate`` rejects it. Those partitions still count on the registered brokers
    that hold their other replicas and leaderships."""

    free: PartitionTable
    index: Sequence[int] | None
    """The index in the whole table of each partition of ``free``; None: the whole table."""
    targets: tuple[int, ...]
    """The registered targets: where replicas and leaderships may go."""
    replicas: Mapping[int, int]
    leaders: Mapping[int, int]
    """Replicas and preferred leaders of the held partitions on those targets."""
    partitions: int
    """How many partitions are held."""

    def whole(self, final: Mapping[int, Replicas]) -> dict[int, Replicas]:
        """``final`` (indexed like ``free``) by index of the whole table."""
        index = self.index
        return dict(final) if index is None else {index[i]: r for i, r in final.items()}


def hold(table: PartitionTable, targets: Collection[int], kept: Collection[int]) -> Held:
    """Split ``table`` around the ``kept`` targets (those not registered)."""
    dead = frozenset(kept)
    live = tuple(sorted(b for b in targets if b not in dead))
    if not live:
        raise InvalidInput("no registered target broker: every broker in --brokers is "
                           "unregistered, so nothing could move anywhere")
    if not dead:
        return Held(table, None, live, {}, {}, 0)
    inside = frozenset(live)
    free: list[int] = []
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    for i, members in enumerate(table.replicas):
        if dead.isdisjoint(members):
            free.append(i)
        else:
            replicas.update(b for b in members if b in inside)
            if members[0] in inside:
                leaders[members[0]] += 1
    return Held(table.subset(free), free, live, replicas, leaders, len(table) - len(free))


@dataclass(frozen=True)
class RackBalance:
    across: bool
    """True: every broker within its range of the whole cluster, no partition losing a rack;
    False: no such plan exists (or none was found, see ``proven``), so the brokers end as
    evenly as the rule allows (``spread``), else each rack balanced inside."""
    rack_free_bound: int
    """The lower bound racks aside: the plan's bound exceeds it by what rack diversity costs."""
    proven: bool = True
    """False where the plan is not shown the best: too large for the exact program, the
    search found no balance across racks at the rack-free bound (some plan may still reach
    it), or it moves more than the rack-level program's fewest at its spread."""
    fewest: int | None = None
    """With ``spread``: the fewest moves any plan under the rule at that spread makes (the
    plan's lower bound, which may be below the rack-free one: the brokers end less even)."""
    spread: int | None = None
    """With ``across`` False: the least spread of the brokers (each rack's within one) any
    plan under the rule reaches (:func:`kadmin.balance.racks.rack_level`), which the plan
    reaches; None: not decided, each rack balanced on its own."""
    below: tuple[str, ...] = ()
    above: tuple[str, ...] = ()
    """With ``spread``: the racks whose brokers end below (above) the range that balances the
    whole cluster, at best under the rule: why the cluster is not balanced."""
    within: int | None = None
    """Where the class program planned (:mod:`kadmin.balance.classes`): the partitions with
    one replica on each rack they must keep, which may move only inside their racks: why the
    racks cost moves over the rack-free bound."""


def replica_quota(replicas: Sequence[Replicas], brokers: Collection[int],
                  rack_of: Mapping[int, str] | None, counts: Mapping[int, int] | None = None,
                  weights: Mapping[int, int] | None = None) -> Quota:
    """The quota that balances ``replicas`` over ``brokers`` (by ``weights``, their
    capacities, when given); ``counts`` are their replicas per broker when the caller has them
    already."""
    counts = replica_counts(replicas) if counts is None else counts
    return _Split.of(counts, brokers, rack_of, weights).quota(racks=True)


@dataclass(frozen=True)
class _Split:
    """Replicas per target broker and on the brokers given up, and the groups a quota balances
    them in (:func:`groups_of`) with racks (one per rack when racks differ in size) and
    without: counted once per rebalance for every quota, range and rack question on the way."""

    inside: dict[int, int]
    outside: dict[int, int]
    racked: list[Group]
    free: list[Group]

    @classmethod
    def of(cls, counts: Mapping[int, int], brokers: Collection[int],
           rack_of: Mapping[int, str] | None, weights: Mapping[int, int] | None) -> _Split:
        inside = {b: counts.get(b, 0) for b in brokers}
        outside = {b: n for b, n in counts.items() if b not in inside}
        free = groups_of(brokers, inside, outside, None, weights)
        racked = free if rack_of is None else groups_of(brokers, inside, outside, rack_of,
                                                         weights)
        return cls(inside, outside, racked, free)

    @property
    def by_rack(self) -> bool:
        """Whether the quota balances each rack on its own (racks of unequal size)."""
        return len(self.racked) > 1

    def quota(self, racks: bool) -> Quota:
        return quota(self.inside, self.racked if racks else self.free, self.outside)

    def ranges(self, racks: bool) -> dict[int, tuple[int, int]]:
        """Each target broker's balanced range, as the quota states it."""
        ranges: dict[int, tuple[int, int]] = {}
        for group in self.racked if racks else self.free:
            ranges.update(group.bounds())
        return ranges


def leader_quota(replicas: Sequence[Replicas], brokers: Collection[int],
                 weights: Mapping[int, int] | None = None,
                 fixed: Mapping[int, int] | None = None) -> Quota:
    """Leadership is balanced over all target brokers together (by ``weights`` when given, the
    same shares as replicas): a leader costs no disk, so racks do not bound where it may go.
    ``fixed``: leaderships on the targets of partitions that do not change (they count, and
    cannot move)."""
    leaders = Counter(fixed or {})
    leaders.update(map(itemgetter(0), replicas))
    inside = {b: leaders.get(b, 0) for b in brokers}
    outside = {b: n for b, n in leaders.items() if b not in inside}
    ordered = tuple(sorted(brokers))
    total = len(replicas) + sum((fixed or {}).values())
    return quota(inside, [Group(ordered, total, None if weights is None else
                                tuple(weights[b] for b in ordered))], outside)


def rebalance(table: PartitionTable, brokers: Collection[int],
              rack_of: Mapping[int, str] | None = None, *, leaders: bool = True,
              limits: Limits = Limits(), counts: Mapping[int, int] | None = None,
              weights: Mapping[int, int] | None = None, topic_spread: int | None = None,
              even_topics: bool = True, kept: Collection[int] = ()) -> Rebalance:
    """The fewest replica moves that balance ``table``'s replicas over ``brokers`` (drained
    brokers are those holding replicas but not in ``brokers``), then, with ``leaders``, the
    fewest reorderings that balance preferred leaders. With ``weights`` (broker capacities)
    balanced means each broker at the floor or ceiling of its capacity share.

    Topics (:mod:`kadmin.balance.evenness`): by default (``even_topics``), among the plans of
    the fewest moves the one whose worst topic spread is least, proven by a bound at any size
    where the search's plan meets it, else by the exact programs where they are small enough
    (else the search's plan, with the bound); with ``topic_spread``, the fewest moves that
    keep every topic within it, which is then the lower bound. Neither: the fewest moves and balanced
    brokers only, no topic looked at (the fastest).

    ``kept``: the targets that are not registered (:func:`hold`); the partitions holding one
    are left out, and then so are the exact programs (topics, racks), which know no fixed
    load: the flow balances what is left."""
    held = hold(table, brokers, kept)
    table, brokers = held.free, held.targets
    before = table.replicas
    prefer_even = even_topics or topic_spread is not None
    """Whether the broker-level search prefers moves that keep topics even (off: the fastest)."""
    if held.index is not None:
        counts = Counter(replica_counts(before)) + Counter(held.replicas)
        even_topics, topic_spread = False, None
    counts = replica_counts(before) if counts is None else counts
    split = _Split.of(counts, brokers, rack_of, weights)
    if rack_of is not None and weights is None and held.index is None and even_topics \
            and topic_spread is None:
        exact = _by_classes(table, brokers, split, rack_of, leaders, limits)
        if exact is not None:
            return exact
    wanted = split.quota(racks=True)
    ranges = split.ranges(racks=True)
    default_goal = even_topics and topic_spread is None and limits.max_moves is None
    least = evenness.least_if_fewest(table, brokers, ranges, counts) if (
        default_goal and not split.by_rack) else None
    """The certificate's bound on the worst topic spread of any plan of the fewest moves
    (:func:`evenness.least_if_fewest`), computed before the plan so that the topic search can
    stop at it: where the quota balances the cluster as one (the search's plan then makes the
    fewest moves; a rack-aware plan is one of them, held to the same bound)."""
    racks = None
    counted: tuple[int, int] | None = None
    """The worst topic of ``moved`` where the replica step counted it (:attr:`Moved.worst`)."""
    at_free_bound = False
    """The search's plan across racks, kept because it meets the rack-free bound (the quota's
    units, which no rack-aware plan beats): that is the bound, with no program to run."""
    across = None if held.index is not None else _across_racks(table, brokers, split, rack_of,
                                                               weights)
    if across is not None and across[1] is not None:
        racks, exact = across[0], across[1]
        moved, unplaced = exact.final, 0
        if racks.across:
            ranges = split.ranges(racks=False)
    else:
        racks = None if across is None else across[0]
        by_rack = split.by_rack
        free_least = evenness.least_if_fewest(table, brokers, split.ranges(racks=False),
                                              counts) if (
            default_goal and by_rack and across is None and held.index is None) else None
        """The same bound for a plan across racks of unequal size at the rack-free bound
        (the fewest moves within the rack-free ranges), where the search tries one."""
        searched = (_searched_across(table, brokers, split, rack_of, weights, prefer_even,
                                     free_least or 1)
                    if by_rack and across is None and held.index is None else None)
        if searched is not None and searched[1] is not None:
            racks, (wanted, plan) = searched[0], searched[1]
            moved, unplaced, counted, at_free_bound = plan.final, 0, plan.worst, racks.across
            if racks.across:
                ranges = split.ranges(racks=False)
                if racks.fewest is None:  # at the rack-free bound: the bound holds it
                    least = free_least
        else:
            racks = racks if searched is None else searched[0]
            plan = plan_replicas(table, brokers, wanted, rack_of, enough=least or 1,
                                 even_topics=prefer_even, within_racks=by_rack)
            moved, unplaced, counted = plan.final, plan.pending, plan.worst
    if racks is not None and racks.fewest is not None:
        bound = racks.fewest
        ranges = {b: (n, n) for b, n in _ends(counts, before, moved, brokers).items()}
    else:
        bound = wanted.units if not unplaced and (racks is None or at_free_bound) else (
            lower_bound(before, [moved.get(i, r) for i, r in enumerate(before)], brokers,
                        rack_of, weights))
    """When the plan balances, the quota's units are :func:`lower_bound` (the same closed
    form); across racks of unequal size the exact program's fewest moves (also
    :func:`lower_bound`); where no plan balances across them, the rack-level program's
    fewest at the least spread (and the topics are evened at the end state it reached);
    otherwise only what any plan is forced to move. A partial plan reports the bound of the
    whole plan it is a step of."""
    goal = None
    worst = None
    made = None if least is None else replica_moves(before, moved)
    """The replica moves of ``moved``, where counted (and the worst topic, below): the final
    plan's too while ``moved`` stands (the leader step only reorders)."""
    if least is not None and least > 1 and (unplaced or made != fewest_to_ranges(
            {b: counts.get(b, 0) for b in brokers}, ranges, sum(map(len, before)))):
        # the bound holds plans of the fewest moves there are, and this one makes more (a
        # chain through a full broker): the topic search it stopped must run in full
        plan = plan_replicas(table, brokers, wanted, rack_of, even_topics=prefer_even)
        moved, unplaced, counted, made = plan.final, plan.pending, plan.worst, None
    if not unplaced and (topic_spread is not None or (even_topics and limits.max_moves is None)):
        worst = evenness.worst_topic(table, moved, brokers) if counted is None else counted
        made = replica_moves(before, moved) if made is None else made
        evened = evenness.even_topics(table, brokers, ranges, rack_of, moved, bound,
                                      topic_spread, counts, least, worst[0], made)
        if evened is not None:
            if evened[0] != moved:  # another plan: its figures are counted again
                worst = made = None
                moved = {i: leader_kept(before[i], list(r)) for i, r in evened[0].items()}
            goal = evened[1]
            bound = goal.fewest if goal.fewest is not None else bound
    partial = False
    if limits.max_moves is not None and replica_moves(before, moved) > limits.max_moves:
        moved = cut_moves(before, moved, wanted, limits.max_moves)
        partial, worst, made = True, None, None
    final, cut = _with_leaders(before, moved, brokers, leaders, limits, weights, held.leaders)
    return Rebalance(held.whole(final), replica_moves(before, final) if made is None else made,
                     bound, leader_changes(before, final), unplaced, partial or cut, topics=goal,
                     racks=racks, held=held.partitions, worst_topic=worst)


def _by_classes(table: PartitionTable, brokers: Collection[int], split: _Split,
                rack_of: Mapping[int, str], leaders: bool, limits: Limits) -> Rebalance | None:
    """The default objective with racks, exactly, at any size the class program takes
    (:func:`kadmin.balance.classes.plan`): every broker within its range of the whole cluster
    with the fewest moves that keep every partition's racks (the lower bound, proven), then
    the least worst topic spread at those moves (proven, or the bound below it), then
    preferred leaders by reordering. None where the program does not apply (no plan balances
    every broker without a partition losing a rack, a target without a rack, too many
    classes) or the racks cost no move over the rack-free bound: the search (with its topic
    certificate) and the rack-level program decide."""
    free = split.quota(racks=False).units
    found = classes.plan(table, brokers, split.ranges(racks=False), rack_of, beyond=free)
    if found is None:
        return None
    before = table.replicas
    served = len({rack_of[b] for b in brokers})
    within = sum(1 for r in before if len(r) == racks_kept(r, rack_of, served)
                 and all(b in rack_of for b in r))
    racks = RackBalance(True, free, True, found.moves, within=within)
    goal = TopicGoal(None, found.spread, found.moves, None, found.least == found.spread,
                     found.least)
    moved: Mapping[int, Replicas] = found.final
    partial = False
    if limits.max_moves is not None and found.moves > limits.max_moves:
        ends = _ends({**split.inside, **split.outside}, before, moved, brokers)
        give, take = toward(split.inside, ends, split.outside)
        moved = cut_moves(before, moved, Quota(give, take, frozenset(), frozenset()),
                          limits.max_moves)
        partial = True
    final, cut = _with_leaders(before, moved, brokers, leaders, limits)
    worst = None if partial else evenness.worst_topic(table, moved, brokers)
    return Rebalance(dict(final), replica_moves(before, final), found.moves,
                     leader_changes(before, final), 0, partial or cut, topics=goal, racks=racks,
                     worst_topic=worst)


def _across_racks(table: PartitionTable, brokers: Collection[int], split: _Split,
                  rack_of: Mapping[int, str] | None, weights: Mapping[int, int] | None
                  ) -> tuple[RackBalance, evenness.Exact | None] | None:
    """Racks of unequal size, as real clusters have them: every broker within its range of
    the whole cluster whenever some plan can do that without a partition ending on fewer
    racks than it has, with the fewest moves such plans make (the exact program, rack
    diversity as its per-partition lower bounds); otherwise each rack balanced inside, as the
    broker-level search does. None when racks are equal in size (the search is exact there)
    or the program is too large (then :func:`_searched_across` tries the broker-level search
    across racks, and each rack is balanced inside where it falls short). Rack by rack, too,
    the program gives the fewest moves (the search's may be more when diversity blocks its
    hops)."""
    if rack_of is None or not split.by_rack \
            or evenness.arcs(table, brokers) > evenness.DEFAULT_LIMIT:
        return None
    free = split.quota(racks=False).units
    exact = evenness.fewest_moves_within(table, brokers, split.ranges(racks=False), None,
                                         rack_of)
    if exact is not None:
        return RackBalance(True, free), exact
    level = _level(table, brokers, rack_of, weights)
    if level is not None:
        exact = evenness.fewest_moves_within(table, brokers, {b: (n, n) for b, n in
                                                              level.ends.items()}, None, rack_of)
        if exact is not None:
            return RackBalance(False, free, exact.moves == level.moves, level.moves,
                               level.spread, *_apart(level, split, rack_of)), exact
    return RackBalance(False, free), evenness.fewest_moves_within(
        table, brokers, split.ranges(racks=True), None, rack_of)


def _level(table: PartitionTable, brokers: Collection[int], rack_of: Mapping[int, str],
           weights: Mapping[int, int] | None) -> RackLevel | None:
    """The most even end state the rule allows (:func:`kadmin.balance.racks.rack_level`);
    None with capacities (its spread is of counts, not of shares: each rack is then balanced
    on its own)."""
    return None if weights is not None else rack_level(table.replicas, brokers, rack_of)


def _searched_across(table: PartitionTable, brokers: Collection[int], split: _Split,
                     rack_of: Mapping[int, str] | None, weights: Mapping[int, int] | None,
                     even_topics: bool, enough: int = 1
                     ) -> tuple[RackBalance, tuple[Quota, Moved] | None]:
    """Racks of unequal size on a cluster too large for the exact program: the whole cluster
    balanced, no partition losing a rack, kept (with its quota) only when it meets the
    rack-free lower bound, which no rack-aware plan can beat: then it is the fewest moves,
    exactly. First the fast way: the fewest-move end state that sends the fewest units across
    racks (:func:`kadmin.balance.racks.rack_ends`), those units through the partitions that
    allow it and every other move inside its rack (:func:`move_across`); where that falls
    short, the rack-level program (:func:`kadmin.balance.racks.rack_level`) says whether any
    plan balances the brokers: if not, the plan reaches its end state, as evenly as the rule
    allows (:func:`_realised`, no broker-level search wasted on it); if so, the broker-level
    search over every hop, and where it falls short, the program's end state again. None
    beside ``across=False`` only where neither decides (capacities, a broker without a rack,
    too large a program): each rack is then balanced on its own (not proven).

    ``enough``: a worst topic spread no plan at the rack-free bound goes below, where the topic
    search of a plan kept at that bound may stop (:func:`move_replicas`)."""
    whole = split.quota(racks=False)
    if rack_of is not None:
        ends = rack_ends(split.inside, split.ranges(racks=False), rack_of, split.outside)
        if ends.moves == whole.units:
            give, take = toward(split.inside, ends.ends, split.outside)
            direct = move_across(table, brokers, Quota(give, take, frozenset(), frozenset()),
                                 rack_of, ends.flow, even_topics=even_topics, enough=enough)
            if direct is not None:  # every unit met by a move of its own: whole.units moves
                return RackBalance(True, whole.units), (whole, direct)
    level = None if rack_of is None else _level(table, brokers, rack_of, weights)
    if level is not None and level.spread > 1:  # no plan balances: no search to try it
        return _realised(table, brokers, split, rack_of or {}, level, whole.units,
                         even_topics)
    moved = plan_replicas(table, brokers, whole, rack_of, even_topics=even_topics,
                          enough=enough)
    if not moved.pending and replica_moves(table.replicas, moved.final) <= whole.units:
        return RackBalance(True, whole.units), (whole, moved)
    if level is None:
        return RackBalance(False, whole.units, proven=False), None
    return _realised(table, brokers, split, rack_of or {}, level, whole.units, even_topics)


def _realised(table: PartitionTable, brokers: Collection[int], split: _Split,
              rack_of: Mapping[int, str], level: RackLevel, free: int, even_topics: bool
              ) -> tuple[RackBalance, tuple[Quota, Moved] | None]:
    """A plan reaching ``level``'s end state: the units each rack sends through the partitions
    that allow it, every other move inside its rack (:func:`move_across`), else the search
    over every hop, and where that falls short of ``level.moves`` (the rack-level program's
    fewest at its spread, a bound no plan beats) or leaves a unit unplaced, the exact min-cost
    flow to any end state at that spread (:func:`kadmin.balance.realise.reach`, within its
    size: the program's own ends meet its bound in the racks' totals, not always broker by
    broker). Proven when the moves are
    ``level.moves``. None reaching it: None, each rack balanced inside. At spread 1 the whole
    cluster is balanced (``across``), by more moves than the rack-free bound where racks cost
    some."""
    give, take = toward(split.inside, level.ends, split.outside)
    wanted = Quota(give, take, frozenset(), frozenset())
    found = move_across(table, brokers, wanted, rack_of, level.flow, even_topics=even_topics)
    moved = found if found is not None else plan_replicas(table, brokers, wanted, rack_of,
                                                          even_topics=even_topics)
    made = replica_moves(table.replicas, moved.final)
    if moved.pending or made > level.moves:
        exact = reach(table.replicas, brokers, level.ends, rack_of, level.spread)
        fewer = made if exact is None else replica_moves(table.replicas, exact)
        if exact is not None and (moved.pending or fewer < made):
            moved, made = Moved(exact, 0, None), fewer  # else the search's: its topic preferences
            ends = _ends({**split.inside, **split.outside}, table.replicas, exact, brokers)
            give, take = toward(split.inside, ends, split.outside)
            wanted = Quota(give, take, frozenset(), frozenset())
    if moved.pending:
        return RackBalance(False, free, proven=False), None
    proven = made == level.moves
    if level.spread <= 1:  # the whole cluster balanced after all, above the rack-free bound
        return RackBalance(True, free, proven, level.moves), (wanted, moved)
    return RackBalance(False, free, proven, level.moves, level.spread,
                       *_apart(level, split, rack_of)), (wanted, moved)


def _apart(level: RackLevel, split: _Split, rack_of: Mapping[int, str]
           ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The racks whose brokers end below, and above, the range balancing the whole cluster."""
    ranges = split.ranges(racks=False)
    below = {rack_of[b] for b, n in level.ends.items() if n < ranges[b][0]}
    above = {rack_of[b] for b, n in level.ends.items() if n > ranges[b][1]}
    return tuple(sorted(below)), tuple(sorted(above))


def _ends(counts: Mapping[int, int], before: Sequence[Replicas], moved: Mapping[int, Replicas],
          brokers: Collection[int]) -> dict[int, int]:
    """Replicas per target broker once ``moved`` is applied to ``before`` (``counts``: its
    replicas per broker today)."""
    ends = Counter(counts)
    for i, members in moved.items():
        ends.subtract(before[i])
        ends.update(members)
    return {b: ends[b] for b in brokers}


def rebalance_bytes(table: PartitionTable, sizes: Sequence[int], brokers: Collection[int],
                    rack_of: Mapping[int, str] | None = None, *, leaders: bool = True,
                    capacities: Mapping[int, int] | None = None,
                    kept: Collection[int] = (), others: int = 0) -> Rebalance:
    """``--balance bytes``: bytes per broker within one largest partition of each other, moving
    as few bytes as :func:`kadmin.balance.weighted.balance_bytes` finds, then the same leader
    step as :func:`rebalance`. ``lower_bound`` is then the byte bound, as is ``bytes_moved``.
    With ``capacities`` (bytes per target broker) bytes per unit of capacity are balanced, and
    leaders follow the same shares; a cluster holding more bytes than the targets' capacity
    is refused, counting ``others``, the bytes topics outside ``table`` keep on the targets."""
    if capacities is not None:
        refuse_overfull(sum(size * len(r) for size, r in zip(sizes, table.replicas, strict=True)),
                        capacities, brokers, others)
    held = hold(table, brokers, kept)
    before, brokers = held.free.replicas, held.targets
    fixed: Counter[int] = Counter()
    if held.index is not None:
        free = set(held.index)
        for i, members in enumerate(table.replicas):
            if i not in free:
                fixed.update({b: sizes[i] for b in members if b in brokers})
        sizes = [sizes[i] for i in held.index]
    moved = balance_bytes(held.free, sizes, brokers, rack_of, capacities, fixed)
    final, _ = _with_leaders(before, moved.final, brokers, leaders, Limits(), capacities,
                             held.leaders)
    return Rebalance(held.whole(final), replica_moves(before, final), moved.lower_bound,
                     leader_changes(before, final), 0, False, moved.bytes_moved,
                     held=held.partitions)


def _with_leaders(before: Sequence[Replicas], moved: Mapping[int, Replicas],
                  brokers: Collection[int], leaders: bool, limits: Limits,
                  weights: Mapping[int, int] | None = None,
                  fixed: Mapping[int, int] | None = None) -> tuple[dict[int, Replicas], bool]:
    """``moved`` plus, with ``leaders``, the fewest reorderings that balance preferred leaders
    within ``limits.max_leader_changes``; only the lists that change, and whether it was cut."""
    after = list(map(moved.get, count(), before))
    final = dict(moved)
    partial = False
    if leaders:
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
                reordered = _within(after, reordered, leader_quota(after, brokers, weights, fixed),
                                    budget,
                                    lambda i, old, new: Change(i, old[:1], cost[i]))
                partial = True
        final.update(reordered)
    return {i: r for i, r in final.items() if r != before[i]}, partial


def change_factor(table: PartitionTable, factor: int, brokers: Collection[int],
                  loads: Mapping[int, int], rack_of: Mapping[int, str] | None = None,
                  limits: Limits = Limits(), kept: Collection[int] = ()) -> Rebalance:
    """A replication factor change (:func:`change_replication_factor`): moves are exactly the
    replicas added, which is the lower bound (:func:`lower_bound`: more only where the end is
    balanced and balance alone needs more); leaders stay. With ``max_moves`` the first
    partitions in plan order, as many as the budget allows."""
    held = hold(table, brokers, kept)
    before, brokers = held.free.replicas, held.targets
    final = change_replication_factor(held.free, factor, brokers, loads, rack_of)
    needed = lower_bound(before, [final.get(i, r) for i, r in enumerate(before)], brokers,
                         rack_of)
    partial = limits.max_moves is not None and needed > limits.max_moves
    if partial:
        budget, chosen = limits.max_moves or 0, {}
        for i in sorted(final):
            cost = len(set(final[i]) - set(before[i]))
            if cost <= budget:
                chosen[i] = final[i]
                budget -= cost
        final = chosen
    return Rebalance(held.whole(final), replica_moves(before, final), needed,
                     leader_changes(before, final), 0, partial, held=held.partitions)


def cut_moves(before: Sequence[Replicas], moved: Mapping[int, Replicas], wanted: Quota,
              budget: int) -> dict[int, Replicas]:
    """The replica moves to keep within ``budget`` copies, the brokers with the most to give
    relieved first (also what a Spark task keeps of its chunk's moves).

    A piece of ``moved`` one copy at a time: a partition's change is its single copies
    (the k-th replica it drops, replaced in its place by the k-th one it adds), each valid
    alone, so what a step keeps and what it leaves are both pieces of the same plan, the rest
    still optimal from where the step ends, and a step never stalls on a partition whose
    change costs more than the budget. A partition whose every copy is kept takes ``moved``'s
    list as it is."""
    units: dict[tuple[int, int], tuple[int, int]] = {}
    for i, new in moved.items():
        old = before[i]
        added = [b for b in new if b not in old]
        for k, (x, y) in enumerate(zip((b for b in old if b not in new), added, strict=True)):
            units[(i, k)] = (x, y)
    kept = _within_changes([Change(key, (x,), 1) for key, (x, _) in sorted(units.items())],
                           wanted, budget)
    out: dict[int, Replicas] = {i: new for i, new in moved.items()
                                if set(new) == set(before[i])}  # reordered only: no copy
    partly: dict[int, list[int]] = {}
    for i, k in sorted(kept):
        x, y = units[(i, k)]
        members = partly.setdefault(i, list(before[i]))
        members[members.index(x)] = y
    for i, members in partly.items():
        whole = moved[i]
        out[i] = whole if set(members) == set(whole) else tuple(members)
    return out


def _within(before: Sequence[Replicas], changed: Mapping[int, Replicas], wanted: Quota,
            budget: int, change_of: Callable[[int, Replicas, Replicas], Change]
            ) -> dict[int, Replicas]:
    """The changes to keep under ``budget``, the brokers with the most to give relieved first."""
    chosen = _within_changes([change_of(i, before[i], new) for i, new in sorted(changed.items())],
                             wanted, budget)
    return {key: changed[key] for key in chosen}


def _within_changes(changes: Sequence[Change], wanted: Quota, budget: int) -> set[Any]:
    """The keys of the changes to keep under ``budget``, the brokers with the most to give
    relieved first."""
    excess = {b: wanted.give.get(b, 0) + (b in wanted.spare_give)
              for b in set(wanted.give) | wanted.spare_give}
    return {c.key for c in most_loaded_first(changes, excess, budget)}
