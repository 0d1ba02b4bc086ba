"""Racks of unequal size, as real clusters have them: the replica plan that balances every
broker across the racks where some plan can without a partition ending on fewer racks than it
has, else as evenly as the rule allows (the rack-level program), else each rack on its own.
The exact programs decide where they are small enough; the broker-level search tries the rest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kadmin.balance import evenness
from kadmin.balance.metrics import replica_moves
from kadmin.balance.racks import RackLevel, rack_ends, rack_level, toward
from kadmin.balance.realise import reach
from kadmin.balance.replicas import Moved, move_across, plan_replicas
from kadmin.balance.shares import Split
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Quota
from kadmin.model import Replicas


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


def across_racks(table: PartitionTable, brokers: Collection[int], split: Split,
                  rack_of: Mapping[int, str] | None, weights: Mapping[int, int] | None
                  ) -> tuple[RackBalance, evenness.Exact | None] | None:
    """Racks of unequal size, as real clusters have them: every broker within its range of
    the whole cluster whenever some plan can do that without a partition ending on fewer
    racks than it has, with the fewest moves such plans make (the exact program, rack
    diversity as its per-partition lower bounds); otherwise each rack balanced inside, as the
    broker-level search does. None when racks are equal in size (the search is exact there)
    or the program is too large (then :func:`searched_across` tries the broker-level search
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
    level = level_of(table, brokers, rack_of, weights)
    if level is not None:
        exact = evenness.fewest_moves_within(table, brokers, {b: (n, n) for b, n in
                                                              level.ends.items()}, None, rack_of)
        if exact is not None:
            return RackBalance(False, free, exact.moves == level.moves, level.moves,
                               level.spread, *apart(level, split, rack_of)), exact
    return RackBalance(False, free), evenness.fewest_moves_within(
        table, brokers, split.ranges(racks=True), None, rack_of)


def level_of(table: PartitionTable, brokers: Collection[int], rack_of: Mapping[int, str],
           weights: Mapping[int, int] | None) -> RackLevel | None:
    """The most even end state the rule allows (:func:`kadmin.balance.racks.rack_level`);
    None with capacities (its spread is of counts, not of shares: each rack is then balanced
    on its own)."""
    return None if weights is not None else rack_level(table.replicas, brokers, rack_of)


def searched_across(table: PartitionTable, brokers: Collection[int], split: Split,
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
    allows (:func:`realised`, no broker-level search wasted on it); if so, the broker-level
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
    level = None if rack_of is None else level_of(table, brokers, rack_of, weights)
    if level is not None and level.spread > 1:  # no plan balances: no search to try it
        return realised(table, brokers, split, rack_of or {}, level, whole.units,
                         even_topics)
    moved = plan_replicas(table, brokers, whole, rack_of, even_topics=even_topics,
                          enough=enough)
    if not moved.pending and replica_moves(table.replicas, moved.final) <= whole.units:
        return RackBalance(True, whole.units), (whole, moved)
    if level is None:
        return RackBalance(False, whole.units, proven=False), None
    return realised(table, brokers, split, rack_of or {}, level, whole.units, even_topics)


def realised(table: PartitionTable, brokers: Collection[int], split: Split,
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
            ends = ends_after({**split.inside, **split.outside}, table.replicas, exact, brokers)
            give, take = toward(split.inside, ends, split.outside)
            wanted = Quota(give, take, frozenset(), frozenset())
    if moved.pending:
        return RackBalance(False, free, proven=False), None
    proven = made == level.moves
    if level.spread <= 1:  # the whole cluster balanced after all, above the rack-free bound
        return RackBalance(True, free, proven, level.moves), (wanted, moved)
    return RackBalance(False, free, proven, level.moves, level.spread,
                       *apart(level, split, rack_of)), (wanted, moved)


def apart(level: RackLevel, split: Split, rack_of: Mapping[int, str]
           ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The racks whose brokers end below, and above, the range balancing the whole cluster."""
    ranges = split.ranges(racks=False)
    below = {rack_of[b] for b, n in level.ends.items() if n < ranges[b][0]}
    above = {rack_of[b] for b, n in level.ends.items() if n > ranges[b][1]}
    return tuple(sorted(below)), tuple(sorted(above))


def ends_after(counts: Mapping[int, int], before: Sequence[Replicas], moved: Mapping[int, Replicas],
          brokers: Collection[int]) -> dict[int, int]:
    """Replicas per target broker once ``moved`` is applied to ``before`` (``counts``: its
    replicas per broker today)."""
    ends = Counter(counts)
    for i, members in moved.items():
        ends.subtract(before[i])
        ends.update(members)
    return {b: ends[b] for b in brokers}
