"""Which replicas move, and where: the fewest moves that meet a replica quota. Pure.

The search is :func:`kadmin.balance.flow.solve`; this module is the replica problem it solves.
A hop ``x -> y`` replaces broker ``x`` by ``y`` in one partition, at the same position in the
replica list (so a moved leader's replacement is the new preferred leader until leaders are
balanced). A hop is allowed when ``y`` is a target broker not yet in the partition and, with
racks, when the partition keeps at least as many distinct racks as it had at the start.

Among the hops of equal cost the direct phase prefers, so that each topic stays spread over the
brokers: taking a replica from a topic ``x`` holds several of, giving it to a broker that holds
the fewest replicas of that topic, moving followers before leaders, and filling the taker with
the most room first (which also keeps the tail short). With racks of unequal size balanced as
one cluster, the units that must change rack go first (:meth:`_ReplicaProblem.cross`), through
the few partitions that allow it, and every other move stays inside its rack.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

from kadmin.balance.flow import Ledger, solve
from kadmin.balance.racks import racks_kept
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Quota
from kadmin.balance.topics import even_out_topics
from kadmin.model import Replicas

WITNESSES = 2
"""Partitions kept per hop of the search: a spare lets a path that uses one partition twice
pick another instead of being banned."""

RACK_WITNESSES = 64
"""Partitions kept per hop with racks: few partitions allow a hop between two racks (most
would lose a rack), so the units that must change rack all travel through those hops and the
hops that lead to them, and a search moves at most this many through each (balancing 50,000
partitions across racks of unequal size took 381 searches and 44 s with 2, 14 and 2.7 s with
64)."""

CHUNK = 1024
"""Partitions of a giver's queue turned into Python ints at a time (:meth:`_candidates`)."""

SCAN = 8
"""Takers the direct phase weighs for one replica once it has found a valid one: enough to find
one without the topic among the brokers with the most room, without scanning every broker."""


@dataclass(frozen=True)
class Moved:
    """A replica plan: the lists that change, by partition index, and what it leaves unmet."""

    final: dict[int, Replicas]
    pending: int
    """Units of the quota not met (0 unless racks or partitions as wide as the broker list
    forbid it)."""
    worst: tuple[int, int] | None
    """With ``even_topics`` and nothing pending, the worst topic spread over the targets once
    ``final`` is made and the first topic at it (by index), as
    :func:`kadmin.balance.evenness.worst_topic` counts them, from the counts kept anyway."""


def move_replicas(table: PartitionTable, targets: Collection[int], quota: Quota,
                  rack_of: Mapping[int, str] | None = None, *, single_copies: bool = False,
                  even_topics: bool = True, within_racks: bool = False, enough: int = 1
                  ) -> tuple[dict[int, Replicas], int]:
    """The replica lists that change, by partition index, and how many units of the quota could
    not be met (:func:`plan_replicas` without the worst topic)."""
    moved = plan_replicas(table, targets, quota, rack_of, single_copies=single_copies,
                          even_topics=even_topics, within_racks=within_racks, enough=enough)
    return moved.final, moved.pending


def plan_replicas(table: PartitionTable, targets: Collection[int], quota: Quota,
                  rack_of: Mapping[int, str] | None = None, *, single_copies: bool = False,
                  even_topics: bool = True, within_racks: bool = False, enough: int = 1
                  ) -> Moved:
    """The fewest moves that meet ``quota``: the replica lists that change and how many units
    could not be met.

    ``single_copies`` meets only units that cost one copy each (no chain of moves through a
    third broker), so that moves equal the units met; the rest stay unmet. Without
    ``even_topics`` no topic is looked at: the same number of moves, found faster, each topic
    left as even as spreading every giver's moves over its partitions makes it.
    ``within_racks``: the quota balances each rack on its own (racks of unequal size), so the
    direct phase keeps each move inside its rack (the search still weighs every hop).
    ``enough``: a worst topic spread the topic search need not go below (a lower bound)."""
    problem = _ReplicaProblem(table, targets, quota, rack_of, even_topics, within_racks)
    solve(problem, cost=1, limit=1 if single_copies else None)
    final = problem.final(enough)
    return Moved(final, problem.ledger.pending, problem.worst)


def move_across(table: PartitionTable, targets: Collection[int], quota: Quota,
                rack_of: Mapping[int, str], flow: Mapping[str | None, int], *,
                even_topics: bool = True, enough: int = 1) -> Moved | None:
    """Racks of unequal size balanced as one cluster at the rack-free lower bound: the replica
    plan (nothing pending), or None where this way cannot reach it (the caller then searches).

    ``quota`` leads to one end state (no spare unit: :func:`kadmin.balance.racks.toward`) and
    ``flow`` is what each rack sends to the others to get there
    (:func:`kadmin.balance.racks.rack_ends`). The few partitions that may change rack carry
    those units first, one move each (:meth:`_ReplicaProblem.cross`); every other unit then
    stays inside its rack, where no move can cost a partition a rack, by the direct phase and,
    for a tail, the search limited to single copies. Every move takes a unit from a broker
    that must give to one that must take, so the moves are the quota's units: the rack-free
    bound when the end state is one of the fewest moves, which no rack-aware plan beats.
    ``enough``: as for :func:`move_replicas`."""
    problem = _ReplicaProblem(table, targets, quota, rack_of, even_topics, True)
    if not problem.cross(flow):
        return None
    solve(problem, cost=1, limit=1)
    if problem.ledger.pending:
        return None
    final = problem.final(enough)
    return Moved(final, 0, problem.worst)


def leader_kept(original: Replicas, members: list[int]) -> Replicas:
    """``members`` with the partition's leader of today first when it stays. A chain of hops can
    move a partition's leader to another position (``x -> c`` then ``c -> y`` in the same
    partition); the leader search must start from a state where no leader changed that need
    not have, or handing it back would cost less than nothing (a negative cycle)."""
    leader = original[0] if original else None
    if leader is not None and members[0] != leader and leader in members:
        i = members.index(leader)
        members = list(members)
        members[0], members[i] = members[i], members[0]
    return tuple(members)


class _ReplicaProblem:
    """The state of one solve: replica lists changed so far, and indexes over them."""

    def __init__(self, table: PartitionTable, targets: Collection[int], quota: Quota,
                 rack_of: Mapping[int, str] | None, even_topics: bool = True,
                 within_racks: bool = False) -> None:
        self.even_topics = even_topics
        self.within_racks = within_racks
        """The direct phase keeps each move inside its rack first (the quota balances each
        rack on its own, or the units across racks were moved already): :meth:`direct`."""
        self.original = table.replicas
        self.topic_of = table.topic_of
        self.targets = frozenset(targets)
        self.target_list = sorted(self.targets)
        self.rack_of = rack_of
        self.served = len({rack_of[b] for b in self.targets if b in rack_of}) if rack_of else 0
        """Racks with a target broker: a partition on more racks (one with no target left,
        its brokers drained) need keep only this many (:meth:`kept`)."""
        self.ledger = Ledger.of(quota)
        self.current: dict[int, list[int]] = {}
        self.holders: dict[int, list[int]] = {}
        """Partitions per broker; stale entries (moved away since) are skipped on reading."""
        self.topic_count: list[dict[int, int]] = []
        """Per topic, replicas per broker (C counts a topic's run of the table at once)."""
        self.topic_share: list[int] = []
        """Replicas of each topic: its fair share of one broker is this over the target count."""
        original, topic_of = self.original, self.topic_of
        start = 0
        while even_topics and start < len(original):
            end = bisect_right(topic_of, topic_of[start], start)
            count = Counter(chain.from_iterable(original[start:end]))
            self.topic_count.extend([{}] * (topic_of[start] - len(self.topic_count)))
            self.topic_count.append(count)
            start = end
        if even_topics:
            self.topic_count.extend({} for _ in range(len(table.topics) - len(self.topic_count)))
        self.topic_share = [sum(c.values()) for c in self.topic_count]
        holders = self.holders
        for i, replicas in enumerate(original):
            for b in replicas:
                held = holders.get(b)
                if held is None:
                    holders[b] = [i]
                else:
                    held.append(i)
        self.rank_scale = 2 * (max(self.topic_share, default=0) + 1)
        """Ranks of candidates pack (excess, count held, follower) in one int: a count held
        is at most the topic's replicas."""
        self.queues: dict[int, Iterator[int]] = {}
        self.touched: set[int] = set()
        self.received = [0] * len(self.topic_count)
        """Replicas of each topic moved to a broker so far."""
        self.taker_count = max(1, len(set(quota.take) | set(quota.spare_take)))
        self.raised: list[int] = []
        """Topics whose ``received // taker_count`` grew, in turn: each lowers the topic's rank
        in every giver's queue (:meth:`_candidates`)."""
        self.gave_outside: dict[int, list[int]] = {}
        """Per giver, the topics of the replicas it gave other than through its queue."""
        self.left: dict[int, list[int]] = {}
        """Per broker, the partitions it gave other than through its queue: stale in
        :attr:`holders` when its queue is built."""
        if even_topics:
            try:
                import numpy as np
            except ImportError:  # a Spark executor without numpy: sorted in pure Python
                pass
            else:
                self.topic_array = np.array(self.topic_of, dtype=np.int64)
                self.leader_array = np.fromiter(map(itemgetter(0), original), np.int64,
                                                len(original))
                self.share_array = np.array(self.topic_share, dtype=np.int64)
        self.worst: tuple[int, int] | None = None
        """Set by :meth:`final` (:attr:`Moved.worst`)."""
        self.gained: set[int] = set()
        self.lost: set[int] = set()
        """While no broker is in both, moves equal the sum of what brokers gained, so every
        further unit costs at least one copy (see :meth:`cheapest`)."""

    def final(self, enough: int = 1) -> dict[int, Replicas]:
        """The replica lists that changed, topics evened out among moves of the same count
        when ``even_topics`` (down to a worst topic spread of ``enough``, a lower bound), which
        also sets :attr:`worst` when nothing is pending."""
        if self.even_topics:
            spreads = even_out_topics(self.original, self.current, self.topic_of,
                                      self.topic_count, self.targets, self.rack_ok, enough)
            if spreads and not self.ledger.pending:  # only targets hold replicas: as counted
                worst = max(spreads)
                self.worst = worst, spreads.index(worst)
        return {i: leader_kept(self.original[i], r) for i, r in self.current.items()}

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
        return len(others) >= self.kept(p)

    def kept(self, p: int) -> int:
        """The distinct racks ``p`` must keep: as many as it had, or every rack with a target
        when it had more (the rule :func:`kadmin.balance.racks.rack_level` and the partition
        program state; keeping a rack with no target left is impossible)."""
        return racks_kept(self.original[p], self.rack_of or {}, self.served)

    def move(self, p: int, x: int, y: int, queued: bool = False) -> None:
        """Replace ``x`` by ``y`` in ``p``; ``queued``: ``p`` came from ``x``'s queue
        (:meth:`_order`), which foresaw it."""
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
        if not self.even_topics:
            return
        t = self.topic_of[p]
        count = self.topic_count[t]
        count[x] -= 1
        count[y] = count.get(y, 0) + 1
        got = self.received[t] = self.received[t] + 1
        if not got % self.taker_count:
            self.raised.append(t)
        if not queued:
            self.left.setdefault(x, []).append(p)
            outside = self.gave_outside.get(x)
            if outside is not None:
                outside.append(t)

    def cheapest(self, exhausted: int | None) -> int | None:
        """A hop cost no path can beat now: 1 while no broker both gained and lost replicas
        (each unit a broker takes is then a copy more than the plan has), else unknown."""
        return None if self.gained & self.lost else 1

    # --- units across racks --------------------------------------------------------------------

    def cross(self, flow: Mapping[str | None, int]) -> bool:
        """Move the units each rack sends to the others (``flow``: negative for a rack that
        receives), one move each from a giver of a sending rack to a taker of a receiving one,
        through partitions that lose no rack: the givers with the most to give first, each
        through the partitions it holds (topics in turn with ``even_topics``), to the
        receiving rack's taker not in the partition that holds the fewest replicas of its
        topic (with ``even_topics``), the takers in turn (most room first at the start). True
        when every flow was met.

        A greedy choice: a rack's flow may find no partition left that allows it where
        another order would have (the caller then searches), but the few partitions that
        allow a move between two racks are the ones it looks for."""
        rack_of, ledger = self.rack_of or {}, self.ledger
        can_give, can_take = ledger.can_give, ledger.can_take
        send = {r: n for r, n in flow.items() if n > 0}
        need = {r: -n for r, n in flow.items() if n < 0}
        takers: dict[str | None, list[int]] = {r: [] for r in need}
        for y in sorted(ledger.takers(), key=lambda b: (-can_take(b), b)):
            if need.get(rack_of.get(y)):
                takers[rack_of.get(y)].append(y)
        current, original, barred_of = self.current, self.original, self._barred
        counts, topic_of = self.topic_count, self.topic_of
        for x in sorted(ledger.givers(), key=lambda b: (-can_give(b), b)):
            rack = rack_of.get(x)
            if not send.get(rack):
                continue
            order = self._candidates(x) if self.even_topics else self.holders.get(x, ())
            """Topics in turn when they count (a fresh queue: the direct phase keeps its own),
            so that a rack of one new broker gets its share of every topic, not the first
            topics whole; else as held (grows for takers only: x is none)."""
            for p in order:
                members = current.get(p) or original[p]
                if x not in members:
                    continue
                barred = barred_of(p, members, x)
                count = counts[topic_of[p]] if counts else _NONE
                for to, n in need.items():
                    if n and to not in barred:
                        group = takers[to]
                        y = min((y for y in group if y not in members),
                                key=lambda y: count.get(y, 0), default=-1)
                        if y >= 0:
                            break
                else:
                    continue
                self.move(p, x, y)
                ledger.gave(x)
                ledger.took(y)
                group.remove(y)
                if can_take(y):
                    group.append(y)  # the others first next time: moves spread over takers
                send[rack] -= 1
                need[to] -= 1
                if not send[rack] or not can_give(x):
                    break
        return not any(send.values()) and not any(need.values())

    # --- direct phase --------------------------------------------------------------------------

    def direct(self, cost: int) -> int:
        """Single hops of cost 1 (a fresh copy) from givers, the most to give first, each in
        turn until it is done, to takers: each giver's partitions in :meth:`_order`, each to
        the taker with the most room that fits (:meth:`_taker` when it does not). The hot loop
        of a rebalance (one pass per replica moved), so it binds what it uses."""
        if cost != 1:
            return 0
        ledger = self.ledger
        can_give, can_take = ledger.can_give, ledger.can_take
        current, original, order = self.current, self.original, self._order
        counts, topic_of, rack_of = self.topic_count, self.topic_of, self.rack_of or {}
        rack_ok, racks = self.rack_ok, self.rack_of is not None
        heaps = {key: [(-can_take(y), y) for y in group]
                 for key, group in self._takers_by_rack().items()}
        for heap in heaps.values():
            heapq.heapify(heap)
        moved = 0
        for x in sorted(ledger.givers(), key=lambda b: (-can_give(b), b)):
            takers = heaps.get(self._rack_key(x)) or heaps.get(_ANY)
            elsewhere = heaps.get(_ANY) if not self.within_racks and racks else None
            """With racks balanced together, a taker in another rack when none of the giver's
            own fits (most partitions would lose a rack there: scanned last)."""
            if not takers:
                continue
            own = rack_of.get(x)
            for p in order(x):
                members = current.get(p) or original[p]
                if x not in members:
                    continue
                while takers:  # the taker with the most room, when it fits: the common case
                    room, top = takers[0]
                    free = can_take(top)
                    if free == -room:
                        break
                    _refresh(takers, free, top)
                else:
                    break
                if (top not in members and (not counts or not counts[topic_of[p]].get(top))
                        and (not racks or rack_of.get(top) == own
                             or rack_ok(p, members, x, top))):
                    _refresh(takers, free - 1, top)
                    y = top
                else:
                    found = self._taker(p, members, x, takers)
                    if found is None and elsewhere and elsewhere is not takers:
                        found = self._taker(p, members, x, elsewhere)
                    if found is None:
                        continue
                    y = found
                self.move(p, x, y, True)
                ledger.gave(x)
                ledger.took(y)
                moved += 1
                if not can_give(x):
                    break
        return moved

    def _order(self, x: int) -> Iterator[int]:
        """The partitions ``x`` gives, in the order it should: ranked by topic
        (:meth:`_candidates`, one queue per giver for the whole solve) with ``even_topics``,
        else spread evenly over those it holds (:meth:`_spread`, the fastest)."""
        if not self.even_topics:
            return self._spread(x, self.ledger.can_give(x))
        queue = self.queues.get(x)
        if queue is None:
            queue = self.queues[x] = self._candidates(x)
        return queue

    def _rack_key(self, b: int) -> str | None:
        """The group of takers ``b`` gives to first in the direct phase: its rack (when each
        rack is balanced on its own, only its rack: a move across racks there must be undone
        by a chain later), else any taker."""
        return _ANY if self.rack_of is None else self.rack_of.get(b, _ANY)

    def _takers_by_rack(self) -> dict[str | None, list[int]]:
        """The takers of the current mode by :meth:`_rack_key`, and all of them under ``_ANY``
        (for a giver whose rack has no taker group, a drained broker of a rack with no target
        left, and for moves across racks balanced together)."""
        takers = self.ledger.takers()
        groups: dict[str | None, list[int]] = {_ANY: takers}
        if self.rack_of is not None:
            for y in takers:
                groups.setdefault(self._rack_key(y), []).append(y)
            groups[_ANY] = list(takers)
        return groups

    def _spread(self, x: int, want: int) -> Iterator[int]:
        """``x``'s partitions for it to give ``want`` of: evenly spaced over the partitions it
        follows in (then over those it leads, if it must give more), so that the moves spread
        over its topics; then all of them, for the givers whose first choices found no taker."""
        mine = self.holders.get(x, [])  # a giver never takes: stale only where it gave
        original = self.original
        followers = [p for p in mine if original[p][0] != x]
        leaders = [p for p in mine if original[p][0] == x]
        for pool, wanted in ((followers, want), (leaders, want - len(followers))):
            size = len(pool)
            if wanted >= size:
                yield from pool
            elif wanted > 0:
                yield from (pool[i * size // wanted] for i in range(wanted))
        yield from followers
        yield from leaders

    def _sorted_by_rank(self, x: int, mine: list[int], stale: list[int] | None, n: int,
                        k: int, scale: int) -> Iterator[tuple[int, int, int]]:
        """(partition, topic, rank) of ``x``'s partitions (less ``stale``) in the order of
        :meth:`_candidates`' sort: by topic, followers first, then by index within a topic;
        the ``j``-th of a topic ranked ``rank(held - j)``; then by rank, highest first, ties
        as :meth:`_candidates` says. numpy where it is installed (once per giver); in pure
        Python, the same keys and order, on Spark executors that lack numpy."""
        try:
            import numpy as np
        except ImportError:
            yield from self._sorted_by_rank_in_python(x, mine, stale, n, k, scale)
            return
        given = self.received.__getitem__
        parts = np.array(mine, dtype=np.int64)
        if stale:
            parts = parts[~np.isin(parts, stale)]
        if not len(parts):
            return
        topic = self.topic_array[parts]
        order = np.lexsort((parts, self.leader_array[parts] == x, topic))
        parts, topic = parts[order], topic[order]
        first = np.flatnonzero(np.r_[True, topic[1:] != topic[:-1]])
        size = np.diff(np.r_[first, len(topic)])
        got = np.fromiter(map(given, topic[first].tolist()), np.int64, len(first))
        turn = np.arange(len(topic)) - np.repeat(first, size)
        left = np.repeat(size, size) - turn
        key = ((n * (left - np.repeat(got // k, size)) - self.share_array[topic]) * scale
               + 2 * left)
        odd = turn % 2 == 1
        order = np.lexsort((np.where(odd, -topic, topic), np.where(odd, turn, -turn), ~odd,
                            -key))
        parts, topic, key = parts[order], topic[order], key[order]
        yield from chain.from_iterable(
            zip(parts[s:s + CHUNK].tolist(), topic[s:s + CHUNK].tolist(),
                key[s:s + CHUNK].tolist(), strict=True) for s in range(0, len(parts), CHUNK))
        """The order as Python ints a chunk at a time: a queue lives as long as the solve,
        and all of them as lists would hold three int objects per replica the givers have."""

    def _sorted_by_rank_in_python(self, x: int, mine: list[int], stale: list[int] | None,
                                  n: int, k: int, scale: int
                                  ) -> Iterator[tuple[int, int, int]]:
        """:meth:`_sorted_by_rank` without numpy: the same keys, sorted by Python (stable,
        as numpy's lexsort)."""
        topic_of, original, shares, received = (self.topic_of, self.original,
                                                 self.topic_share, self.received)
        dropped = set(stale or ())
        parts = sorted((p for p in mine if p not in dropped),
                       key=lambda p: (topic_of[p], original[p][0] == x, p))
        rows: list[tuple[int, int, int, int, int]] = []
        """(partition, topic, rank, turn within its topic, position)"""
        start = 0
        while start < len(parts):
            t = topic_of[parts[start]]
            end = start
            while end < len(parts) and topic_of[parts[end]] == t:
                end += 1
            size, got = end - start, received[t] // k
            for turn in range(size):
                left = size - turn
                rows.append((parts[start + turn], t,
                             (n * (left - got) - shares[t]) * scale + 2 * left, turn,
                             len(rows)))
            start = end
        rows.sort(key=lambda r: (-r[2], r[3] % 2 == 0, r[3] if r[3] % 2 else -r[3],
                                 -r[1] if r[3] % 2 else r[1], r[4]))
        for p, t, key, _, _ in rows:
            yield p, t, key

    def _candidates(self, x: int) -> Iterator[int]:
        """``x``'s partitions in the order it should give them up: first the topic held most
        above its fair share on ``x`` less what each taker received of it yet, then the one
        ``x`` holds most of, followers before leaders.

        A topic's rank falls by one step with each replica of it ``x`` gives, so the order is
        known in advance: the ``j``-th replica of a topic (followers first, then by index)
        comes when the topic is ranked ``rank(held - j)``, and one sort over ``x``'s
        partitions by that rank (numpy, once per giver) gives the whole order: concentrations
        worn down evenly, a replica of each topic in turn, so a single new broker gets its
        share of every topic. Among topics of equal rank the sort takes them as a last-in,
        first-out list of each rank would (the topics that came down from the ranks above
        first, the way they went, alternately): at 50,000 partitions over few takers a plain
        topic order left a topic at spread 4 where this one reaches the bound, 3.

        What the sort cannot foresee changes a rank: a taker receiving a ``k``-th replica of a
        topic (:attr:`raised`), ``x`` giving one outside this queue (:attr:`gave_outside`), or
        a partition yielded and not given (no taker fitted). Those topics are ranked as they go
        from then on: their partitions left in a list, the topic in a heap by its rank, checked
        again when its turn comes and put back if it fell. A preference only: the number of
        moves does not depend on it.
        """
        counts, shares, scale = self.topic_count, self.topic_share, self.rank_scale
        received, n, k = self.received, len(self.targets) or 1, self.taker_count
        given = received.__getitem__

        def rank(t: int) -> int:
            """Excess over the fair share less what each taker received of the topic, then
            the count held: one int, so ranks compare in C."""
            held = counts[t].get(x, 0)
            return (n * (held - given(t) // k) - shares[t]) * scale + 2 * held

        mine = self.holders.get(x, [])
        if x in self.gained:  # what it gave since is stale, what it took back listed twice
            members = self.members
            mine = [p for p in dict.fromkeys(mine) if x in members(p)]
        stale = self.left.get(x) if x not in self.gained else None  # gave outside a queue
        items = self._sorted_by_rank(x, mine, stale, n, k, scale)
        raised, outside = self.raised, self.gave_outside.setdefault(x, [])
        seen, seen_outside = len(raised), len(outside)
        members, topic_of, original = self.members, self.topic_of, self.original
        runs: dict[int, list[int]] = {}
        """The topics ranked as they go (as the sort could not foresee): their partitions
        left, popped from the end."""
        passed: set[int] = set()
        """Partitions yielded and not given (no taker fitted): still held, never again."""
        held_back: list[tuple[int, int]] = []
        """(-rank, topic) of the topics in ``runs``, checked again when their turn comes."""

        def ranked_as_they_go(t: int) -> None:
            if t in runs or not counts[t].get(x):
                return
            run = [q for q in range(bisect_left(topic_of, t), bisect_right(topic_of, t))
                   if q not in passed and x in members(q)]
            run.sort(key=lambda q: (original[q][0] != x, -q))  # followers first, in order
            runs[t] = run
            heapq.heappush(held_back, (-rank(t), t))

        upcoming = next(items, None)
        last = -1
        while True:
            if last >= 0 and x in members(last):  # not given: its topic's rank did not fall
                passed.add(last)
                ranked_as_they_go(topic_of[last])
            last = -1
            if len(raised) != seen or len(outside) != seen_outside:
                for t in chain(raised[seen:], outside[seen_outside:]):
                    ranked_as_they_go(t)
                seen, seen_outside = len(raised), len(outside)
            if held_back and (upcoming is None or -held_back[0][0] >= upcoming[2]):
                negative, t = held_back[0]
                now = rank(t)
                if now < -negative:
                    heapq.heapreplace(held_back, (-now, t))
                    continue
                run = runs[t]
                while run and x not in members(run[-1]):  # given outside this queue
                    run.pop()
                if not run:
                    heapq.heappop(held_back)
                    continue
                last = run.pop()
                yield last
                continue
            if upcoming is None:
                return
            p, t, _ = upcoming
            upcoming = next(items, None)
            if t not in runs:
                last = p
                yield p

    def _taker(self, p: int, members: Sequence[int], x: int, takers: list[tuple[int, int]]
               ) -> int | None:
        """The taker for ``p``'s replica on ``x``: fewest replicas of the topic, then the most
        room, then the lowest id, among the first valid takers in order of room. The taker with
        the most room, when it fits, is taken without a scan: the common case."""
        ledger = self.ledger
        count = self.topic_count[self.topic_of[p]] if self.topic_count else _NONE
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

        rack_of = self.rack_of
        kept = WITNESSES if rack_of is None else RACK_WITNESSES

        def offer(y: int, cost: int, p: int) -> None:
            entry = best.get(y)
            if entry is None or cost < entry[0]:
                best[y] = (cost, [p])
            elif cost == entry[0] and len(entry[1]) < kept:
                entry[1].append(p)

        for p, y, members in back:
            if self.rack_ok(p, members, x, y):
                offer(y, 0 - (x not in original[p]), p)
        for cost, parts in ((0, moved_in), (1, own)):
            open_ = {y for y in self.target_list if y != x and (
                y not in best or (best[y][0] == cost and len(best[y][1]) < kept))}
            by_rack: dict[str | None, set[int]] = {}
            """The brokers still open, by rack: with racks most hops out of a partition are
            barred for a whole rack at once (it would lose a rack), so a rack is skipped, not
            each of its brokers."""
            for y in sorted(open_):
                by_rack.setdefault(None if rack_of is None else rack_of.get(y), set()).add(y)
            for p, members in parts:
                if not by_rack:
                    break
                barred = self._barred(p, members, x)
                for rack in [r for r in by_rack if r not in barred]:
                    ys = by_rack[rack]
                    for y in ys.difference(members):
                        if y not in original[p]:
                            offer(y, cost, p)
                            if len(best[y][1]) >= kept or best[y][0] < cost:
                                ys.discard(y)
                    if not ys:
                        del by_rack[rack]
        return best

    def _barred(self, p: int, members: Sequence[int], x: int) -> Collection[str | None]:
        """The racks a broker replacing ``x`` in ``p`` may not come from (:meth:`rack_ok`
        for a whole rack): the partition's other racks, when without ``x``'s rack it would
        hold fewer racks than it had."""
        rack_of = self.rack_of
        if rack_of is None:
            return ()
        own = rack_of.get(x)
        others = {rack_of.get(b) for b in members if b != x}
        if len(others - {None}) >= self.kept(p):
            return ()
        others.discard(own)
        return others

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


_NONE: Mapping[int, int] = {}
"""No topic's counts: the taker choice without ``even_topics``."""

_ANY = "\x00any"
"""The key of every taker in :meth:`_ReplicaProblem._takers_by_rack` (no rack is named so)."""


def _refresh(heap: list[tuple[int, int]], left: int, b: int) -> None:
    """Put the top of a heap of ``(-room, broker)`` back with ``left`` room, or drop it. Most
    often it stays on top, and is then updated in place."""
    if left <= 0:
        heapq.heappop(heap)
        return
    item = (-left, b)
    if (len(heap) < 2 or item <= heap[1]) and (len(heap) < 3 or item <= heap[2]):
        heap[0] = item
    else:
        heapq.heapreplace(heap, item)


def replica_counts(replicas: Sequence[Replicas]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for members in replicas:
        for b in members:
            counts[b] = counts.get(b, 0) + 1
    return counts
