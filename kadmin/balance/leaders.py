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

from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import compress, count
from operator import itemgetter, ne, not_

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
            k = members.index(leader)
            out[p] = (leader, *members[:k], *members[k + 1:])
    return out, problem.ledger.pending


FIND: list[int] = []
"""The witnesses of a hop of cost 1, found when a path takes it (never filled: a marker that an
exhausted list of witnesses, also empty, must not be taken for)."""

_FOUND_LATER = (1, FIND)
"""Every hop of cost 1 (shared: a hop's entry is replaced, never changed, and no other hop
costs 1)."""


class _LeaderProblem:
    """The state of one solve.

    Most hops out of a broker come from partitions it leads as their leader of today: cost 1
    to every other replica. Those partitions are indexed per broker by each other replica
    (:meth:`_index`, built when first asked for and kept exact by every handover, so a search
    after thousands of handovers reads it instead of going over every partition again): its
    keys with partitions are the ends of the hops, its partitions their witnesses. The other
    partitions a broker leads (whose leader changed: hops of cost 0, or -1 back to their
    leader of today) are kept apart, in :attr:`others`.
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
        self.index: dict[int, dict[int, dict[int, None]]] = {}
        """Per broker, :meth:`_index` once built."""
        self.touched: set[int] = set()
        self.cursors: dict[tuple[int, int], Iterator[int]] = {}
        """Per giver and hop cost, how far its partitions have been tried: a partition none of
        whose replicas could take stays so, since takers only fill up."""
        firsts = list(map(itemgetter(0), replicas))
        self.taken = 0
        """Partitions whose leadership was taken from their leader of today, who still holds a
        replica: each can hand it back at cost -1."""
        self.dry: str | None = None
        """The kind of takers (``must``/``may``) the relayed phase has come back dry for."""
        self.others: dict[int, dict[int, None]] = {}
        """Per broker, the partitions it leads whose leader of today is another broker (an
        ordered set): the only ones it can hand on at cost 0 or -1; together, every partition
        whose leader changed."""
        led, others = self.led, self.others
        for p, x in enumerate(firsts):
            led.setdefault(x, []).append(p)
        for p in compress(count(), map(ne, firsts, leaders_now)):
            others.setdefault(firsts[p], {})[p] = None

    def lead(self, p: int) -> int:
        return self.leader.get(p, self.replicas[p][0])

    def hand(self, p: int, y: int) -> None:
        members = self.replicas[p]
        x = self.leader.get(p, members[0])
        touched = self.touched
        touched.add(x)
        touched.add(y)
        was = self.before[p]
        if x == was:  # taken from its leader of today: no longer a hop of cost 1 out of x
            self.taken += 1
            index = self.index.get(x)
            if index is not None:
                for z in members:
                    if z != x:
                        del index[z][p]
        else:
            del self.others[x][p]
        if y == was:  # handed back: a hop of cost 1 out of y again
            self.taken -= 1
            index = self.index.get(y)
            if index is not None:
                for z in members:
                    if z != y:
                        index.setdefault(z, {})[p] = None
        else:
            self.others.setdefault(y, {})[p] = None
        self.leader[p] = y
        self.led.setdefault(y, []).append(p)

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
        for x, mine in self.others.items():
            ends = out[x] = set()
            for p in mine:
                was = before[p]
                ends.update(y for y in replicas[p] if y != was and y in targets)
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
        hand, met, can_give = self.hand, self._met, ledger.can_give
        for x in givers:
            if not (takers and can_give(x)):
                continue
            for p, y in self._offers(x, cost, takers):
                hand(p, y)
                met(x, y, takers)
                moved += 1
                if not (takers and can_give(x)):
                    break
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
        givers are gone over until a pass finds none. Once a pass found none for a kind of
        takers, later calls for that kind leave the paths to the search (which finds every
        path a relay would): handovers since may have opened a few, but listing the relays
        again goes over every partition whose leader changed, which costs more than a
        search."""
        ledger, replicas, before, targets = self.ledger, self.replicas, self.before, self.targets
        leader = self.leader
        if not takers or self.dry == ledger.taking:
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
                index = self.index.get(x)
                if index is not None and not any(map(index.get, relays)):
                    continue  # its index shows no partition it leads holding a relay
                for p in dict.fromkeys(self.led.get(x, ())):
                    if before[p] != x or leader.get(p, x) != x:
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
                self.dry = ledger.taking
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

    def _offers(self, x: int, cost: int, takers: set[int]) -> Iterator[tuple[int, int]]:
        """Single handovers of exactly ``cost`` out of ``x``, each when it is asked for: a
        partition from where ``x``'s cursor for that cost stands, and its replica that must
        take with the most room (checked as they come: takers only fill up)."""
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
                yield p, best[1]

    def hops(self, x: int) -> dict[int, tuple[int, list[int]]]:
        replicas, before, targets = self.replicas, self.before, self.targets
        index = self._index(x)
        best: dict[int, tuple[int, list[int]]] = dict.fromkeys(
            filter(targets.__contains__, compress(index, index.values())), _FOUND_LATER)
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

    def _witness(self, x: int, y: int, overlay: Mapping[int, int]) -> int | None:
        """A partition ``x`` leads as its leader of today with ``y`` among its replicas (a hop
        of cost 1) that the path has not handed on yet, the last one indexed first."""
        for p in reversed(self._index(x).get(y, {})):
            if overlay.get(p, x) == x:
                return p
        return None

    def _index(self, x: int) -> dict[int, dict[int, None]]:
        """The partitions ``x`` leads as their leader of today, by each other replica (ordered
        sets, in ``x``'s order of leading them; a replica whose partitions are all handed on
        keeps its empty set): the ends of its hops of cost 1 and their witnesses, built when
        first asked for and kept exact by :meth:`hand`."""
        index = self.index.get(x)
        if index is None:
            index = self.index[x] = {}
            before, replicas, leader = self.before, self.replicas, self.leader
            for p in self.led.get(x, ()):
                if before[p] == x and leader.get(p, x) == x:
                    for z in replicas[p]:
                        if z != x:
                            found = index.get(z)
                            if found is None:
                                index[z] = {p: None}
                            else:
                                found[p] = None
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
