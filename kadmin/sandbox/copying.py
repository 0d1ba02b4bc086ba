"""Replica copies in flight and the bandwidth they share: the sandbox's model of data. Pure.

A new replica of a partition copies the partition's bytes from the leader. Every broker can
send ``bandwidth`` bytes/s and receive as many. A copy throttled on a side (its ``p:b`` entry in
the topic's throttled-replica list, docs/execution.md) also counts against that broker's throttle
rate on that side, together with every other copy throttled there: Kafka's throttle is a quota
per broker and direction (bytes/s over all its throttled replicas), not a rate per partition.
So each copy crosses two to four *resources* - its leader's outbound bandwidth, its follower's
inbound bandwidth, and the leader's and follower's throttles where it is throttled - and no
resource carries more than its capacity.

The copies share the resources **max-min fairly** (Bertsekas & Gallager, *Data Networks*, 2nd
ed., section 6.5.2), computed by **progressive filling** (water-filling): every copy's rate
rises together from zero; when a resource saturates, the copies crossing it freeze at the
current level; the others go on rising until every copy is frozen. The allocation is
work-conserving: every copy has a saturated *bottleneck* resource on which no copy runs faster,
so a broker idles part of its rate only when each of its copies is held back by a busier
resource on its other side - as a real broker fills its throttle while some throttled copy
through it can go faster. (An equal share by count, each copy at the smaller of its two shares,
is not: a broker that bounds a batch then idles whenever some of its copies also cross a broker
with more copies.)

Time is simulated and exact: rates change only when a copy starts or finishes or a throttle
changes, so :meth:`Transfers.advance` replays every finish in order and fills again after each.
Copies with the same leader, follower and throttle flags cross the same resources, so the
max-min fair allocation gives them the same rate: they move together in a *lane* that counts the
bytes each of its copies has copied since the lane began, and the filling works on lanes
weighted by their copies. A rate change costs one update per lane whose rate changed, not per
copy, which keeps a 100,000-partition rehearsal fast.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field

Side = tuple[int, str]
"""A broker and a direction: (broker, "out") sends, (broker, "in") receives."""

Limit = Callable[[Side], float | None]
"""A side's throttle rate in bytes/s, or None when it has none."""

Resource = tuple[int, str, bool]
"""A side's bandwidth (broker, direction, False) or its throttle (broker, direction, True)."""

LaneKey = tuple[int, int, bool, bool]

_DONE = 1.0
"""A copy within this many bytes of its end is done (rounding in the lane's byte count)."""


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


def resources(lane: LaneKey) -> tuple[Resource, ...]:
    """The resources a lane's copies cross: both bandwidths, and the throttles where flagged."""
    leader, follower, throttled_out, throttled_in = lane
    crossed: list[Resource] = [(leader, "out", False), (follower, "in", False)]
    if throttled_out:
        crossed.append((leader, "out", True))
    if throttled_in:
        crossed.append((follower, "in", True))
    return tuple(crossed)


@dataclass
class _Lane:
    """Copies that always share one rate; ``copied`` counts bytes per copy since the lane
    began, as of ``since``."""

    key: LaneKey
    resources: tuple[Resource, ...]
    rate: float = 0.0
    since: float = 0.0
    copied: float = 0.0
    version: int = 0
    due: float | None = None
    """When its next copy ends at its rate (None: never), the live entry in the heap."""
    members: int = 0
    ends: list[tuple[float, int, Hashable]] = field(default_factory=list)
    """(lane bytes at which a copy is done, order, key); stale entries are skipped."""

    def settle(self, now: float) -> None:
        """Bring the bytes up to ``now`` at the current rate, before the rate changes."""
        self.copied += self.rate * (now - self.since)
        self.since = now


class Transfers:
    """Every copy in flight, at most ``bandwidth`` bytes/s per broker and direction, throttled
    where ``limit`` says, shared max-min fairly."""

    def __init__(self, bandwidth: float, limit: Limit = lambda side: None) -> None:
        if bandwidth <= 0:
            raise ValueError("bandwidth must be positive")
        self._bandwidth = bandwidth
        self._limit = limit
        self._copies: dict[Hashable, Copy] = {}
        self._lanes: dict[LaneKey, _Lane] = {}
        self._through: dict[Resource, set[LaneKey]] = {}
        """The lanes crossing each resource."""
        self._crossing: dict[Resource, int] = {}
        """The copies crossing each resource."""
        self._dirty: set[LaneKey] = set()
        """Lanes whose next end changed (a copy joined or left) since they were scheduled."""
        self._heap: list[tuple[float, int, LaneKey]] = []
        self._order = itertools.count()
        self.finished: dict[Hashable, float] = {}
        """Copies done, and when; :meth:`cancel` forgets them."""

    def __contains__(self, key: Hashable) -> bool:
        return key in self._copies

    def start(self, copies: Iterable[Copy], now: float) -> None:
        """Begin ``copies`` at ``now`` (a zero-size copy is done at once)."""
        for copy in copies:
            if copy.size <= 0:
                self.finished[copy.key] = now
                continue
            lane = self._lanes.get(copy.lane)
            if lane is None:
                lane = self._lanes[copy.lane] = _Lane(copy.lane, resources(copy.lane), since=now)
                for resource in lane.resources:
                    self._through.setdefault(resource, set()).add(lane.key)
            self._join(copy, lane, now)
        self._reallocate(now)

    def cancel(self, key: Hashable, now: float) -> None:
        """Forget a copy, running or finished (its partition was re-targeted or is done)."""
        self.finished.pop(key, None)
        copy = self._copies.pop(key, None)
        if copy is not None:
            self._leave(self._lanes[copy.lane], copy)
            self._reallocate(now)

    def retune(self, now: float, throttled: Callable[[Copy], tuple[bool, bool]]) -> None:
        """Throttles changed: every copy's sides and rate again from ``now``."""
        copies = list(self._copies.values())
        for copy in copies:
            lane = self._lanes[copy.lane]
            lane.settle(now)
            copy.copied_before += lane.copied - copy.start
            copy.throttled_out, copy.throttled_in = throttled(copy)
        self._copies.clear()
        self._lanes.clear()
        self._through.clear()
        self._crossing.clear()
        self._dirty.clear()
        self._heap.clear()
        self.start(copies, now)

    def advance(self, now: float) -> None:
        """Replay every finish up to ``now`` in order; finished copies go to ``finished``."""
        while (at := self.next_finish()) is not None and at <= now:
            while self._heap and self._heap[0][0] <= at:  # every lane with a copy ending at `at`
                _, version, key = heapq.heappop(self._heap)
                lane = self._lanes.get(key)
                if lane is None or lane.version != version:
                    continue
                lane.settle(at)
                lane.due = None
                self._dirty.add(key)
                while lane.ends and lane.ends[0][0] <= lane.copied + _DONE:
                    _, order, copy_key = heapq.heappop(lane.ends)
                    copy = self._copies.get(copy_key)
                    if copy is not None and copy.order == order:
                        del self._copies[copy_key]
                        self._leave(lane, copy)
                        self.finished[copy_key] = at
            self._reallocate(at)

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
        lane.settle(now)
        copy.start = lane.copied
        copy.order = next(self._order)
        self._copies[copy.key] = copy
        heapq.heappush(lane.ends, (copy.end, copy.order, copy.key))
        lane.members += 1
        for resource in lane.resources:
            self._crossing[resource] = self._crossing.get(resource, 0) + 1
        self._dirty.add(lane.key)

    def _leave(self, lane: _Lane, copy: Copy) -> None:
        lane.members -= 1
        for resource in lane.resources:
            self._crossing[resource] -= 1
            if not self._crossing[resource]:
                del self._crossing[resource]
        if lane.members:
            self._dirty.add(lane.key)
        else:
            del self._lanes[lane.key]
            self._dirty.discard(lane.key)
            for resource in lane.resources:
                through = self._through[resource]
                through.discard(lane.key)
                if not through:
                    del self._through[resource]

    def _capacity(self, resource: Resource) -> float:
        broker, direction, throttle = resource
        if not throttle:
            return self._bandwidth
        limit = self._limit((broker, direction))
        return math.inf if limit is None else max(0.0, limit)

    def _fill(self) -> dict[LaneKey, float]:
        """The max-min fair rate of every lane, by progressive filling: all unfrozen lanes rise
        to the lowest level at which some resource saturates (its capacity left, over the
        unfrozen copies crossing it); the lanes crossing that resource freeze at that level;
        repeat until every lane is frozen (each crosses two bandwidths, which are finite).

        A heap keeps the resources by the level at which they would saturate; freezing a lane
        only raises the levels of the other resources it crosses (their capacity left shrinks by
        at most its share of the level reached, their unfrozen copies by all of it), so the
        heap's entries are refreshed, never lowered below the current level. One pass costs
        O(lanes + resources log resources)."""
        lanes = self._lanes
        left = {resource: self._capacity(resource) for resource in self._crossing}
        unfrozen = dict(self._crossing)
        levels = {resource: left[resource] / count for resource, count in unfrozen.items()}
        heap = [(level, resource) for resource, level in levels.items() if level < math.inf]
        heapq.heapify(heap)
        rates: dict[LaneKey, float] = {}
        while heap:
            level, resource = heapq.heappop(heap)
            if not unfrozen[resource] or levels[resource] != level:
                continue  # every lane through it froze already, or a stale entry
            touched: set[Resource] = set()
            for key in self._through[resource]:
                if key in rates:
                    continue
                lane = lanes[key]
                rates[key] = level
                members = lane.members
                for crossed in lane.resources:
                    unfrozen[crossed] -= members
                    left[crossed] -= members * level
                    touched.add(crossed)
            for crossed in touched:
                count = unfrozen[crossed]
                if count and left[crossed] < math.inf:
                    levels[crossed] = raised = max(level, left[crossed] / count)
                    heapq.heappush(heap, (raised, crossed))
        return rates

    def _reallocate(self, now: float) -> None:
        """Fill again at ``now`` and reschedule the lanes whose rate or next end changed."""
        heap = self._heap
        for key, rate in self._fill().items():
            lane = self._lanes[key]
            if rate == lane.rate and key not in self._dirty:
                continue
            lane.settle(now)
            lane.rate = rate
            lane.version += 1
            lane.due = None
            ends = lane.ends
            while ends:
                end, order, copy_key = ends[0]
                copy = self._copies.get(copy_key)
                if copy is not None and copy.order == order:
                    if rate > 0:
                        lane.due = now + max(0.0, end - lane.copied) / rate
                        heapq.heappush(heap, (lane.due, lane.version, key))
                    break
                heapq.heappop(ends)
        self._dirty.clear()
        if len(heap) > 4 * len(self._lanes) + 1024:  # drop the stale entries
            self._heap = [(lane.due, lane.version, key) for key, lane in self._lanes.items()
                          if lane.due is not None]
            heapq.heapify(self._heap)
