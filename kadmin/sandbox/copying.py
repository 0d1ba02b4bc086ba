"""Replica copies in flight and the bandwidth they share: the sandbox's model of data. Pure.

A new replica of a partition copies the partition's bytes from the leader. Every broker can
send ``bandwidth`` bytes/s and receive as many; the copies leaving a broker share its outbound
bandwidth equally and the copies arriving share its inbound bandwidth. A copy throttled on a
side (its ``p:b`` entry in the topic's throttled-replica list, spec section 5) also shares that
broker's throttle rate with the other throttled copies there - Kafka's throttle is a quota per
broker, not per partition. A copy runs at the smaller of its two shares.

Time is simulated and exact: rates change only when a copy starts or finishes or a throttle
changes, so :meth:`Transfers.advance` replays every finish in order, each freeing bandwidth for
the copies that shared a broker with it. Only those copies are recomputed, which keeps a batch
of thousands of copies cheap.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

Side = tuple[int, str]
"""A broker and a direction: (broker, "out") sends, (broker, "in") receives."""

Limit = Callable[[Side], float | None]
"""A side's throttle rate in bytes/s, or None when it has none."""


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
    copied: float = 0.0
    rate: float = 0.0
    since: float = 0.0
    """When ``copied`` was last brought up to date."""
    version: int = 0

    @property
    def sides(self) -> tuple[Side, Side]:
        return (self.leader, "out"), (self.follower, "in")

    def finish_time(self) -> float:
        if self.copied >= self.size:
            return self.since
        return float("inf") if self.rate <= 0 else self.since + (self.size - self.copied) / self.rate


class Transfers:
    """Every copy in flight, at most ``bandwidth`` bytes/s per broker and direction, throttled
    where ``limit`` says."""

    def __init__(self, bandwidth: float, limit: Limit = lambda side: None) -> None:
        if bandwidth <= 0:
            raise ValueError("bandwidth must be positive")
        self._bandwidth = bandwidth
        self._limit = limit
        self._copies: dict[Hashable, Copy] = {}
        self._on: dict[Side, set[Hashable]] = {}
        self._throttled: dict[Side, int] = {}
        self._heap: list[tuple[float, int, int, Hashable]] = []
        self._order = itertools.count()
        self.finished: dict[Hashable, float] = {}
        """Copies done, and when; the caller pops them."""

    def __contains__(self, key: Hashable) -> bool:
        return key in self._copies

    def start(self, copy: Copy, now: float) -> None:
        """Begin ``copy`` at ``now`` (a zero-size copy is done at once)."""
        copy.since = now
        if copy.size <= 0:
            self.finished[copy.key] = now
            return
        touched = self._sharing(copy.sides)
        self._settle(touched, now)
        self._copies[copy.key] = copy
        for side, throttled in zip(copy.sides, (copy.throttled_out, copy.throttled_in),
                                   strict=True):
            self._on.setdefault(side, set()).add(copy.key)
            self._throttled[side] = self._throttled.get(side, 0) + throttled
        self._recompute([*touched, copy.key], now)

    def cancel(self, key: Hashable, now: float) -> None:
        """Forget a copy (its partition was re-targeted or the controller changed)."""
        copy = self._copies.get(key)
        if copy is not None:
            self._remove(copy, now)
        self.finished.pop(key, None)

    def retune(self, now: float, throttled: Callable[[Copy], tuple[bool, bool]]) -> None:
        """Throttles changed: every copy's sides and rate again from ``now``."""
        self._settle(self._copies, now)
        self._throttled.clear()
        for copy in self._copies.values():
            copy.throttled_out, copy.throttled_in = throttled(copy)
            for side, flag in zip(copy.sides, (copy.throttled_out, copy.throttled_in),
                                  strict=True):
                self._throttled[side] = self._throttled.get(side, 0) + flag
        self._recompute(list(self._copies), now)

    def advance(self, now: float) -> None:
        """Replay every finish up to ``now`` in order; finished copies go to ``finished``."""
        while self._heap and self._heap[0][0] <= now:
            at, _, version, key = heapq.heappop(self._heap)
            copy = self._copies.get(key)
            if copy is None or copy.version != version:
                continue  # superseded by a later rate
            copy.copied, copy.since = copy.size, at
            self._remove(copy, at)
            self.finished[key] = at

    def next_finish(self) -> float | None:
        """When the next copy finishes at today's rates (None: none will)."""
        while self._heap:
            at, _, version, key = self._heap[0]
            copy = self._copies.get(key)
            if copy is not None and copy.version == version:
                return at
            heapq.heappop(self._heap)
        return None

    def finish_time(self, key: Hashable) -> float | None:
        """When ``key`` finishes (or finished); None for a copy not known."""
        if key in self.finished:
            return self.finished[key]
        copy = self._copies.get(key)
        return None if copy is None else copy.finish_time()

    def progress(self, key: Hashable, now: float) -> tuple[float, float, float] | None:
        """(bytes copied, size, rate) of a copy in flight at ``now``."""
        copy = self._copies.get(key)
        if copy is None:
            return None
        return min(copy.size, copy.copied + copy.rate * (now - copy.since)), copy.size, copy.rate

    # --- internals ------------------------------------------------------------------------------

    def _sharing(self, sides: Iterable[Side]) -> list[Hashable]:
        return list({key for side in sides for key in self._on.get(side, ())})

    def _settle(self, keys: Iterable[Hashable], now: float) -> None:
        """Bring ``copied`` up to ``now`` at the current rates, before a rate changes."""
        for key in keys:
            copy = self._copies[key]
            copy.copied = min(copy.size, copy.copied + copy.rate * (now - copy.since))
            copy.since = now

    def _remove(self, copy: Copy, now: float) -> None:
        del self._copies[copy.key]
        for side, throttled in zip(copy.sides, (copy.throttled_out, copy.throttled_in),
                                   strict=True):
            self._on[side].discard(copy.key)
            self._throttled[side] -= throttled
        touched = self._sharing(copy.sides)
        self._settle(touched, now)
        self._recompute(touched, now)

    def _share(self, side: Side, throttled: bool) -> float:
        share = self._bandwidth / len(self._on[side])
        limit = self._limit(side) if throttled else None
        if limit is not None:
            share = min(share, limit / self._throttled[side])
        return share

    def _recompute(self, keys: Iterable[Hashable], now: float) -> None:
        for key in keys:
            copy = self._copies[key]
            out, into = copy.sides
            copy.rate = min(self._share(out, copy.throttled_out),
                            self._share(into, copy.throttled_in))
            copy.version += 1
            at = copy.finish_time()
            if at != float("inf"):
                heapq.heappush(self._heap, (at, next(self._order), copy.version, key))
