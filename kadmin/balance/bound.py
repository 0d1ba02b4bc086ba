"""The lower bound of replica moves (docs/balancing.md), one definition for every command that
prints one: ``plan rebalance``, ``plan stats`` (and what ``reassign`` reports of a plan). Pure.

Two things no plan can avoid:

- **forced**: each partition must gain every replica its new list has beyond the ones it keeps
  on a target broker: ``max(0, min(size_after, |targets|) - |current ∩ targets|)`` (replicas
  on drained brokers, replicas added by a replication factor increase; a decrease forces
  nothing; a partition wider than the targets keeps the rest where they are);
- **balance**, when the plan's end state is balanced (every target broker at the floor or
  ceiling of its share, :meth:`kadmin.balance.targets.Group.bounds`; with racks of unequal
  size per rack, as :func:`kadmin.balance.targets.groups_of` says): every replica a broker
  ends with beyond what it holds now arrived by a move, so moves >= sum over targets of
  ``max(0, end_b - now_b)``, minimised over the balanced end states. Its closed form: every
  broker below its floor takes up to it, and the ceilings beyond those that brokers holding
  at least their ceiling keep for free each cost one more.

With racks, when the plan balances every broker over the whole cluster and keeps every
partition's racks, the balance term is the fewest moves of any such plan, at any size: the
min-cost flow over classes of partitions of :func:`kadmin.balance.classes.fewest_moves`
(above the closed form where partitions on one replica per rack may move only inside it).

With racks of unequal size (the end balanced over the whole cluster, or rack by rack when
rack diversity allows no better) the balance term is the exact program's fewest moves with
rack diversity (:func:`kadmin.balance.evenness.fewest_moves_within`), where it is small enough
to run.

Where racks forbid every balanced end state and the plan ends as evenly as the rule allows
(the least broker spread under rack diversity, each rack's brokers within one, as
:func:`kadmin.balance.racks.rack_level` states it) the balance term is that program's fewest
moves at its spread: the bound ``plan rebalance`` prints for such a plan.

The bound is the larger of the two when the end state is balanced (or as even as racks allow),
else ``forced``: a plan that does not balance (a partial step, a replication factor change, a
hand-written plan) is held only to what it cannot avoid. Either way a plan never moves fewer
replicas than its bound.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from kadmin.balance import classes
from kadmin.balance.evenness import DEFAULT_LIMIT, arcs, fewest_moves_within
from kadmin.balance.metrics import spread
from kadmin.balance.racks import rack_level, racks_kept
from kadmin.balance.replicas import replica_counts
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Group, fewest_to_ranges, groups_of
from kadmin.model import Replicas


def forced_moves(before: Sequence[Replicas], after: Sequence[Replicas],
                 targets: Collection[int]) -> int:
    """Replicas some partition must gain whatever the plan: see the module docstring."""
    inside = frozenset(targets)
    most = len(inside)  # a partition holds each target once: wider ones keep the rest where they are
    return sum(max(0, min(len(new), most) - len(inside.intersection(old)))
               for old, new in zip(before, after, strict=True))


def balance_groups(before: Sequence[Replicas], after: Sequence[Replicas],
                   targets: Collection[int], rack_of: Mapping[int, str] | None,
                   weights: Mapping[int, int] | None) -> tuple[dict[int, int], list[Group]]:
    """Replicas per target broker now, and the groups whose ranges the end state must meet
    (their totals those of ``after``: a replication factor change resizes them)."""
    now = replica_counts(before)
    inside = {b: now.get(b, 0) for b in targets}
    outside = {b: n for b, n in now.items() if b not in inside}
    groups = groups_of(targets, inside, outside, rack_of, weights)
    change = sum(map(len, after)) - sum(map(len, before))
    if change and len(groups) > 1:  # racks keep their units: resize them in the same ratio
        end = replica_counts(after)
        groups = [Group(g.brokers, sum(end.get(b, 0) for b in g.brokers), g.weights)
                  for g in groups]
    elif change:
        groups = [Group(g.brokers, g.total + change, g.weights) for g in groups]
    return inside, groups


def balanced(after: Sequence[Replicas], groups: Sequence[Group]) -> bool:
    """Every broker of every group within its range, and no replica outside the groups."""
    end = replica_counts(after)
    seen = 0
    for group in groups:
        for b, (low, high) in group.bounds().items():
            if not low <= end.get(b, 0) <= high:
                return False
            seen += end.get(b, 0)
    return seen == sum(end.values())


def balance_moves(inside: Mapping[int, int], groups: Sequence[Group], total: int) -> int:
    """The least ``sum max(0, end_b - now_b)`` over end states of ``total`` replicas with every
    broker within its range (the ranges bound each broker; only the total is conserved)."""
    return fewest_to_ranges(inside, {b: r for group in groups for b, r in group.bounds().items()},
                            total)


def lower_bound(before: Sequence[Replicas], after: Sequence[Replicas],
                targets: Collection[int], rack_of: Mapping[int, str] | None = None,
                weights: Mapping[int, int] | None = None) -> int:
    """The fewest moves any plan makes that takes ``before`` to lists of the sizes of
    ``after`` on ``targets`` and, when ``after`` is balanced, to a balanced end state."""
    forced = forced_moves(before, after, targets)
    inside, groups = balance_groups(before, after, targets, rack_of, weights)
    total = sum(map(len, after))
    kept = _racks_kept_by(before, after, targets, rack_of) if weights is None else None
    if kept is not None and total == sum(map(len, before)):
        whole = balance_groups(before, after, targets, None, None)[1]
        if balanced(after, whole):
            exact = classes.fewest_moves(PartitionTable(("",), [0] * len(before),
                                                        list(range(len(before))), list(before)),
                                         targets, _ranges(whole), kept)
            if exact is not None:
                return max(forced, exact)
    if len(groups) > 1 and total == sum(map(len, before)):
        whole = balance_groups(before, after, targets, None, weights)[1]
        for chosen in (whole, groups):  # across racks of unequal size, or rack by rack
            if balanced(after, chosen):
                exact = _with_racks(before, targets, chosen, rack_of)
                closed = balance_moves(inside, chosen, total)
                return max(forced, closed if exact is None else exact)
        return max(forced, _as_even_as_racks_allow(before, after, targets, rack_of, weights))
    if not balanced(after, groups):
        return forced
    return max(forced, balance_moves(inside, groups, total))


def _ranges(groups: Sequence[Group]) -> dict[int, tuple[int, int]]:
    return {b: r for group in groups for b, r in group.bounds().items()}


def _racks_kept_by(before: Sequence[Replicas], after: Sequence[Replicas],
                   targets: Collection[int], rack_of: Mapping[int, str] | None
                   ) -> Mapping[int, str] | None:
    """``rack_of`` where every target has a rack and ``after`` keeps every partition's racks
    (the rule the class program's bound holds plans to), else None."""
    if rack_of is None or any(rack_of.get(b) is None for b in targets):
        return None
    served = len({rack_of[b] for b in targets})
    for now, then in zip(before, after, strict=True):
        if len({rack_of.get(b) for b in then} - {None}) < racks_kept(now, rack_of, served):
            return None
    return rack_of


def _as_even_as_racks_allow(before: Sequence[Replicas], after: Sequence[Replicas],
                            targets: Collection[int], rack_of: Mapping[int, str] | None,
                            weights: Mapping[int, int] | None) -> int:
    """The rack-level program's fewest moves at its least spread when ``after`` ends there
    (that spread, each rack's brokers within one, every replica on a target, no partition on
    fewer racks than the rule lets it keep); else 0. Only without capacities: the program's
    spread is of counts, not of shares."""
    if rack_of is None or weights is not None or any(rack_of.get(b) is None for b in targets):
        return 0  # (rack_level has no answer for a target without a rack either)
    per_broker = replica_counts(after)
    ends = {b: per_broker.get(b, 0) for b in targets}
    if sum(ends.values()) != sum(per_broker.values()):
        return 0
    per_rack: dict[str, dict[int, int]] = {}
    for b, n in ends.items():
        per_rack.setdefault(rack_of[b], {})[b] = n
    if any(spread(counts) > 1 for counts in per_rack.values()):
        return 0
    for now, then in zip(before, after, strict=True):
        if len({rack_of[b] for b in then}) < racks_kept(now, rack_of, len(per_rack)):
            return 0  # a plan outside the rule: the program does not bound it
    level = rack_level(before, targets, rack_of)  # the program last: the checks above are cheap
    return 0 if level is None or spread(ends) != level.spread else level.moves


def _with_racks(before: Sequence[Replicas], targets: Collection[int], groups: Sequence[Group],
                rack_of: Mapping[int, str] | None) -> int | None:
    """The exact program's fewest moves into the groups' ranges with rack diversity, where it
    is small enough to run (else None)."""
    table = PartitionTable(("",), [0] * len(before), list(range(len(before))), list(before))
    if arcs(table, targets) > DEFAULT_LIMIT:
        return None
    ranges = {b: r for group in groups for b, r in group.bounds().items()}
    exact = fewest_moves_within(table, targets, ranges, None, rack_of)
    return None if exact is None else exact.moves
