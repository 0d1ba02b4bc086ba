"""Replica copies in flight and the bandwidth they share: the sandbox's model of data. Pure.

A new replica of a partition copies the partition's bytes from the leader. Every broker can
send ``bandwidth`` bytes/s and receive as many; the copies leaving a broker share its outbound
bandwidth equally and the copies arriving share its inbound bandwidth. A copy throttled on a
side (its ``p:b`` entry in the topic's throttled-replica list, spec section 5) also shares that
broker's throttle rate with the other throttled copies there - Kafka's throttle is a quota per
broker, not per partition. A copy runs at the smaller of its two shares.

Time is simulated and exact: rates change only when a copy starts or finishes or a throttle
changes, so :meth:`Transfers.advance` replays every finish in order, each freeing bandwidth for
the copies that shared a broker with it. Copies with the same leader, follower and throttle
flags always run at the same rate, so they move together in a *lane* that counts the bytes each
of its copies has copied since the lane began: a rate change costs one update per lane, not per
copy, which keeps a 100,000-partition rehearsal fast.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field

Side = tuple[int, str]
"""A broker and a direction: (broker, "out") sends, (broker, "in") receives."""

Limit = Callable[[Side], float | None]
"""A side's throttle rate in bytes/s, or None when it has none."""

LaneKey = tuple[int, int, bool, bool]


@dataclass
class Copy:
    """One replica being copied: ``size`` bytes from ``leader`` to ``follower``; ``throttled``
    says on which sides its replica is listed as throttled."""

    key: Hashable
    size: float
    leader: int
    follower: int
    throttled_out: bool
    throttled_in: bool
    copied_before: float = 0.0
    """Bytes it had copied before it joined its lane (a throttle change moves it to another)."""
    start: float = 0.0
    """Bytes its lane had copied per copy when this copy joined it."""
    order: int = 0

    @property
    def end(self) -> float:
        """Its lane's bytes per copy when this copy is done."""
        return self.start + self.size - self.copied_before

    @property
    def lane(self) -> LaneKey:
        return self.leader, self.follower, self.throttled_out, self.throttled_in


@dataclass
class _Lane:
    """Copies that always share one rate; ``copied`` counts bytes per copy since the lane
    began, as of ``since``."""

    key: LaneKey
    rate: float = 0.0
    since: float = 0.0
    copied: float = 0.0
    version: int = 0
    members: int = 0
    ends: list[tuple[float, int, Hashable]] = field(default_factory=list)
    """(lane bytes at which a copy is done, order, key); stale entries are skipped."""

    @property
    def sides(self) -> tuple[Side, Side]:
        return (self.key[0], "out"), (self.key[1], "in")


class Transfers:
    """Every copy in flight, at most ``bandwidth`` bytes/s per broker and direction, throttled
    where ``limit`` says."""

    def __init__(self, bandwidth: float, limit: Limit = lambda side: None) -> None:
        if bandwidth <= 0:
            raise ValueError("bandwidth must be positive")
        self._bandwidth = bandwidth
        self._limit = limit
        self._copies: dict[Hashable, Copy] = {}
        self._lanes: dict[LaneKey, _Lane] = {}
        self._on: dict[Side, set[LaneKey]] = {}
        self._count: dict[Side, int] = {}
        self._throttled: dict[Side, int] = {}
        self._heap: list[tuple[float, int, LaneKey]] = []
        self._order = itertools.count()
        self.finished: dict[Hashable, float] = {}
        """Copies done, and when; :meth:`cancel` forgets them."""

    def __contains__(self, key: Hashable) -> bool:
        return key in self._copies

    def start(self, copies: Iterable[Copy], now: float) -> None:
        """Begin ``copies`` at ``now`` (a zero-size copy is done at once)."""
        touched: set[LaneKey] = set()
        for copy in copies:
            if copy.size <= 0:
                self.finished[copy.key] = now
                continue
            lane = self._lanes.get(copy.lane)
            if lane is None:
                lane = self._lanes[copy.lane] = _Lane(copy.lane, since=now)
                for side in lane.sides:
                    self._on.setdefault(side, set()).add(lane.key)
            touched |= self._sharing(lane.sides)
            self._join(copy, lane, now)
        self._retime(touched, now)

    def cancel(self, key: Hashable, now: float) -> None:
        """Forget a copy, running or finished (its partition was re-targeted or is done)."""
        self.finished.pop(key, None)
        copy = self._copies.pop(key, None)
        if copy is not None:
            lane = self._lanes[copy.lane]
            touched = self._sharing(lane.sides)
            self._settle(touched, now)
            self._leave(lane, copy)
            self._retime(touched, now)

    def retune(self, now: float, throttled: Callable[[Copy], tuple[bool, bool]]) -> None:
        """Throttles changed: every copy's sides and rate again from ``now``."""
        self._settle(self._lanes, now)
        copies = list(self._copies.values())
        for copy in copies:
            copy.copied_before += self._lanes[copy.lane].copied - copy.start
            copy.throttled_out, copy.throttled_in = throttled(copy)
        self._copies.clear()
        self._lanes.clear()
        self._on.clear()
        self._count.clear()
        self._throttled.clear()
        self._heap.clear()
        self.start(copies, now)

    def advance(self, now: float) -> None:
        """Replay every finish up to ``now`` in order; finished copies go to ``finished``."""
        while self._heap:
            at, version, key = self._heap[0]
            lane = self._lanes.get(key)
            if lane is None or lane.version != version:
                heapq.heappop(self._heap)
                continue
            if at > now:
                return
            heapq.heappop(self._heap)
            touched = self._sharing(lane.sides)
            self._settle(touched, at)
            while lane.ends and lane.ends[0][0] <= lane.copied + 1.0:
                _, order, copy_key = heapq.heappop(lane.ends)
                copy = self._copies.get(copy_key)
                if copy is not None and copy.order == order:
                    del self._copies[copy_key]
                    self._leave(lane, copy)
                    self.finished[copy_key] = at
            self._retime(touched, at)

    def next_finish(self) -> float | None:
        """When the next copy finishes at today's rates (None: none will)."""
        while self._heap:
            at, version, key = self._heap[0]
            lane = self._lanes.get(key)
            if lane is not None and lane.version == version:
                return at
            heapq.heappop(self._heap)
        return None

    def finish_time(self, key: Hashable) -> float | None:
        """When ``key`` finishes (or finished) at today's rates; None for a copy not known."""
        if key in self.finished:
            return self.finished[key]
        copy = self._copies.get(key)
        if copy is None:
            return None
        lane = self._lanes[copy.lane]
        left = copy.end - lane.copied
        return float("inf") if lane.rate <= 0 else lane.since + max(0.0, left) / lane.rate

    def progress(self, key: Hashable, now: float) -> tuple[float, float, float] | None:
        """(bytes copied, size, rate) of a copy in flight at ``now``."""
        copy = self._copies.get(key)
        if copy is None:
            return None
        lane = self._lanes[copy.lane]
        copied = copy.copied_before + lane.copied + lane.rate * (now - lane.since) - copy.start
        return min(copy.size, copied), copy.size, lane.rate

    # --- internals ------------------------------------------------------------------------------

    def _join(self, copy: Copy, lane: _Lane, now: float) -> None:
        self._settle([lane.key], now)
        copy.start = lane.copied
        copy.order = next(self._order)
        self._copies[copy.key] = copy
        heapq.heappush(lane.ends, (copy.end, copy.order, copy.key))
        lane.members += 1
        for side, flag in zip(lane.sides, lane.key[2:], strict=True):
            self._count[side] = self._count.get(side, 0) + 1
            self._throttled[side] = self._throttled.get(side, 0) + flag

    def _leave(self, lane: _Lane, copy: Copy) -> None:
        lane.members -= 1
        for side, flag in zip(lane.sides, lane.key[2:], strict=True):
            self._count[side] -= 1
            self._throttled[side] -= flag
        if not lane.members:
            del self._lanes[lane.key]
            for side in lane.sides:
                self._on[side].discard(lane.key)

    def _sharing(self, sides: Iterable[Side]) -> set[LaneKey]:
        return {key for side in sides for key in self._on.get(side, ())}

    def _settle(self, keys: Iterable[LaneKey], now: float) -> None:
        """Bring each lane's bytes up to ``now`` at its current rate, before a rate changes."""
        for key in keys:
            lane = self._lanes.get(key)
            if lane is not None:
                lane.copied += lane.rate * (now - lane.since)
                lane.since = now

    def _share(self, side: Side, throttled: bool) -> float:
        share = self._bandwidth / self._count[side]
        limit = self._limit(side) if throttled else None
        if limit is not None:
            share = min(share, limit / self._throttled[side])
        return share

    def _retime(self, keys: Iterable[LaneKey], now: float) -> None:
        """New rates for ``keys`` and when each lane's next copy ends. The hot loop of a
        rehearsal (once per lane sharing a broker with a copy that starts or ends)."""
        lanes, copies, heap = self._lanes, self._copies, self._heap
        for key in keys:
            lane = lanes.get(key)
            if lane is None:
                continue
            lane.copied += lane.rate * (now - lane.since)
            lane.since = now
            leader, follower, throttled_out, throttled_in = key
            rate = min(self._share((leader, "out"), throttled_out),
                       self._share((follower, "in"), throttled_in))
            lane.rate = rate
            lane.version += 1
            ends = lane.ends
            while ends:
                end, order, copy_key = ends[0]
                copy = copies.get(copy_key)
                if copy is not None and copy.order == order:
                    heapq.heappush(heap, (now + max(0.0, end - lane.copied) / rate,
                                          lane.version, key))
                    break
                heapq.heappop(ends)
