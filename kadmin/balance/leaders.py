"""Preferred leaders: the fewest leader changes that meet a leadership quota, by reordering
replica lists only. Pure.

The same search as for replicas (:func:`kadmin.balance.flow.solve`), on another matching: each
partition is matched to one of its replicas, its preferred leader. A hop ``x -> y`` hands one
partition's leadership from ``x`` to ``y``, a replica of the same partition; it costs 1 when it
takes leadership from the partition's leader of today, 0 when that leader was gone anyway (its
replica moved, so the partition changes leader whatever is chosen), -1 when it gives leadership
back. A chain of hops through brokers that are already balanced is what lets a leader move
between two brokers that share no partition.

The chosen leader moves to the front; the other replicas keep their order, so the leader of
today, when it stays, is next in line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import chain, compress
from operator import not_

from kadmin.balance.flow import Ledger, solve
from kadmin.balance.targets import Quota
from kadmin.model import Replicas


def order_leaders(replicas: Sequence[Replicas], leaders_now: Sequence[int],
                  targets: Collection[int], quota: Quota | Ledger
                  ) -> tuple[dict[int, Replicas], int]:
    """Replica lists reordered so that preferred leaders meet ``quota``, by partition index
    (only those that change), and the units of the quota left unmet.

    ``replicas`` are the lists after the replica moves, ``leaders_now`` each partition's
    preferred leader today (the cost of a change is counted against it). No handover reaches a
    broker outside ``targets``. ``quota`` may be a ledger of its own kind (a window of loads,
    :class:`kadmin.balance.demote.Window`); it is spent.
    """
    problem = _LeaderProblem(replicas, leaders_now, targets, quota)
    solve(problem, cost=0)
    out: dict[int, Replicas] = {}
    for p, leader in problem.leader.items():
        members = replicas[p]
        if members[0] != leader:
            out[p] = (leader, *(b for b in members if b != leader))
    return out, problem.ledger.pending


FIND: list[int] = []
"""The witnesses of a hop of cost 1, found when a path takes it (never filled: a marker that an
exhausted list of witnesses, also empty, must not be taken for)."""


class _LeaderProblem:
    """The state of one solve.

    Most hops out of a broker come from partitions it leads as their leader of today: cost 1
    to every other replica. Those neighbours are counted per broker (:meth:`_near`, kept up to
    date by every handover once built, so a search after thousands of handovers reads them
    instead of going over every partition again), and a witness partition is looked for only
    when a path uses the hop. The other partitions it leads (whose leader changed: hops of cost
    0, or -1 back to their leader of today) are kept apart, in :attr:`others`.
    """

    def __init__(self, replicas: Sequence[Replicas], leaders_now: Sequence[int],
                 targets: Collection[int], quota: Quota | Ledger) -> None:
        self.replicas = replicas
        self.before = leaders_now
        self.targets = frozenset(targets)
        self.ledger = quota if isinstance(quota, Ledger) else Ledger.of(quota)
        self.leader: dict[int, int] = {}
        """Partitions whose leader was handed on, and to whom."""
        self.led: dict[int, list[int]] = {}
        """Partitions each broker leads, in partition order; stale entries are skipped."""
        self.index: dict[int, dict[int, list[int]]] = {}
        """Per broker, :meth:`_index` once built."""
        self.touched: set[int] = set()
        self.cursors: dict[tuple[int, int], Iterator[int]] = {}
        """Per giver and hop cost, how far its partitions have been tried: a partition none of
        whose replicas could take stays so, since takers only fill up."""
        self.count: dict[int, int] = {}
        """Partitions each broker leads now."""
        self.changed = {p for p, members in enumerate(replicas) if members[0] != leaders_now[p]}
        """Partitions whose leader differs from today's: their handovers can cost nothing."""
        self.taken = 0
        """Partitions whose leadership was taken from their leader of today, who still holds a
        replica: each can hand it back at cost -1."""
        self.handovers = 0
        self.dry: tuple[int, str] | None = None
        """When the relayed phase last found no path: handovers made by then, and the kind of
        takers it looked for."""
        self.near: dict[int, dict[int, int]] = {}
        """Per broker, :meth:`_near` once built."""
        self.others: dict[int, dict[int, None]] = {}
        """Per broker, the partitions it leads whose leader of today is another broker (an
        ordered set): the only ones it can hand on at cost 0 or -1."""
        led, count, others = self.led, self.count, self.others
        for p, members in enumerate(replicas):
            led.setdefault(members[0], []).append(p)
            count[members[0]] = count.get(members[0], 0) + 1
        for p in sorted(self.changed):
            others.setdefault(replicas[p][0], {})[p] = None

    def lead(self, p: int) -> int:
        return self.leader.get(p, self.replicas[p][0])

    def hand(self, p: int, y: int) -> None:
        x = self.lead(p)
        self.handovers += 1
        self.touched.add(x)
        self.touched.add(y)
        self.count[x] -= 1
        self.count[y] = self.count.get(y, 0) + 1
        was = self.before[p]
        self.taken += (x == was) - (y == was)
        members = self.replicas[p]
        if x == was:
            near = self.near.get(x)
            if near is not None:
                for z in members:
                    if z != x:
                        near[z] -= 1
        else:
            del self.others[x][p]
        if y == was:
            self.changed.discard(p)
            near = self.near.get(y)
            if near is not None:
                for z in members:
                    if z != y:
                        near[z] = near.get(z, 0) + 1
        else:
            self.changed.add(p)
            self.others.setdefault(y, {})[p] = None
        self.leader[p] = y
        self.led.setdefault(y, []).append(p)
        index = self.index.get(y)
        if index is not None and y == was:  # handed back: a witness of y's hops of cost 1 again
            for z in members:
                if z != y:
                    index.setdefault(z, []).append(p)

    def cheapest(self, exhausted: int | None) -> int | None:
        """While no leadership was taken from a partition's leader of today, no handover gives
        one back (cost -1), so no path costs less than 0; and once handovers of cost 0 have run
        out, a path of cost 0 uses only handovers of partitions whose leader changed anyway,
        which a search over those few alone finds (or proves there is none: then 1)."""
        if self.taken:
            return None
        if exhausted is None:
            return 0
        if exhausted == 0 and not self._free_path():
            return 1
        return None

    def _free_path(self) -> bool:
        """Whether a giver reaches a taker by handovers that cost nothing (breadth first)."""
        ledger, replicas, before, targets = self.ledger, self.replicas, self.before, self.targets
        out: dict[int, set[int]] = {}
        for p in self.changed:
            was = before[p]
            out.setdefault(self.lead(p), set()).update(
                y for y in replicas[p] if y != was and y in targets)
        takers = set(ledger.takers())
        seen = set(ledger.givers())
        frontier = list(seen)
        while frontier:
            following = []
            for x in frontier:
                for y in out.get(x, ()):
                    if y in takers:
                        return True
                    if y not in seen:
                        seen.add(y)
                        following.append(y)
            frontier = following
        return False

    def direct(self, cost: int) -> int:
        """Single handovers of exactly ``cost`` from givers, the most to give first, each to
        the replica that must take with the most room. Hops of cost 1 hand on partitions the
        giver leads as their leader of today, tried once each (takers only fill up); hops of
        cost 0 or -1 those in :attr:`others`."""
        if cost > 1:
            return 0
        ledger = self.ledger
        takers = set(ledger.takers())
        givers = sorted(ledger.givers(), key=lambda b: (-ledger.can_give(b), b))
        if cost <= 0:  # only partitions whose leader changed anyway: those listed, afresh
            for x in givers:
                self.cursors[(x, cost)] = iter(list(self.others.get(x, ())))
        moved = 0
        for x in givers:
            while takers and ledger.can_give(x):
                found = self._direct_from(x, cost, takers)
                if found is None:
                    break
                p, y = found
                self.hand(p, y)
                self._met(x, y, takers)
                moved += 1
        if cost == 1 and not moved and ledger.giving == "must":
            moved = self._relayed(givers, takers)
        return moved

    def _met(self, x: int, y: int, takers: set[int]) -> None:
        """One unit of the quota met, from giver ``x`` to taker ``y`` (dropped once full)."""
        self.ledger.gave(x)
        self.ledger.took(y)
        if not self.ledger.can_take(y):
            takers.discard(y)

    def _relayed(self, givers: Sequence[int], takers: set[int]) -> int:
        """Once single handovers of cost 1 have run out while 1 is the least a path can cost:
        paths of two handovers costing 1 together, each a shortest path. Giver ``x`` hands a
        partition it leads as its leader of today to a broker ``c`` (cost 1), which hands on a
        partition whose leader changed anyway to taker ``y`` (cost 0), so ``c`` keeps its
        count. The relays ``c`` and their partitions are listed once per call (a partition
        handed to ``c`` joins them), each checked again when used (takers only fill up); the
        givers are gone over until a pass finds none, and a call with nothing handed over
        since then (and the same kind of takers) knows there is none."""
        ledger, replicas, before, targets = self.ledger, self.replicas, self.before, self.targets
        if not takers or self.dry == (self.handovers, ledger.taking):
            return 0
        relays: dict[int, list[int]] = {}
        for c, mine in self.others.items():
            if c in targets:
                usable = list(compress(mine, map(not_, map(takers.isdisjoint, map(
                    replicas.__getitem__, mine)))))
                if usable:
                    relays[c] = usable
        moved = found_now = 0
        while True:
            for x in givers:
                if not (takers and relays and ledger.can_give(x)):
                    continue
                for p in list(dict.fromkeys(self.led.get(x, ()))):
                    if before[p] != x or self.lead(p) != x:
                        continue
                    for c in replicas[p]:
                        if c == x or c not in relays:
                            continue
                        found = self._relay(c, relays, takers)
                        if found is None:
                            continue
                        q, y = found
                        self.hand(q, y)
                        self.hand(p, c)
                        self._met(x, y, takers)
                        found_now += 1
                        if not takers.isdisjoint(replicas[p]):  # c may hand it on at cost 0
                            relays.setdefault(c, []).append(p)
                        break
                    if not (takers and relays and ledger.can_give(x)):
                        break
            if not found_now:
                self.dry = (self.handovers, ledger.taking)
                return moved
            moved += found_now
            found_now = 0

    def _relay(self, c: int, relays: dict[int, list[int]], takers: set[int]
               ) -> tuple[int, int] | None:
        """A partition ``c`` leads whose leader changed anyway, and the replica that must take
        with the most room it can go to at cost 0; those no longer usable are dropped."""
        candidates = relays[c]
        replicas, before, can_take = self.replicas, self.before, self.ledger.can_take
        while candidates:
            q = candidates[-1]
            if self.lead(q) == c:
                was = before[q]
                best: tuple[int, int] | None = None
                for y in replicas[q]:
                    if y in takers and y != c and y != was:
                        room = can_take(y)
                        if room and (best is None or (-room, y) < best):
                            best = (-room, y)
                if best is not None:
                    candidates.pop()
                    if not candidates:
                        del relays[c]
                    return q, best[1]
            candidates.pop()
        del relays[c]
        return None

    def _direct_from(self, x: int, cost: int, takers: set[int]) -> tuple[int, int] | None:
        cursor = self.cursors.get((x, cost))
        if cursor is None:
            cursor = self.cursors[(x, cost)] = iter(self.led.setdefault(x, []))
        leader, replicas, before, can_take = self.leader, self.replicas, self.before, \
            self.ledger.can_take
        for p in cursor:
            members = replicas[p]
            if leader.get(p, members[0]) != x:
                continue
            was = before[p]
            gone = x != was
            best: tuple[int, int] | None = None
            for y in members:
                if y in takers and (y != was) - gone == cost:
                    room = can_take(y)  # it may have filled up since the set was made
                    if room and (best is None or (-room, y) < best):
                        best = (-room, y)
            if best is not None:
                return p, best[1]
        return None

    def hops(self, x: int) -> dict[int, tuple[int, list[int]]]:
        replicas, before, targets = self.replicas, self.before, self.targets
        best: dict[int, tuple[int, list[int]]] = {
            y: (1, FIND) for y, n in self._near(x).items() if n and y in targets}
        for p in self.others.get(x, ()):
            was = before[p]
            for y in replicas[p]:
                if y == x or y not in targets:
                    continue
                cost = -1 if y == was else 0
                entry = best.get(y)
                if entry is None or cost < entry[0]:
                    best[y] = (cost, [p])
                elif cost == entry[0]:
                    entry[1].append(p)
        return best

    def _near(self, x: int) -> dict[int, int]:
        """How many partitions ``x`` leads as their leader of today hold each other broker: the
        ends of its hops of cost 1 (those at 0 are gone), built when first asked for and kept
        up to date by :meth:`hand`."""
        near = self.near.get(x)
        if near is None:
            replicas, before, lead = self.replicas, self.before, self.lead
            near = self.near[x] = dict(Counter(chain.from_iterable(
                replicas[p] for p in dict.fromkeys(self.led.get(x, ()))
                if before[p] == x and lead(p) == x)))
            near.pop(x, None)
        return near

    def _witness(self, x: int, y: int, overlay: Mapping[int, int]) -> int | None:
        """A partition ``x`` leads as its leader of today with ``y`` among its replicas (a hop
        of cost 1), from ``x``'s index of them by replica (:meth:`_index`): one that ``x``
        no longer leads is dropped for good (it comes back by :meth:`hand` if handed back)."""
        candidates = self._index(x).get(y)
        if not candidates:
            return None
        lead = self.lead
        for k in range(len(candidates) - 1, -1, -1):
            p = candidates[k]
            if lead(p) != x:
                if k == len(candidates) - 1:
                    candidates.pop()
                continue
            if overlay.get(p, x) == x:
                return p
        return None

    def _index(self, x: int) -> dict[int, list[int]]:
        """The partitions ``x`` leads as their leader of today, by each other replica: the
        witnesses of its hops of cost 1, built when a path first takes one."""
        index = self.index.get(x)
        if index is None:
            index = self.index[x] = {}
            before, replicas, lead = self.before, self.replicas, self.lead
            for p in dict.fromkeys(self.led.get(x, ())):
                if before[p] == x and lead(p) == x:
                    for z in replicas[p]:
                        if z != x:
                            found = index.get(z)
                            if found is None:
                                index[z] = [p]
                            else:
                                found.append(p)
        return index

    def apply(self, path: Sequence[tuple[int, int, list[int]]]) -> int | None:
        overlay: dict[int, int] = {}
        chosen: list[tuple[int, int]] = []
        for k, (x, y, witnesses) in enumerate(path):
            while witnesses and self.lead(witnesses[-1]) != x:
                witnesses.pop()  # led by another broker since: never a witness again
            found = self._witness(x, y, overlay) if witnesses is FIND else next(
                (p for p in reversed(witnesses) if overlay.get(p, self.lead(p)) == x), None)
            if found is None:
                return k
            overlay[found] = y
            chosen.append((found, y))
        for p, y in chosen:
            self.hand(p, y)
        return None
