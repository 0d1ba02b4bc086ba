"""Which replicas move, and where: the fewest moves that meet a replica quota. Pure.

The search is :func:`kadmin.balance.flow.solve`; this module is the replica problem it solves.
A hop ``x -> y`` replaces broker ``x`` by ``y`` in one partition, at the same position in the
replica list (so a moved leader's replacement is the new preferred leader until leaders are
balanced). A hop is allowed when ``y`` is a target broker not yet in the partition and, with
racks, when the partition keeps at least as many distinct racks as it had at the start.

Among the hops of equal cost the direct phase prefers, so that each topic stays spread over the
brokers: taking a replica from a topic ``x`` holds several of, giving it to a broker that holds
the fewest replicas of that topic, moving followers before leaders, and filling the taker with
the most room first (which also keeps the tail short).
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterator, Mapping, Sequence

from kadmin.balance.flow import Ledger, solve
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Quota
from kadmin.model import Replicas

WITNESSES = 2
"""Partitions kept per hop of the search: a spare lets a path that uses one partition twice
pick another instead of being banned."""

SCAN = 8
"""Takers the direct phase weighs for one replica once it has found a valid one: enough to find
one without the topic among the brokers with the most room, without scanning every broker."""


def move_replicas(table: PartitionTable, targets: Collection[int], quota: Quota,
                  rack_of: Mapping[int, str] | None = None, *, single_copies: bool = False
                  ) -> tuple[dict[int, Replicas], int]:
    """The replica lists that change, by partition index, and how many units of the quota could
    not be met (0 unless racks or partitions as wide as the broker list forbid it).

    ``single_copies`` meets only units that cost one copy each (no chain of moves through a
    third broker), so that moves equal the units met; the rest stay unmet."""
    problem = _ReplicaProblem(table, targets, quota, rack_of)
    solve(problem, cost=1, limit=1 if single_copies else None)
    return {i: tuple(r) for i, r in problem.current.items()}, problem.ledger.pending


class _ReplicaProblem:
    """The state of one solve: replica lists changed so far, and indexes over them."""

    def __init__(self, table: PartitionTable, targets: Collection[int], quota: Quota,
                 rack_of: Mapping[int, str] | None) -> None:
        self.original = table.replicas
        self.topic_of = table.topic_of
        self.targets = frozenset(targets)
        self.target_list = sorted(self.targets)
        self.rack_of = rack_of
        self.ledger = Ledger.of(quota)
        self.current: dict[int, list[int]] = {}
        self.holders: dict[int, list[int]] = {}
        """Partitions per broker; stale entries (moved away since) are skipped on reading."""
        self.topic_count: list[dict[int, int]] = [{} for _ in table.topics]
        self.topic_share: list[int] = [0] * len(table.topics)
        """Replicas of each topic: its fair share of one broker is this over the target count."""
        holders, counts, topic_of = self.holders, self.topic_count, self.topic_of
        for i, replicas in enumerate(self.original):
            count = counts[topic_of[i]]
            self.topic_share[topic_of[i]] += len(replicas)
            for b in replicas:
                held = holders.get(b)
                if held is None:
                    holders[b] = [i]
                else:
                    held.append(i)
                count[b] = count.get(b, 0) + 1
        self.queues: dict[int, Iterator[int]] = {}
        self.touched: set[int] = set()
        self.gained: set[int] = set()
        self.lost: set[int] = set()
        """While no broker is in both, moves equal the sum of what brokers gained, so every
        further unit costs at least one copy (see :meth:`cheapest`)."""

    # --- state ---------------------------------------------------------------------------------

    def members(self, p: int) -> Sequence[int]:
        return self.current.get(p) or self.original[p]

    def rack_ok(self, p: int, members: Sequence[int], x: int, y: int) -> bool:
        """Replacing ``x`` by ``y`` keeps at least the partition's original count of racks."""
        rack_of = self.rack_of
        if rack_of is None:
            return True
        rack = rack_of.get(y)
        if rack == rack_of.get(x):
            return True
        others = {rack_of.get(b) for b in members if b != x}
        if rack not in others:
            return True
        others.discard(None)
        return len(others) >= len({rack_of.get(b) for b in self.original[p]} - {None})

    def move(self, p: int, x: int, y: int) -> None:
        members = self.current.get(p)
        if members is None:
            members = self.current[p] = list(self.original[p])
        members[members.index(x)] = y
        self.gained.add(y)
        self.lost.add(x)
        self.touched.update(members)
        self.touched.add(x)
        held = self.holders.get(y)
        if held is None:
            self.holders[y] = [p]
        else:
            held.append(p)
        count = self.topic_count[self.topic_of[p]]
        count[x] -= 1
        count[y] = count.get(y, 0) + 1

    def cheapest(self) -> int | None:
        """A hop cost no path can beat now: 1 while no broker both gained and lost replicas
        (each unit a broker takes is then a copy more than the plan has), else unknown."""
        return None if self.gained & self.lost else 1

    # --- direct phase --------------------------------------------------------------------------

    def direct(self, cost: int) -> int:
        """Single hops of cost 1 (a fresh copy) from givers, the most loaded first, to takers."""
        if cost != 1:
            return 0
        ledger = self.ledger
        givers = [(-ledger.can_give(x), x) for x in ledger.givers()]
        takers = [(-ledger.can_take(y), y) for y in ledger.takers()]
        heapq.heapify(givers)
        heapq.heapify(takers)
        moved = 0
        while givers and takers:
            room, x = givers[0]
            left = ledger.can_give(x)
            if left != -room:
                _refresh(givers, left, x)
                continue
            found = self._direct_from(x, takers)
            if found is None:
                heapq.heappop(givers)  # nothing of x fits anywhere directly: the search takes over
                continue
            p, y = found
            self.move(p, x, y)
            ledger.gave(x)
            ledger.took(y)
            moved += 1
            _refresh(givers, ledger.can_give(x), x)
        return moved

    def _direct_from(self, x: int, takers: list[tuple[int, int]]) -> tuple[int, int] | None:
        queue = self.queues.get(x)
        if queue is None:
            queue = self.queues[x] = self._candidates(x)
        for p in queue:
            members = self.members(p)
            if x not in members:
                continue
            y = self._taker(p, members, x, takers)
            if y is not None:
                return p, y
        return None

    def _candidates(self, x: int) -> Iterator[int]:
        """``x``'s partitions in the order it should give them up: the topic ``x`` holds most
        above its fair share first, followers before leaders, and a topic's ``j``-th replica
        ranked as if ``j`` were gone already. So concentrations are worn down evenly, one
        replica of each topic in turn, instead of one topic being stripped at a time (a
        preference only: the number of moves does not depend on it)."""
        counts, topic_of, original = self.topic_count, self.topic_of, self.original
        shares, n = self.topic_share, len(self.targets) or 1
        seen: dict[int, int] = {}
        levels: dict[int, list[int]] = {}
        mine = dict.fromkeys(self.holders.get(x, ()))
        for follower in (True, False):
            for p in mine:
                if (original[p][0] != x) is not follower:
                    continue
                t = topic_of[p]
                j = seen.get(t, 0)
                seen[t] = j + 1
                key = 2 * ((counts[t].get(x, 0) - j) * n - shares[t]) + follower
                level = levels.get(key)
                if level is None:
                    levels[key] = [p]
                else:
                    level.append(p)
        for key in sorted(levels, reverse=True):
            yield from levels[key]

    def _taker(self, p: int, members: Sequence[int], x: int, takers: list[tuple[int, int]]
               ) -> int | None:
        """The taker for ``p``'s replica on ``x``: fewest replicas of the topic, then the most
        room, then the lowest id, among the first valid takers in order of room. The taker with
        the most room, when it fits, is taken without a scan: the common case."""
        ledger, count = self.ledger, self.topic_count[self.topic_of[p]]
        while takers:
            room, y = takers[0]
            left = ledger.can_take(y)
            if left == -room:
                break
            _refresh(takers, left, y)
        else:
            return None
        if y not in members and not count.get(y) and self.rack_ok(p, members, x, y):
            _refresh(takers, left - 1, y)  # the caller takes one unit of y's room
            return y
        popped: list[tuple[int, int]] = []
        best: tuple[int, int, int] | None = None
        valid = 0
        while takers and valid < SCAN:
            room, y = heapq.heappop(takers)
            left = ledger.can_take(y)
            if left != -room:
                if left:
                    heapq.heappush(takers, (-left, y))
                continue
            popped.append((room, y))
            if y in members or not self.rack_ok(p, members, x, y):
                continue
            valid += 1
            score = (count.get(y, 0), room, y)
            if best is None or score < best:
                best = score
            if score[0] == 0:
                break
        for item in popped:
            heapq.heappush(takers, item)
        return None if best is None else best[2]

    # --- search --------------------------------------------------------------------------------

    def hops(self, x: int) -> dict[int, tuple[int, list[int]]]:
        """Cheapest hops out of ``x``: cost ``new(y) - new(x)`` where new(b) says ``b`` was not
        in the partition at the start. Partitions that left a broker can return to it cheaply,
        so those are looked at first; then every other target broker, through the first
        partitions that allow it."""
        original = self.original
        back: list[tuple[int, int, Sequence[int]]] = []
        moved_in: list[tuple[int, Sequence[int]]] = []
        own: list[tuple[int, Sequence[int]]] = []
        seen: set[int] = set()
        for p in self.holders.get(x, ()):
            if p in seen:
                continue
            seen.add(p)
            members = self.members(p)
            if x not in members:
                continue
            fresh = x not in original[p]
            (moved_in if fresh else own).append((p, members))
            for y in original[p]:
                if y not in members and y in self.targets:
                    back.append((p, y, members))
        best: dict[int, tuple[int, list[int]]] = {}

        def offer(y: int, cost: int, p: int) -> None:
            entry = best.get(y)
            if entry is None or cost < entry[0]:
                best[y] = (cost, [p])
            elif cost == entry[0] and len(entry[1]) < WITNESSES:
                entry[1].append(p)

        for p, y, members in back:
            if self.rack_ok(p, members, x, y):
                offer(y, 0 - (x not in original[p]), p)
        for cost, parts in ((0, moved_in), (1, own)):
            open_ = {y for y in self.target_list if y != x and (
                y not in best or (best[y][0] == cost and len(best[y][1]) < WITNESSES))}
            for p, members in parts:
                if not open_:
                    break
                for y in open_.difference(members):
                    if y not in original[p] and self.rack_ok(p, members, x, y):
                        offer(y, cost, p)
                        if len(best[y][1]) >= WITNESSES or best[y][0] < cost:
                            open_.discard(y)
        return best

    def apply(self, path: Sequence[tuple[int, int, list[int]]]) -> int | None:
        overlay: dict[int, list[int]] = {}
        chosen: list[tuple[int, int, int]] = []
        for k, (x, y, witnesses) in enumerate(path):
            for p in witnesses:
                members = overlay.get(p) or list(self.members(p))
                if x in members and y not in members and self.rack_ok(p, members, x, y):
                    members = list(members)
                    members[members.index(x)] = y
                    overlay[p] = members
                    chosen.append((p, x, y))
                    break
            else:
                return k
        for p, x, y in chosen:
            self.move(p, x, y)
        return None


def _refresh(heap: list[tuple[int, int]], left: int, b: int) -> None:
    """Put the top of a heap of ``(-room, broker)`` back with ``left`` room, or drop it."""
    if left > 0:
        heapq.heapreplace(heap, (-left, b))
    else:
        heapq.heappop(heap)


def replica_counts(replicas: Sequence[Replicas]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for members in replicas:
        for b in members:
            counts[b] = counts.get(b, 0) + 1
    return counts
