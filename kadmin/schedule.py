"""Composing a plan's batches for the shortest run (docs/execution.md). Pure: plain data in and out.

Only one ``/admin/reassign_partitions`` znode exists at a time and the controller deletes it when
its last partition is done, so a plan runs as a sequence of batches and each batch lasts as long
as its busiest broker. The model (what a throttled cluster and kadmin's sandbox do): a moving
partition copies its size once to every new replica; its **sender** is the current leader, which
sends the size once per new replica; every new replica **receives** the size. A batch's *load* is
the most bytes one broker receives or sends in it, max over brokers b of max(received_b,
sent_b); at a throttle of R bytes/s (per broker and direction) it lasts load / R. The plan lasts
the sum of its batches' loads / R, and no schedule beats the **lower bound** max over brokers of
max(total received_b, total sent_b) / R. Without sizes every partition weighs 1, so the same
model balances partition counts per broker.

Composition (:func:`compose`) is a heuristic for a hard problem (it contains bin packing): the
number of batches is fixed at the fewest the limits allow (``--batch-size``, znode bytes, bytes
per batch, ``--max-moves-per-broker``), then partitions, largest first, each go to the batch
whose load they raise least (ties: the batch they fill most tightly, then the lowest index); a
batch is added only when a partition fits in none. A local search then moves single partitions
off each batch's busiest broker, and swaps pairs, while that lowers the sum. How far it lands from
the bound is measured (tests/unit/test_schedule.py, bench/bench_schedule.py), never assumed;
when it would ever be slower than consecutive slicing in plan order (:func:`consecutive`), that
slicing is used instead, so composing never costs time.

Order: the batches of partitions **at or below min.insync.replicas** (one more loss stops
``acks=all`` producers) come first, then those that **restore redundancy** (a replica on a
broker that is not registered), each group composed among itself; the other partitions follow. The model's
duration does not depend on the order, so the order serves safety. Within a batch, entries are
in plan order. Everything is deterministic: the same transfers and limits give the same batches.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from kadmin.model import InvalidInput, TopicPartition


@dataclass(frozen=True)
class Transfer:
    """One partition to move, as the model sees it."""

    tp: TopicPartition
    size: int
    """Bytes each new replica copies (1 for every partition when sizes are unknown)."""
    sender: int
    """The current leader (the first current replica when unknown)."""
    receivers: tuple[int, ...]
    """The new replicas (target minus current); empty for a move that only reorders or drops."""
    entry_bytes: int
    """The length of its entry in the reassignment znode."""
    restores: bool = False
    """A current replica is on a broker that is not registered: moving it restores redundancy."""
    at_min_isr: bool = False
    """Its ISR is no larger than the topic's min.insync.replicas: it goes first."""

    @property
    def urgency(self) -> int:
        """0: at min ISR, 1: restores redundancy, 2: the rest (batches run in that order)."""
        return 0 if self.at_min_isr else 1 if self.restores else 2

    @property
    def work(self) -> int:
        """Bytes it copies in all (what ``--max-batch-bytes`` bounds)."""
        return self.size * len(self.receivers)


@dataclass(frozen=True)
class Limits:
    """What one batch may hold."""

    max_partitions: int = 1000
    max_znode_bytes: int = 1_000_000
    overhead: int = 0
    """Bytes of the znode's envelope around the entries."""
    separator: int = 1
    """Bytes between two entries (a comma)."""
    max_batch_bytes: int | None = None
    """The most bytes one batch copies; a partition that copies more goes alone."""
    max_moves_per_broker: int | None = None
    """Per batch, the most new replicas one broker receives, and the most moving partitions it
    sends for as leader."""


@dataclass(frozen=True)
class Schedule:
    """Batches as indices into the transfers composed, in the order they run."""

    batches: tuple[tuple[int, ...], ...]
    loads: tuple[int, ...]
    """Per batch: the most bytes (or partitions, without sizes) one broker receives or sends."""
    bound: int
    """max over brokers of max(total received, total sent): no schedule's load sum is lower."""
    composed: bool = True
    """False when consecutive slicing was as fast or faster and was kept instead."""

    @property
    def load(self) -> int:
        return sum(self.loads)


@dataclass(frozen=True)
class BatchPrediction:
    partitions: int
    bytes: int
    """Bytes the batch copies in all."""
    busiest_broker: int | None
    """The broker that bounds the batch (None for a batch that copies nothing)."""
    seconds: float
    lower_bound_seconds: float
    """The batch's own bound: no broker can finish it sooner (equals ``seconds`` by the model;
    kept so the JSON reads the same for a batch and the plan)."""


@dataclass(frozen=True)
class Prediction:
    """The model's duration of a schedule at a throttle, next to the plan's lower bound."""

    rate: int
    batches: tuple[BatchPrediction, ...]
    seconds: float
    lower_bound_seconds: float


def broker_loads(transfers: Iterable[Transfer]) -> dict[int, tuple[int, int]]:
    """Broker -> (bytes received, bytes sent) by ``transfers``."""
    received: dict[int, int] = {}
    sent: dict[int, int] = {}
    for t in transfers:
        for r in t.receivers:
            received[r] = received.get(r, 0) + t.size
        if t.receivers:
            sent[t.sender] = sent.get(t.sender, 0) + t.work
    return {b: (received.get(b, 0), sent.get(b, 0)) for b in sorted(received.keys() | sent)}


def load_of(transfers: Iterable[Transfer]) -> tuple[int, int | None]:
    """The load of ``transfers`` run as one batch, and the broker that has it (None: no copy)."""
    best, broker = 0, None
    for b, (received, sent) in broker_loads(transfers).items():
        if max(received, sent) > best:
            best, broker = max(received, sent), b
    return best, broker


def lower_bound(transfers: Iterable[Transfer]) -> int:
    return load_of(transfers)[0]


def predict(transfers: Sequence[Transfer], schedule: Schedule, rate: int) -> Prediction:
    """The execution model's duration (docs/execution.md) of ``schedule`` at ``rate`` bytes/s,
    per batch and in all."""
    if rate <= 0:
        raise InvalidInput(f"throttle must be at least 1 byte/s, got {rate}")
    out = []
    for batch in schedule.batches:
        moves = [transfers[i] for i in batch]
        load, broker = load_of(moves)
        out.append(BatchPrediction(len(moves), sum(t.work for t in moves), broker, load / rate,
                                   load / rate))
    return Prediction(rate, tuple(out), sum(b.seconds for b in out), schedule.bound / rate)


def check_limits(limits: Limits) -> None:
    if limits.max_partitions < 1:
        raise InvalidInput(f"batch size must be at least 1, got {limits.max_partitions}")
    if limits.max_znode_bytes <= limits.overhead:
        raise InvalidInput(f"maximum znode size {limits.max_znode_bytes} bytes is too small: "
                           f"the admin document's envelope alone takes {limits.overhead}")
    if limits.max_batch_bytes is not None and limits.max_batch_bytes < 1:
        raise InvalidInput(f"maximum bytes per batch must be at least 1, got "
                           f"{limits.max_batch_bytes}")
    if limits.max_moves_per_broker is not None and limits.max_moves_per_broker < 1:
        raise InvalidInput(f"--max-moves-per-broker must be at least 1, got "
                           f"{limits.max_moves_per_broker}")


def _check_entries(transfers: Sequence[Transfer], limits: Limits) -> None:
    for t in transfers:
        if limits.overhead + t.entry_bytes > limits.max_znode_bytes:
            raise InvalidInput(f"{t.tp}: its entry alone takes {limits.overhead + t.entry_bytes} "
                               f"bytes, more than the maximum znode size of "
                               f"{limits.max_znode_bytes}")


class _Fill:
    """What one batch holds so far, against the limits (consecutive slicing's bookkeeping)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.items: list[int] = []
        self.bytes = limits.overhead
        self.work = 0
        self.received: dict[int, int] = {}
        self.sent: dict[int, int] = {}

    def fits(self, t: Transfer) -> bool:
        lim = self.limits
        if not self.items:
            return True
        if len(self.items) >= lim.max_partitions:
            return False
        if self.bytes + lim.separator + t.entry_bytes > lim.max_znode_bytes:
            return False
        if lim.max_batch_bytes is not None and self.work + t.work > lim.max_batch_bytes:
            return False
        n = lim.max_moves_per_broker
        return n is None or not t.receivers or (
            self.sent.get(t.sender, 0) < n
            and all(self.received.get(r, 0) < n for r in t.receivers))

    def add(self, i: int, t: Transfer) -> None:
        self.bytes += t.entry_bytes + (self.limits.separator if self.items else 0)
        self.items.append(i)
        self.work += t.work
        if t.receivers:
            self.sent[t.sender] = self.sent.get(t.sender, 0) + 1
            for r in t.receivers:
                self.received[r] = self.received.get(r, 0) + 1


def _slices(transfers: Sequence[Transfer], order: Sequence[int], limits: Limits
            ) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    fill = _Fill(limits)
    for i in order:
        if not fill.fits(transfers[i]):
            out.append(tuple(fill.items))
            fill = _Fill(limits)
        fill.add(i, transfers[i])
    if fill.items:
        out.append(tuple(fill.items))
    return out


def consecutive(transfers: Sequence[Transfer], limits: Limits) -> Schedule:
    """Consecutive slices in the order given (plan order): each batch is closed when the next
    partition would pass a limit. What kadmin did before composing; the baseline."""
    check_limits(limits)
    _check_entries(transfers, limits)
    batches = _slices(transfers, range(len(transfers)), limits)
    return _schedule(transfers, batches, composed=False)


def _schedule(transfers: Sequence[Transfer], batches: Sequence[Sequence[int]], composed: bool
              ) -> Schedule:
    ordered = tuple(tuple(sorted(b, key=lambda i: transfers[i].tp)) for b in batches)
    return Schedule(ordered, tuple(load_of(transfers[i] for i in b)[0] for b in ordered),
                    lower_bound(transfers), composed)


def compose(transfers: Sequence[Transfer], limits: Limits) -> Schedule:
    """The batches of ``transfers`` (in plan order) for the shortest modelled run, within
    ``limits``: those at min ISR first, then those that restore redundancy, each group composed
    among itself, then the rest. Never slower by the model than :func:`consecutive`, which it
    returns when that is faster."""
    check_limits(limits)
    _check_entries(transfers, limits)
    groups = [[i for i, t in enumerate(transfers) if t.urgency == u] for u in range(3)]
    batches = [b for group in groups if group
               for b in _Composer(transfers, group, limits).run()]
    mine = _schedule(transfers, batches, composed=True)
    base = consecutive(transfers, limits)
    if base.load < mine.load:
        # order doesn't change the duration: keep the most urgent batches first
        first = sorted(range(len(base.batches)), key=lambda k: min(
            transfers[i].urgency for i in base.batches[k]))
        return Schedule(tuple(base.batches[k] for k in first),
                        tuple(base.loads[k] for k in first), base.bound, composed=False)
    return mine


SEARCH_BUDGET = 400_000
"""Swap candidates the local search may look at (a few seconds of Python)."""
MOVERS = 32
"""Partitions on a batch's busiest column tried per pass, heaviest first."""


class _Composer:
    """Greedy placement then local search over one group of transfers.

    Loads live in a (batches x 2·brokers) array: column b is what broker b receives, column
    B + b what it sends; a transfer adds its size to each receiver's column and size x receivers
    to its sender's. ``counts`` is the same shape in partitions, for ``max_moves_per_broker``.
    """

    def __init__(self, transfers: Sequence[Transfer], group: Sequence[int], limits: Limits
                 ) -> None:
        self.transfers, self.group, self.limits = transfers, list(group), limits
        brokers = sorted({b for i in group for b in (transfers[i].sender,
                                                     *transfers[i].receivers)})
        column = {b: k for k, b in enumerate(brokers)}
        width = len(brokers)
        self.width = 2 * width
        # per transfer: the columns it loads and by how much (floats: a heuristic's arithmetic;
        # the loads reported are recomputed exactly in integers)
        self.cols: dict[int, np.ndarray] = {}
        self.adds: dict[int, np.ndarray] = {}
        for i in group:
            t = transfers[i]
            if t.receivers:
                self.cols[i] = np.array([column[r] for r in t.receivers]
                                        + [width + column[t.sender]], dtype=np.intp)
                self.adds[i] = np.array([float(t.size)] * len(t.receivers) + [float(t.work)])
            else:
                self.cols[i] = np.zeros(0, dtype=np.intp)
                self.adds[i] = np.zeros(0)
        self.k = 0
        self.sorted_members: dict[int, list[int]] = {}
        self.budget = 0
        self._grow(self._fewest_batches())
        self.where: dict[int, int] = {}
        self.members: list[set[int]] = [set() for _ in range(self.k)]

    # --- bookkeeping --------------------------------------------------------------------------

    def _fewest_batches(self) -> int:
        """A lower bound on the batches the limits need (the greedy adds more if it must)."""
        lim, ts = self.limits, [self.transfers[i] for i in self.group]
        need = math.ceil(len(ts) / lim.max_partitions)
        room = lim.max_znode_bytes - lim.overhead + lim.separator
        need = max(need, math.ceil(sum(t.entry_bytes + lim.separator for t in ts) / room))
        if lim.max_batch_bytes is not None:
            alone = [t for t in ts if t.work > lim.max_batch_bytes]
            rest = sum(t.work for t in ts if t.work <= lim.max_batch_bytes)
            need = max(need, len(alone) + math.ceil(rest / lim.max_batch_bytes))
        if lim.max_moves_per_broker is not None:
            per: dict[tuple[str, int], int] = {}
            for t in ts:
                if t.receivers:
                    per[("s", t.sender)] = per.get(("s", t.sender), 0) + 1
                    for r in t.receivers:
                        per[("r", r)] = per.get(("r", r), 0) + 1
            need = max(need, max((math.ceil(c / lim.max_moves_per_broker)
                                  for c in per.values()), default=0))
        return max(1, need)

    def _grow(self, k: int) -> None:
        if self.k == 0:
            self.loads = np.zeros((k, self.width))
            self.counts = np.zeros((k, self.width), dtype=np.int64)
            self.n = np.zeros(k, dtype=np.int64)
            self.bytes = np.zeros(k, dtype=np.int64)
            self.work = np.zeros(k, dtype=object)  # exact integers: the cap must hold exactly
        else:
            extra = k - self.k
            self.loads = np.vstack([self.loads, np.zeros((extra, self.width))])
            self.counts = np.vstack([self.counts, np.zeros((extra, self.width), np.int64)])
            self.n = np.concatenate([self.n, np.zeros(extra, np.int64)])
            self.bytes = np.concatenate([self.bytes, np.zeros(extra, np.int64)])
            self.work = np.concatenate([self.work, np.zeros(extra, dtype=object)])
            self.members += [set() for _ in range(extra)]
        self.k = k

    def _place(self, i: int, k: int, sign: int = 1) -> None:
        t, lim = self.transfers[i], self.limits
        cols = self.cols[i]
        self.loads[k, cols] += sign * self.adds[i]
        self.counts[k, cols] += sign
        if sign > 0:
            self.bytes[k] += t.entry_bytes + (lim.separator if self.n[k] else 0)
            self.members[k].add(i)
            self.where[i] = k
        else:
            self.bytes[k] -= t.entry_bytes + (lim.separator if self.n[k] > 1 else 0)
            self.members[k].discard(i)
        self.n[k] += sign
        self.work[k] += sign * t.work
        self.sorted_members.pop(k, None)

    def _feasible(self, i: int, exclude: int = -1) -> np.ndarray:
        """Which batches could take transfer ``i`` now."""
        t, lim = self.transfers[i], self.limits
        empty = self.n == 0
        ok = self.n < lim.max_partitions
        ok &= self.bytes + np.where(empty, 0, lim.separator) + t.entry_bytes \
            <= lim.max_znode_bytes
        if lim.max_batch_bytes is not None:
            ok &= (self.work + t.work <= lim.max_batch_bytes).astype(bool) | empty
        if lim.max_moves_per_broker is not None and len(self.cols[i]):
            ok &= self.counts[:, self.cols[i]].max(axis=1) < lim.max_moves_per_broker
        if exclude >= 0:
            ok[exclude] = False
        return ok

    def _durations(self) -> np.ndarray:
        return self.loads.max(axis=1) if self.width else np.zeros(self.k)

    # --- greedy --------------------------------------------------------------------------------

    def _order(self) -> list[int]:
        ts = self.transfers
        return sorted(self.group, key=lambda i: (-ts[i].work, -ts[i].size, ts[i].tp))

    def run(self) -> list[tuple[int, ...]]:
        self.bytes[:] = self.limits.overhead
        for i in self._order():
            self._greedy(i)
        self._improve()
        return [tuple(sorted(m)) for m in self.members if m]

    def _greedy(self, i: int) -> None:
        ok = self._feasible(i)
        if not ok.any():
            self._grow(self.k + 1)
            self.bytes[-1] = self.limits.overhead
            ok = self._feasible(i)
        cols = self.cols[i]
        duration = self._durations()
        if len(cols):
            new = (self.loads[:, cols] + self.adds[i]).max(axis=1)
            rise = np.maximum(new - duration, 0.0)
            slack = np.maximum(duration - new, 0.0)
        else:
            rise = slack = np.zeros(self.k)
        rise = np.where(ok, rise, np.inf)
        best = rise.min()
        candidates = np.flatnonzero(rise == best)
        # no rise: the tightest fit (keep room elsewhere for what is still to come); a rise:
        # the batch that stays shortest (spread); argmin: the lowest index among equals
        tie = slack if best == 0 else duration + rise
        k = int(candidates[np.argmin(tie[candidates])])
        self._place(i, k)

    # --- local search --------------------------------------------------------------------------

    def _improve(self, rounds: int = 50) -> None:
        """Move partitions off each batch's busiest column (or swap two) while the sum of the
        batches' durations falls; each accepted step lowers it, so the search ends. It stops at
        the bound (nothing beats it) and after ``SEARCH_BUDGET`` swap evaluations (a count, not
        a clock, so the result stays deterministic)."""
        if self.k < 2 or not self.width:
            return
        self.budget = SEARCH_BUDGET
        self.sorted_members = {}
        bound = float(np.maximum(self.loads.sum(axis=0), 0).max())
        for _ in range(rounds):
            if self._durations().sum() <= bound * (1 + 1e-12) or self.budget <= 0:
                return
            if not self._pass():
                return

    def _pass(self) -> bool:
        improved = False
        duration = self._durations()
        for a in np.argsort(-duration, kind="stable"):
            a = int(a)
            top = self.loads[a].max()
            if top <= 0:
                continue
            critical = self.loads[a] >= top
            movers = sorted((i for i in self.members[a] if critical[self.cols[i]].any()),
                            key=lambda i: (-self.transfers[i].work, self.transfers[i].tp))
            for i in movers[:MOVERS]:
                if self._try_move(i, a) or self._try_swap(i, a):
                    improved = True
                    break
            if self.budget <= 0:
                break
        return improved

    def _by_work(self, b: int) -> list[int]:
        """Batch ``b``'s partitions, heaviest first (cached until the batch changes)."""
        found = self.sorted_members.get(b)
        if found is None:
            ts = self.transfers
            found = sorted(self.members[b], key=lambda j: (-ts[j].work, ts[j].tp))
            self.sorted_members[b] = found
        return found

    def _without(self, i: int, a: int) -> float:
        row = self.loads[a].copy()
        row[self.cols[i]] -= self.adds[i]
        return float(row.max())

    def _try_move(self, i: int, a: int) -> bool:
        duration = self._durations()
        gain = duration[a] - self._without(i, a)
        if gain <= 0:
            return False
        ok = self._feasible(i, exclude=a)
        if not ok.any():
            return False
        new = (self.loads[:, self.cols[i]] + self.adds[i]).max(axis=1)
        rise = np.where(ok, np.maximum(new - duration, 0.0), np.inf)
        b = int(np.argmin(rise))
        if rise[b] >= gain - 1e-9 * max(1.0, gain):
            return False
        self._place(i, a, -1)
        self._place(i, b)
        return True

    def _try_swap(self, i: int, a: int, tries: int = 16) -> bool:
        """Exchange ``i`` (on batch ``a``'s busiest column) with a partition of another batch
        no heavier (the lightest tried last) when that lowers the two batches' summed duration;
        under ``max_moves_per_broker`` only with one that shares a broker with ``i`` (the caps
        rarely let two others trade places)."""
        duration = self._durations()
        work = self.transfers[i].work
        if duration[a] - self._without(i, a) <= 0:
            return False
        mine = np.zeros(self.width, dtype=bool)
        mine[self.cols[i]] = True
        capped = self.limits.max_moves_per_broker is not None
        for b in np.argsort(duration, kind="stable"):
            b = int(b)
            if b == a:
                continue
            members = self._by_work(b)
            lo, hi = 0, len(members)
            while lo < hi:  # the first partition no heavier than i
                mid = (lo + hi) // 2
                if self.transfers[members[mid]].work > work:
                    lo = mid + 1
                else:
                    hi = mid
            seen = 0
            for j in members[lo:]:
                if seen == tries or self.budget <= 0:
                    break
                self.budget -= 1
                if j == i or (capped and not mine[self.cols[j]].any()):
                    continue
                seen += 1
                if self._swap_gain(i, a, j, b, duration) > 1e-9 * max(1.0, duration[a]):
                    self._place(i, a, -1)
                    self._place(j, b, -1)
                    if self._feasible(i)[b] and self._feasible(j)[a]:
                        self._place(i, b)
                        self._place(j, a)
                        return True
                    self._place(i, a)
                    self._place(j, b)
        return False

    def _swap_gain(self, i: int, a: int, j: int, b: int, duration: np.ndarray) -> float:
        row_a = self.loads[a].copy()
        row_a[self.cols[i]] -= self.adds[i]
        row_a[self.cols[j]] += self.adds[j]
        row_b = self.loads[b].copy()
        row_b[self.cols[j]] -= self.adds[j]
        row_b[self.cols[i]] += self.adds[i]
        return float(duration[a] + duration[b] - row_a.max() - row_b.max())
