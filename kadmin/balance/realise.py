"""Reaching given replica counts per broker with the fewest moves, no partition losing a rack:
a min-cost flow, solved exactly. Pure.

Where racks forbid balancing the brokers, :func:`kadmin.balance.racks.rack_level` decides the
end state (replicas per target broker) and the search of :mod:`kadmin.balance.replicas` tries
to reach it; :func:`reach` is the exact method the plan falls back on where the search falls
short (some unit unplaced, or more moves than the rack-level program's fewest).

Which brokers a partition ends on is a flow problem once its rack rule is written as a gadget
of nodes (a textbook construction: the sets of ``k`` brokers on at least ``d`` distinct racks
are the bases of a matroid, the union of "one per rack" with "any ``k - d``", truncated to
rank ``k``). Partition ``p`` (``k`` replicas, ``d`` racks to keep: as many as it has, or every
rack with a target when it had more) sends ``k`` units; a unit reaches rack node ``(p, r)``
either directly (capacity 1: the first replica on ``r``) or through ``p``'s pool of extras
(capacity ``k - d``: further replicas on a rack already held), and ``(p, r)`` sends each unit
to a distinct broker of ``r`` (capacity 1, cost 1 when the broker does not hold ``p`` now);
broker ``b`` receives exactly its end count. At most ``k - d`` extras means at least ``d``
racks, and every valid end list is such a flow: the fewest-cost flow is the fewest moves.
The node-arc incidence matrix of a network is totally unimodular, so the linear program's
vertex optimum is integral; HiGHS (scipy's ``milp``, integrality kept as a guard: the root
relaxation is already integral, no branching) finds it with no gap.

Partitions on the same brokers are alike, so the program is written over those classes: a
class of ``n`` partitions is the gadget with every capacity times ``n``, and its integral flow
splits into ``n`` valid lists (matroid base polytopes have the integer decomposition
property; :func:`deal` makes the split: each rack's units dealt in turn over the class, so
each partition gets as many racks as the class's flow allows on average). The program has
``classes * (targets + 2 * racks + 1)`` columns (a few hundred where many partitions share
their brokers, at most :data:`LIMIT`; beyond, None: the search's plan stands, "not proven").

With a spread instead of fixed counts (any end state as even as the rack-level program
found possible), each broker's count becomes a variable in a window of that width and within
one of its rack's floor: a few integer columns beside the flow, decided by branch and bound;
once they are fixed what is left is the same flow, so the split above still holds.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence

from kadmin.balance.racks import racks_kept
from kadmin.model import Replicas

LIMIT = 200_000
"""Columns the program is built with at most (classes of partitions times its columns each)."""

SECONDS = 20.0
"""Seconds HiGHS gets; unsolved by then, None."""


def reach(parts: Sequence[Replicas], targets: Collection[int], ends: Mapping[int, int],
          rack_of: Mapping[int, str], spread: int | None = None) -> dict[int, Replicas] | None:
    """The replica lists that change (by partition index) in a plan ending with ``ends[b]``
    replicas on each target broker ``b`` (with ``spread``: on any counts within ``spread`` of
    each other, each rack's brokers within one, as :func:`kadmin.balance.racks.rack_level`
    states its end state, whose own ``ends`` meet its bound on moves only in the racks' totals:
    the counts per broker are then the program's, branch and bound over its few windows
    beside the flow), every replica on a target, no partition on fewer
    distinct racks than it has (or than there are racks with a target, when it had more),
    with the fewest moves any such plan makes (the min-cost flow of the module docstring).
    A replica that stays keeps its place in the list (a kept leader stays first), each new
    one takes the place of one that leaves. None where no plan reaches ``ends``, the program
    exceeds :data:`LIMIT`, or HiGHS does not solve it in :data:`SECONDS`."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_array

    brokers = sorted(targets)
    racks = sorted({rack_of[b] for b in brokers})
    by_rack = {r: [b for b in brokers if rack_of[b] == r] for r in racks}
    rack_at = {r: j for j, r in enumerate(racks)}
    at = {b: i for i, b in enumerate(brokers)}
    nb, nr = len(brokers), len(racks)
    per = nb + 2 * nr + 1
    """Columns per class: x per broker, u and v per rack, w."""
    classes: dict[frozenset[int], list[int]] = {}
    for p, replicas in enumerate(parts):
        classes.setdefault(frozenset(replicas), []).append(p)
    keys = list(classes)
    width = len(keys) * per
    flows = width
    if spread is not None:  # e_b per broker, the window's floor, a floor per rack
        width += nb + 1 + nr
    total = sum(map(len, parts))
    if width > LIMIT or (spread is None and sum(ends.get(b, 0) for b in brokers) != total):
        return None
    cost = np.zeros(width)
    upper = np.zeros(width)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    rhs: list[float] = []

    def entry(row: int, col: int, value: float) -> None:
        rows.append(row)
        cols.append(col)
        vals.append(value)

    for c, members in enumerate(keys):
        base, k, n = c * per, len(members), len(classes[members])
        keep = racks_kept(tuple(members), rack_of, nr)
        if k > nb:
            return None
        node = len(rhs)
        """Rows of the class: its rack nodes, then the class itself, then its pool of extras."""
        for j, r in enumerate(racks):
            for b in by_rack[r]:  # (c, r) -> b: each partition at most once
                col = base + at[b]
                cost[col] = b not in members
                upper[col] = n
                entry(node + j, col, -1.0)
            entry(node + j, base + nb + j, 1.0)  # u: c -> (c, r), a first replica on r each
            entry(node + nr, base + nb + j, -1.0)
            upper[base + nb + j] = n
            entry(node + j, base + nb + nr + j, 1.0)  # v: pool -> (c, r)
            entry(node + nr + 1, base + nb + nr + j, -1.0)
            upper[base + nb + nr + j] = n * k
        entry(node + nr, base + per - 1, -1.0)  # w: c -> pool, at most k - keep each
        entry(node + nr + 1, base + per - 1, 1.0)
        upper[base + per - 1] = n * (k - keep)
        rhs.extend([0.0] * nr + [-float(n * k), 0.0])
    first = len(rhs)
    for c in range(len(keys)):
        for b in brokers:
            entry(first + at[b], c * per + at[b], 1.0)
    if spread is None:
        rhs.extend(float(ends.get(b, 0)) for b in brokers)
    else:
        rhs.extend([0.0] * nb)
        upper[flows:] = float(total)
        for i in range(nb):
            entry(first + i, flows + i, -1.0)
    low = list(rhs)
    if spread is not None:
        for i, b in enumerate(brokers):
            window = len(rhs)
            entry(window, flows + i, 1.0)  # floor <= e_b <= floor + spread
            entry(window, flows + nb, -1.0)
            entry(window + 1, flows + i, 1.0)  # rack floor <= e_b <= rack floor + 1
            entry(window + 1, flows + nb + 1 + rack_at[rack_of[b]], -1.0)
            rhs.extend([float(spread), 1.0])
            low.extend([0.0, 0.0])
    matrix = csr_array((vals, (rows, cols)), shape=(len(rhs), width))
    found = milp(cost, constraints=LinearConstraint(matrix, low, rhs),
                 integrality=np.ones(width), bounds=Bounds(np.zeros(width), upper),
                 options={"mip_rel_gap": 0.0, "time_limit": SECONDS})
    if found.status != 0:
        return None
    chosen = np.rint(found.x).astype(int)
    final: dict[int, Replicas] = {}
    for c, members in enumerate(keys):
        units = {b: int(chosen[c * per + at[b]]) for b in brokers}
        final.update(dealt(parts, classes[members], members, units, racks, by_rack))
    return final


def dealt(parts: Sequence[Replicas], partitions: Sequence[int], members: frozenset[int],
          units: Mapping[int, int], racks: Sequence[str], by_rack: Mapping[str, Sequence[int]]
          ) -> Iterator[tuple[int, Replicas]]:
    """The new lists of a class's ``partitions`` (each on ``members``) whose ``units``
    (brokers' counts) are dealt to them (:func:`deal`), only those that change: a replica that
    stays keeps its place (a kept leader stays first), each new one takes the place of one
    that leaves."""
    for p, end in zip(partitions, deal(units, len(partitions), racks, by_rack), strict=True):
        if end != members:
            added = iter(sorted(end - members))
            yield p, tuple(b if b in end else next(added) for b in parts[p])


def deal(units: Mapping[int, int], n: int, racks: Sequence[str],
          by_rack: Mapping[str, Sequence[int]]) -> list[frozenset[int]]:
    """``units`` (brokers' counts over a class of ``n`` partitions, each at most ``n``) split
    into ``n`` lists: the units laid out rack after rack (the racks holding ``n`` or more
    first), each broker's together, and dealt to the partitions in turn. A broker's units go
    to distinct partitions; every partition gets a unit of each rack holding ``n`` or more,
    and the units of the other racks (each on distinct partitions) as evenly as dealing
    makes them: each partition on at least the class's average of distinct racks, rounded
    down, which the flow's pool keeps at least the racks to keep."""
    order = sorted(racks, key=lambda r: sum(units[b] for b in by_rack[r]) < n)
    laid = [b for r in order for b in by_rack[r] for _ in range(units[b])]
    lists: list[set[int]] = [set() for _ in range(n)]
    for i, b in enumerate(laid):
        lists[i % n].add(b)
    return [frozenset(s) for s in lists]
