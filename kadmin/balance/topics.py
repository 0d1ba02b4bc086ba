"""Spreading each topic over the brokers, among the plans that move the fewest replicas. Pure.

The moves are fixed first and are optimal; which partitions make them is still free. Local
search on that freedom: while the worst spread topic ``W`` has a broker ``h`` holding the most
of it, and ``h`` gives a replica of another topic ``U`` to a broker ``y``, give a replica of
``W`` to ``y`` instead (or, on the side of the broker holding the least of ``W``, take one of
``W`` instead of ``U``). Every broker gives and takes as many replicas as before, so the moves
and the balance stay exactly as they were; a swap is made only if it lowers the worst spread of
the two topics. Bounded by the number of moves, and stopped once the worst spread is down to
``enough``: the lower bound every plan of these moves is held to
(:func:`kadmin.balance.spreads.least_spread`), below which no swap can go; a plan already there
is not searched at all (at a million partitions, building the search costs seconds).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from operator import countOf

from kadmin.model import Replicas

Slot = tuple[int, int]
"""(partition, position in its replica list)."""


def even_out_topics(original: Sequence[Replicas], current: dict[int, list[int]],
                    topic_of: Sequence[int], topic_count: Sequence[dict[int, int]],
                    targets: frozenset[int],
                    rack_ok: Callable[[int, Sequence[int], int, int], bool], enough: int = 1
                    ) -> list[int]:
    """Improve ``current`` (changed replica lists, position for position with ``original``) in
    place, keeping ``topic_count`` (per topic, replicas per broker) up to date, until the worst
    topic spread is at most ``enough`` (at least 1: a spread of 1 is the least there is
    whenever a topic's replicas do not divide evenly). Returns each topic's spread at the
    end (:func:`spread`)."""
    enough = max(1, enough)
    spreads = [spread(counts, len(targets)) for counts in topic_count]
    if max(spreads, default=0) <= enough:
        return spreads
    search = _Search(original, current, topic_of, topic_count, targets, rack_ok)
    search.run(2 * sum(map(len, search.outgoing.values())), enough, spreads)
    return [spread(counts, len(targets)) for counts in topic_count]


def spread(counts: dict[int, int], targets: int) -> int:
    """A topic's max minus min over the ``targets`` brokers, from its replicas per broker. Only
    targets hold replicas once every move is made (a broker given up has 0 left), so the counts
    need no filtering; a topic on fewer brokers than the targets has a minimum of 0. Mostly C
    calls: every topic is looked at."""
    values = counts.values()
    if not values:
        return 0
    held = len(values) - countOf(values, 0)
    low = min(v for v in values if v) if held >= targets else 0
    return max(values) - low


class _Search:
    def __init__(self, original: Sequence[Replicas], current: dict[int, list[int]],
                 topic_of: Sequence[int], topic_count: Sequence[dict[int, int]],
                 targets: frozenset[int],
                 rack_ok: Callable[[int, Sequence[int], int, int], bool]) -> None:
        self.original, self.current, self.topic_of = original, current, topic_of
        self.counts, self.targets, self.rack_ok = topic_count, targets, rack_ok
        self.outgoing: dict[int, dict[Slot, int]] = {}
        """Broker -> the slots it gives, and to whom."""
        self.incoming: dict[int, dict[Slot, int]] = {}
        """Broker -> the slots it takes, and from whom."""
        for slot, (a, b) in self.slots():
            self.outgoing.setdefault(a, {})[slot] = b
            self.incoming.setdefault(b, {})[slot] = a

    def slots(self) -> list[tuple[Slot, tuple[int, int]]]:
        return [((p, j), (a, b)) for p in sorted(self.current)
                for j, (a, b) in enumerate(zip(self.original[p], self.current[p], strict=True))
                if a != b]

    def spread(self, t: int) -> int:
        return spread(self.counts[t], len(self.targets))

    def run(self, budget: int, enough: int, spreads: Sequence[int]) -> None:
        """Swaps on the worst topic first (``spreads``: each topic's now) until every topic is
        within ``enough``, the worst cannot improve or ``budget`` swaps are made."""
        order = [(-s, t) for t, s in enumerate(spreads)]
        heapq.heapify(order)
        while order and budget > 0:
            key, t = order[0]
            now = -self.spread(t)
            if now != key:
                heapq.heapreplace(order, (now, t))
                continue
            if -key <= enough:
                return
            other = self._swap(t)
            if other is None:
                return  # the worst topic cannot improve: neither can the worst spread
            budget -= 1
            heapq.heapreplace(order, (-self.spread(t), t))
            heapq.heappush(order, (-self.spread(other), other))

    def _of_topic(self, t: int) -> range:
        """A topic's partitions: a run of the table, which is sorted by topic."""
        return range(bisect_left(self.topic_of, t), bisect_right(self.topic_of, t))

    def _swap(self, w: int) -> int | None:
        """One swap that lowers ``w``'s spread without raising another topic's to it; returns
        the other topic, or None when there is none."""
        counts, targets = self.counts[w], self.targets
        inside = {b: counts.get(b, 0) for b in targets}
        worst = self.spread(w)
        high = max(inside.values())
        for h in sorted(b for b, n in inside.items() if n == high):
            for slot, y in sorted(self.outgoing.get(h, {}).items()):
                other = self._try(w, worst, slot, h, y)
                if other is not None:
                    return other
        low = min(inside.values())
        if len([b for b in targets if counts.get(b, 0)]) == len(targets):
            for light in sorted(b for b, n in inside.items() if n == low):
                for slot, x in sorted(self.incoming.get(light, {}).items()):
                    other = self._try(w, worst, slot, x, light)
                    if other is not None:
                        return other
        return None

    def _try(self, w: int, worst: int, slot: Slot, giver: int, taker: int) -> int | None:
        """Replace the move of ``slot`` (``giver`` -> ``taker``, another topic) by a move of a
        partition of ``w`` from ``giver`` to ``taker``."""
        q, j = slot
        u = self.topic_of[q]
        if u == w:
            return None
        members_q = self.current[q]
        if giver in members_q or not self.rack_ok(q, members_q, taker, giver):
            return None
        for p in self._of_topic(w):
            members_p = self.current.get(p) or list(self.original[p])
            if giver not in members_p or taker in members_p:
                continue
            i = members_p.index(giver)
            if self.original[p][i] != giver or not self.rack_ok(p, members_p, giver, taker):
                continue
            if not self._better(w, u, worst, giver, taker):
                return None
            self._apply(q, j, taker, giver, p, i)
            return u
        return None

    def _better(self, w: int, u: int, worst: int, giver: int, taker: int) -> bool:
        cw, cu = self.counts[w], self.counts[u]
        cw[giver] -= 1
        cw[taker] = cw.get(taker, 0) + 1
        cu[giver] = cu.get(giver, 0) + 1
        cu[taker] -= 1
        better = max(self.spread(w), self.spread(u)) < worst
        cw[giver] += 1
        cw[taker] -= 1
        cu[giver] -= 1
        cu[taker] += 1
        return better

    def _apply(self, q: int, j: int, taker: int, giver: int, p: int, i: int) -> None:
        """Slot (q, j) goes back to ``giver``; slot (p, i) moves from ``giver`` to ``taker``."""
        self.current[q][j] = giver
        if self.current[q] == list(self.original[q]):
            del self.current[q]
        del self.outgoing[giver][(q, j)], self.incoming[taker][(q, j)]
        members = self.current.setdefault(p, list(self.original[p]))
        members[i] = taker
        self.outgoing.setdefault(giver, {})[(p, i)] = taker
        self.incoming.setdefault(taker, {})[(p, i)] = giver
        w, u = self.topic_of[p], self.topic_of[q]
        self.counts[w][giver] -= 1
        self.counts[w][taker] = self.counts[w].get(taker, 0) + 1
        self.counts[u][giver] = self.counts[u].get(giver, 0) + 1
        self.counts[u][taker] -= 1

