"""Leadership off some brokers, by reordering replica lists only (``kadmin plan demote``). Pure.

The leader step of a rebalance (:func:`kadmin.balance.leaders.order_leaders`, a min-cost flow
solved by successive shortest paths) with the demoted brokers barred from the first place: they
are no target, so no handover reaches them, and every leadership they hold must be given away.
Unregistered brokers are barred too (a plan never makes a dead broker lead), but a partition an
unregistered broker leads that is not demoted is left as it is: demoting it is how to move it.

Objective, in this order: every partition that has a replica on an eligible broker (registered,
not demoted) is led from one; the spread of preferred leaders over the eligible brokers is the
smallest any reordering reaches (at most 1 whenever some reordering reaches it); then the fewest
partitions change leader. ``minimal`` lets only the partitions a demoted broker leads change
(each must, so they are the fewest changes there are) and still spreads them as evenly as they
can be.

The smallest spread: a reordering is an assignment of each partition to one of its eligible
replicas, and the leader counts such assignments reach are the integer points of a polymatroid's
base polyhedron, whose intersection with a box ``[lo, hi]`` is non-empty exactly when some point
has every count <= ``hi`` and some (other) point has every count >= ``lo`` (the linking property:
flip alternating paths of one toward the other). So the least spread is ``hi* - lo*``, with
``hi*`` the least maximum and ``lo*`` the greatest minimum, each found by bisection on the same
flow's feasibility; the fewest changes within ``[lo*, hi*]`` are then one more min-cost flow.
Most clusters reach ``[floor, ceil]`` at once, and the bisection never runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kadmin.balance.flow import Ledger
from kadmin.balance.leaders import order_leaders
from kadmin.balance.metrics import spread
from kadmin.model import Replicas


@dataclass(frozen=True)
class Demotion:
    """A demotion plan and what it leaves."""

    final: dict[int, Replicas]
    """Reordered replica lists by partition index, only those that change."""
    targets: tuple[int, ...]
    """The brokers leadership is balanced over: registered, not demoted, holding a replica."""
    before: Mapping[int, int]
    after: Mapping[int, int]
    """Preferred leaders per target broker (zeros included), before and after."""
    demoted: Mapping[int, tuple[int, int]]
    """Preferred leaders on each demoted broker, before and after."""
    least_spread: int
    """The smallest spread over the targets that any allowed reordering reaches: the spread
    after, since the plan reaches it."""
    handovers: Mapping[tuple[int, int], int]
    """Leaderships handed from one broker to another: ``(from, to) -> partitions``."""
    all_demoted: list[int] = field(default_factory=list)
    """Partitions whose every replica is on a demoted broker: they stay."""
    no_live_replica: list[int] = field(default_factory=list)
    """Partitions a demoted broker leads whose other replicas are all unregistered (or demoted):
    they stay rather than be made to lead from a dead broker."""
    dead_led: list[int] = field(default_factory=list)
    """Partitions led by an unregistered broker that is not demoted: left as they are."""

    @property
    def leader_changes(self) -> int:
        return len(self.final)

    @property
    def spread_before(self) -> int:
        return spread(self.before)

    @property
    def spread_after(self) -> int:
        return spread(self.after)


def demote(replicas: Sequence[Replicas], demoted: Collection[int], registered: Collection[int],
           *, minimal: bool = False) -> Demotion:
    """The reordering that takes preferred leadership off ``demoted`` (see the module)."""
    barred = frozenset(demoted)
    live = frozenset(registered) - barred
    targets = sorted({b for members in replicas for b in members if b in live})
    free: list[int] = []
    fixed: Counter[int] = Counter()
    stuck: tuple[list[int], list[int], list[int]] = ([], [], [])
    all_demoted, no_live, dead_led = stuck
    for p, members in enumerate(replicas):
        leader = members[0]
        if leader in barred:
            if any(b in live for b in members):
                free.append(p)
            elif all(b in barred for b in members):
                all_demoted.append(p)
            else:
                no_live.append(p)
        elif leader not in live:
            dead_led.append(p)
        elif minimal or sum(b in live for b in members) == 1:
            fixed[leader] += 1
        else:
            free.append(p)
    before = Counter(members[0] for members in replicas)
    sub = [replicas[p] for p in free]
    reordered = _balanced(sub, fixed, targets, barred)
    final = {free[i]: members for i, members in reordered.items()}
    after = Counter(before)
    handovers: Counter[tuple[int, int]] = Counter()
    for p, members in final.items():
        was = replicas[p][0]
        after[was] -= 1
        after[members[0]] += 1
        handovers[(was, members[0])] += 1
    counts_before = {b: before[b] for b in targets}
    counts_after = {b: after[b] for b in targets}
    return Demotion(final, tuple(targets), counts_before, counts_after,
                    {b: (before[b], after[b]) for b in sorted(barred)}, spread(counts_after),
                    dict(sorted(handovers.items())), *stuck)


def _balanced(replicas: Sequence[Replicas], fixed: Mapping[int, int], targets: Sequence[int],
              barred: frozenset[int]) -> dict[int, Replicas]:
    """The fewest reorderings of ``replicas`` (the partitions free to change) that bring leaders
    per target, counting the ``fixed`` ones, to the least spread; by index of ``replicas``."""
    if not replicas or not targets:
        return {}
    leaders = [members[0] for members in replicas]
    held = Counter(fixed)
    held.update(leaders)
    total = sum(fixed.values()) + len(replicas)
    floor, rest = divmod(total, len(targets))
    ceil = floor + (rest > 0)

    def attempt(lo: int, hi: int) -> tuple[dict[int, Replicas], int]:
        return order_leaders(replicas, leaders, targets, window(held, targets, lo, hi))

    reordered, pending = attempt(floor, ceil)
    if not pending:
        return reordered
    # Not reachable. What the attempt reached, with each partition it left on a barred broker
    # given to any eligible replica, bounds hi* from above and lo* from below.
    reached = Counter(held)
    for i, members in reordered.items():
        reached[leaders[i]] -= 1
        reached[members[0]] += 1
    loads = [reached[b] for b in targets]
    left = sum(n for b, n in reached.items() if b in barred)
    top, bottom = _density_bounds(replicas, fixed, targets, reached)
    hi = _least(max(ceil, top), max(loads) + left, lambda h: not attempt(0, h)[1])
    lo = -_least(-min(floor, bottom), -min(loads), lambda m: not attempt(-m, total)[1])
    reordered, pending = attempt(lo, hi)
    assert not pending, f"leaders: [{lo}, {hi}] is reachable by both bounds, yet not met"
    return reordered


def _density_bounds(replicas: Sequence[Replicas], fixed: Mapping[int, int],
                    targets: Sequence[int], reached: Mapping[int, int]) -> tuple[int, int]:
    """A floor under ``hi*`` and a ceiling over ``lo*``, most often the values themselves, so
    that the search checks them first: the ``k`` brokers that lead the most in ``reached``
    lead at least every partition whose eligible replicas are all among them (so one of them
    leads at least the average of that), and the ``k`` that lead the least at most every
    partition with an eligible replica among them; over every ``k``. Linear in the replicas."""
    inside = set(targets)
    order = sorted(targets, key=lambda b: (-reached.get(b, 0), b))
    rank = {b: k for k, b in enumerate(order)}
    n = len(order)
    within = [0] * n
    """Partitions whose eligible replicas all rank below k + 1, by the highest rank."""
    touching = [0] * n
    """Partitions with an eligible replica among the k + 1 that lead the least, by the
    rank of that replica counted from the end."""
    for members in replicas:
        ranks = [rank[b] for b in members if b in inside]
        within[max(ranks)] += 1
        touching[n - 1 - max(ranks)] += 1
    for b, count in fixed.items():
        within[rank[b]] += count
        touching[n - 1 - rank[b]] += count
    top, bottom, most, least = 0, len(replicas) + sum(fixed.values()), 0, 0
    for k in range(n):
        most += within[k]
        least += touching[k]
        top = max(top, -(-most // (k + 1)))
        bottom = min(bottom, least // (k + 1))
    return top, bottom


def _least(low: int, high: int, holds: Callable[[int], bool]) -> int:
    """The least ``x`` in ``[low, high]`` for which ``holds`` (monotone, true at ``high``):
    ``low`` first, then steps that double, then bisection (few checks when ``x`` is near
    ``low``, which the bounds make the common case)."""
    if low >= high or holds(low):
        return min(low, high)
    bad, step = low, 1  # holds is false at bad, true at high
    while bad + step < high:
        if holds(bad + step):
            high = bad + step
            break
        bad, step = bad + step, step * 2
    while bad + 1 < high:
        middle = (bad + high) // 2
        if holds(middle):
            high = middle
        else:
            bad = middle
    return high


class Window(Ledger):
    """A ledger in which leaders per target may end anywhere in ``[lo, hi]``: a broker may give
    or take several spare units, not one as in a balanced quota (the flow's search weighs
    spare units by count, and ``gave``/``took`` spend them one at a time)."""

    def __init__(self, give: dict[int, int], take: dict[int, int], spare_gives: dict[int, int],
                 spare_takes: dict[int, int]) -> None:
        super().__init__(give, take, {b for b, n in spare_gives.items() if n},
                         {b for b, n in spare_takes.items() if n})
        self.spare_gives = spare_gives
        self.spare_takes = spare_takes

    def can_give(self, b: int) -> int:
        if self.giving == "must":
            return self.give.get(b, 0)
        return 0 if self.give.get(b, 0) else self.spare_gives.get(b, 0)

    def can_take(self, b: int) -> int:
        if self.taking == "must":
            return self.take.get(b, 0)
        return 0 if self.take.get(b, 0) else self.spare_takes.get(b, 0)

    def gave(self, b: int) -> None:
        if not self.give.get(b, 0):
            _spend(self.spare_gives, self.spare_give, b, "give")
        else:
            self.give[b] -= 1

    def took(self, b: int) -> None:
        if not self.take.get(b, 0):
            _spend(self.spare_takes, self.spare_take, b, "take")
        else:
            self.take[b] -= 1


def _spend(spare: dict[int, int], having: set[int], b: int, what: str) -> None:
    if not spare.get(b, 0):
        raise RuntimeError(f"balancing: broker {b} has nothing left to {what}")
    spare[b] -= 1
    if not spare[b]:
        having.discard(b)


def window(held: Mapping[int, int], targets: Iterable[int], lo: int, hi: int) -> Window:
    """What each broker must and may give or take for the targets to end in ``[lo, hi]``;
    brokers outside the targets must give all they hold."""
    inside = set(targets)
    give = {b: n for b, n in held.items() if b not in inside and n > 0}
    take: dict[int, int] = {}
    spare_gives: dict[int, int] = {}
    spare_takes: dict[int, int] = {}
    for b in inside:
        n = held.get(b, 0)
        if n > hi:
            give[b] = n - hi
        elif n < lo:
            take[b] = lo - n
        spare_gives[b] = max(0, min(n, hi) - lo)
        spare_takes[b] = max(0, hi - max(n, lo))
    return Window(give, take, spare_gives, spare_takes)
