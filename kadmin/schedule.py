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

Cost: the greedy pass scores each partition against the batches still being filled (batches
fill in index order, so these are usually few; at most all of them) with a handful of array
operations, and the local search looks at a bounded number of candidates, so composing grows
about linearly with the partitions to move (bench/bench_compose.py: a million partitions over
1,000 brokers). tests/unit/test_schedule_equivalence.py holds it to the batches of the
earlier, slower composer.

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
    return _consecutive(transfers, limits, lower_bound(transfers))


def _consecutive(transfers: Sequence[Transfer], limits: Limits, bound: int) -> Schedule:
    return _schedule(transfers, _slices(transfers, range(len(transfers)), limits), bound,
                     composed=False)


def _schedule(transfers: Sequence[Transfer], batches: Sequence[Sequence[int]], bound: int,
              composed: bool) -> Schedule:
    ordered = tuple(tuple(sorted(b, key=lambda i: transfers[i].tp)) for b in batches)
    return Schedule(ordered, tuple(load_of(transfers[i] for i in b)[0] for b in ordered),
                    bound, composed)


def compose(transfers: Sequence[Transfer], limits: Limits) -> Schedule:
    """The batches of ``transfers`` (in plan order) for the shortest modelled run, within
    ``limits``: those at min ISR first, then those that restore redundancy, each group composed
    among itself, then the rest. Never slower by the model than :func:`consecutive`, which it
    returns when that is faster."""
    check_limits(limits)
    _check_entries(transfers, limits)
    groups: list[list[int]] = [[], [], []]
    for i, t in enumerate(transfers):
        groups[t.urgency].append(i)
    batches = [b for group in groups if group
               for b in _Composer(transfers, group, limits).run()]
    bound = lower_bound(transfers)
    mine = _schedule(transfers, batches, bound, composed=True)
    base = _consecutive(transfers, limits, bound)
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

    Loads live in a (2·brokers x batches) array, one row per column of the model: row b is what
    broker b receives, row B + b what it sends; a transfer adds its size to each receiver's row
    and size x receivers to its sender's. Rows, not batches, are contiguous, so scoring one
    transfer against every batch reads a few short rows (what makes the greedy pass cost
    transfers x batches x the transfer's brokers, not x all brokers). Each batch's duration (the
    most any of its columns holds) is kept up to date: raised when a transfer lands, recomputed
    when one leaves. The local search also keeps the transpose (batch-major) for its row
    arithmetic. ``counts`` is the same shape in partitions, for ``max_moves_per_broker``.

    Per transfer, numpy arrays hold what the model needs (its columns, padded to the longest
    with an index past the last column; its loads; its entry bytes and work), so memory stays
    proportional to the plan. Sizes are whole bytes, so the float loads are exact below 2**53
    bytes per column, whatever order they are summed in.
    """

    def __init__(self, transfers: Sequence[Transfer], group: Sequence[int], limits: Limits
                 ) -> None:
        self.group, self.limits = list(group), limits
        ts = [transfers[i] for i in group]
        brokers = sorted({b for t in ts for b in (t.sender, *t.receivers)})
        column = {b: k for k, b in enumerate(brokers)}
        width = len(brokers)
        self.width = 2 * width
        pad = max((len(t.receivers) for t in ts), default=0) + 1
        flat_cols: list[int] = []
        flat_adds: list[float] = []
        for t in ts:
            r = len(t.receivers)
            if r:
                flat_cols += [column[b] for b in t.receivers]
                flat_cols.append(width + column[t.sender])
                flat_adds += [float(t.size)] * r
                flat_adds.append(float(t.work))
                r += 1
            flat_cols += [self.width] * (pad - r)
            flat_adds += [0.0] * (pad - r)
        # floats: a heuristic's arithmetic; the loads reported are recomputed exactly in integers
        self.cols = np.array(flat_cols, dtype=np.intp).reshape(len(ts), pad)
        self.adds = np.array(flat_adds).reshape(len(ts), pad)
        self.ms = [len(t.receivers) + 1 if t.receivers else 0 for t in ts]
        self.monotone = all(t.size >= 0 for t in ts)
        works = [t.work for t in ts]
        big = sum(abs(w) for w in works) + (limits.max_batch_bytes or 0) + 1
        # exact integers: the cap must hold exactly (int64 unless the plan copies exabytes)
        self.int = np.int64 if big < 2**62 else object
        self.big = big
        self.works = works
        self.work = np.array(works, dtype=self.int)
        self.entry_bytes = [t.entry_bytes for t in ts]
        tps = sorted(range(len(ts)), key=lambda p: ts[p].tp)
        tp_rank = [0] * len(ts)
        for r, p in enumerate(tps):
            tp_rank[p] = r
        self.greedy_order = sorted(range(len(ts)),
                                   key=lambda p: (-works[p], -ts[p].size, tp_rank[p]))
        heaviest = sorted(range(len(ts)), key=lambda p: (-works[p], tp_rank[p]))
        self.heavy_rank = np.empty(len(ts), np.intp)
        self.heavy_rank[heaviest] = np.arange(len(ts))
        self.k = 0
        self.sorted_members: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.budget = 0
        self.members: list[set[int]] = []
        self.n: list[int] = []
        self.bytes: list[int] = []
        self.batch_work: list[int] = []
        self.rows: np.ndarray | None = None
        # the greedy pass's open batches (see _open)
        self.filling: list[int] = []
        self.fresh = 0
        self.open: np.ndarray | slice | None = None
        self._grow(self._fewest_batches(ts))

    # --- bookkeeping --------------------------------------------------------------------------

    def _fewest_batches(self, ts: Sequence[Transfer]) -> int:
        """A lower bound on the batches the limits need (the greedy adds more if it must)."""
        lim = self.limits
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
        """Room for ``k`` batches (the arrays double, so growing one at a time stays linear)."""
        have = self.loads.shape[1] if self.k else 0
        if k > have:
            size = max(k, 2 * have)
            lim = self.limits

            def widen(old: np.ndarray | None, shape: tuple[int, ...], dtype: object,
                      fill: object = 0) -> np.ndarray:
                out = np.full(shape, fill, dtype=dtype)  # type: ignore[call-overload]
                if old is not None:
                    out[..., :self.k] = old[..., :self.k]
                return out

            old = self.k > 0
            self.loads = widen(self.loads if old else None, (self.width, size), np.float64)
            if lim.max_moves_per_broker is not None:
                self.counts = widen(self.counts if old else None, (self.width, size), np.int64)
            self.duration = widen(self.duration if old else None, (size,), np.float64)
            self.room = widen(self.room if old else None, (size,), np.int64,
                              lim.max_znode_bytes - lim.overhead)
            self.work_room = widen(self.work_room if old else None, (size,), self.int, self.big)
        self.members += [set() for _ in range(k - self.k)]
        # per batch, as Python ints: partitions, znode bytes, bytes to copy
        self.n += [0] * (k - self.k)
        self.bytes += [self.limits.overhead] * (k - self.k)
        self.batch_work += [0] * (k - self.k)
        self.k = k

    def _place(self, p: int, k: int, sign: int = 1, raised: float | None = None) -> None:
        """Add transfer ``p`` to batch ``k`` (``sign`` -1: take it out); ``raised``: what
        :meth:`_raised` gave for ``k``, the busiest of ``p``'s columns once added."""
        lim, m = self.limits, self.ms[p]
        if m:
            cols, adds = self.cols[p, :m], self.adds[p, :m]
            if sign > 0:
                self.loads[cols, k] += adds
            else:
                self.loads[cols, k] -= adds
            if lim.max_moves_per_broker is not None:
                self.counts[cols, k] += sign
            if self.rows is not None:
                self.rows[k, cols] = self.loads[cols, k]
            if sign > 0 and self.monotone:  # loads only rose, and only there
                top = self.loads[cols, k].max() if raised is None else raised
                self.duration[k] = max(self.duration[k], top)
            else:
                self.duration[k] = (self.rows[k] if self.rows is not None
                                    else self.loads[:, k]).max()
        n = self.n[k]
        if sign > 0:
            self.bytes[k] += self.entry_bytes[p] + (lim.separator if n else 0)
            self.members[k].add(p)
        else:
            self.bytes[k] -= self.entry_bytes[p] + (lim.separator if n > 1 else 0)
            self.members[k].discard(p)
        self.n[k] = n = n + sign
        self.batch_work[k] += sign * self.works[p]
        # what the batch can still take: entry bytes (after a separator) and bytes to copy
        self.room[k] = (lim.max_znode_bytes - self.bytes[k] - (lim.separator if n else 0)
                        if n < lim.max_partitions else -1)
        if lim.max_batch_bytes is not None:
            self.work_room[k] = lim.max_batch_bytes - self.batch_work[k] if n else self.big
        self.sorted_members.pop(k, None)

    def _refused(self, p: int, among: np.ndarray | slice | None = None) -> np.ndarray:
        """Which batches (all, or those ``among`` names) could not take transfer ``p`` now."""
        lim = self.limits
        among = slice(0, self.k) if among is None else among
        refused = self.room[among] < self.entry_bytes[p]
        if lim.max_batch_bytes is not None:
            refused |= self.work_room[among] < self.work[p]
        m = self.ms[p]
        if lim.max_moves_per_broker is not None and m:
            counts = self.counts[self.cols[p, :m]][:, among]
            refused |= counts.max(axis=0) >= lim.max_moves_per_broker
        return refused

    def _feasible(self, p: int, exclude: int = -1) -> np.ndarray:
        """Which batches could take transfer ``p`` now."""
        ok = ~self._refused(p)
        if exclude >= 0:
            ok[exclude] = False
        return ok

    def _raised(self, p: int, among: np.ndarray | slice | None = None) -> np.ndarray:
        """Per batch (all, or those ``among`` names), its busiest column among ``p``'s once
        ``p`` is added."""
        m = self.ms[p]
        among = slice(0, self.k) if among is None else among
        cols, adds = self.cols[p, :m].tolist(), self.adds[p, :m].tolist()
        new = self.loads[cols[0], among] + adds[0]
        for c, a in zip(cols[1:], adds[1:], strict=True):
            np.maximum(new, self.loads[c, among] + a, out=new)
        return new

    # --- greedy --------------------------------------------------------------------------------

    def run(self) -> list[tuple[int, ...]]:
        for p in self.greedy_order:
            self._greedy(p)
        self._improve()
        return [tuple(self.group[p] for p in sorted(m)) for m in self.members if m]

    def _open(self) -> np.ndarray | slice:
        """The batches the greedy pass may still choose, by index: those begun and not full,
        and the first empty one. Batches fill in index order (an empty batch is only ever
        chosen as the first of its kind), and every empty batch scores the same as the first,
        which wins their ties; a full batch refuses everything. So choosing among these is
        choosing among all, at the cost of the few batches being filled."""
        if self.open is None:
            ids = self.filling + ([self.fresh] if self.fresh < self.k else [])
            if ids and ids[-1] - ids[0] + 1 == len(ids):  # a run of batches: read as a view
                self.open = slice(ids[0], ids[-1] + 1)
            else:
                self.open = np.array(ids, dtype=np.intp)
        return self.open

    def _greedy(self, p: int) -> None:
        among = self._open()
        duration = self.duration[among]
        moves = self.ms[p]
        if moves:
            new = self._raised(p, among)
            rise = new - duration
            np.maximum(rise, 0.0, out=rise)
        else:
            new, rise = duration, np.zeros(len(duration))
        rise = np.where(self._refused(p, among), np.inf, rise)
        best = rise.min() if len(rise) else np.inf
        if best == np.inf:  # no batch can take it (none is empty): a new one
            self._grow(self.k + 1)
            self.open = None
            self._greedy(p)
            return
        # no rise: the tightest fit (keep room elsewhere for what is still to come); a rise:
        # the batch that stays shortest (spread); argmin: the lowest index among equals.
        # (With no rise, new <= duration, so duration - new is the slack and never negative.)
        tie = duration - new if best == 0 else duration + rise
        at = int(np.argmin(np.where(rise == best, tie, np.inf)))
        k = among.start + at if isinstance(among, slice) else int(among[at])
        self._place(p, k, raised=float(new[at]) if moves else None)
        if k == self.fresh:
            self.fresh += 1
            self.filling.append(k)
            self.open = None
        if self.n[k] >= self.limits.max_partitions:
            self.filling.remove(k)
            self.open = None

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
        # batch-major, with the padding column at -inf (never the busiest)
        self.rows = np.full((self.k, self.width + 1), -np.inf)
        self.rows[:, :self.width] = self.loads[:, :self.k].T
        bound = float(np.maximum(self.rows[:, :self.width].sum(axis=0), 0).max())
        for _ in range(rounds):
            if self.duration[:self.k].sum() <= bound * (1 + 1e-12) or self.budget <= 0:
                return
            if not self._pass():
                return

    def _pass(self) -> bool:
        assert self.rows is not None
        improved = False
        for a in np.argsort(-self.duration[:self.k], kind="stable").tolist():
            top = self.duration[a]
            if top <= 0:
                continue
            critical = self.rows[a] >= top
            heaviest, _ = self._by_work(a)
            movers = heaviest[critical[self.cols[heaviest]].any(axis=1)][:MOVERS]
            for p in movers.tolist():
                if self._try_move(p, a) or self._try_swap(p, a):
                    improved = True
                    break
            if self.budget <= 0:
                break
        return improved

    def _by_work(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """Batch ``b``'s partitions, heaviest first, and minus their work (cached until the batch
        changes)."""
        found = self.sorted_members.get(b)
        if found is None:
            members = np.fromiter(self.members[b], dtype=np.intp, count=len(self.members[b]))
            members = members[np.argsort(self.heavy_rank[members])]
            found = members, -self.work[members]
            self.sorted_members[b] = found
        return found

    def _without(self, p: int, a: int) -> float:
        assert self.rows is not None
        m = self.ms[p]
        row = self.rows[a].copy()
        row[self.cols[p, :m]] -= self.adds[p, :m]
        return float(row.max())

    def _try_move(self, p: int, a: int) -> bool:
        duration = self.duration[:self.k].copy()
        gain = duration[a] - self._without(p, a)
        if gain <= 0:
            return False
        ok = self._feasible(p, exclude=a)
        if not ok.any():
            return False
        rise = np.where(ok, np.maximum(self._raised(p) - duration, 0.0), np.inf)
        b = int(np.argmin(rise))
        if rise[b] >= gain - 1e-9 * max(1.0, gain):
            return False
        self._place(p, a, -1)
        self._place(p, b)
        return True

    def _try_swap(self, p: int, a: int, tries: int = 16) -> bool:
        """Exchange ``p`` (on batch ``a``'s busiest column) with a partition of another batch
        no heavier (the lightest tried last) when that lowers the two batches' summed duration;
        under ``max_moves_per_broker`` only with one that shares a broker with ``p`` (the caps
        rarely let two others trade places). Per other batch, the candidates' gains are computed
        at once (a refused exchange restores the loads exactly), then tried in order."""
        assert self.rows is not None
        duration = self.duration[:self.k].copy()
        if duration[a] - self._without(p, a) <= 0:
            return False
        cp, ap = self.cols[p, :self.ms[p]], self.adds[p, :self.ms[p]]
        mine = np.zeros(self.width + 1, dtype=bool)
        mine[cp] = True
        capped = self.limits.max_moves_per_broker is not None
        without_p = self.rows[a].copy()
        without_p[cp] -= ap
        threshold = 1e-9 * max(1.0, duration[a])
        for b in np.argsort(duration, kind="stable").tolist():
            if self.budget <= 0:
                break
            if b == a:
                continue
            members, minus_work = self._by_work(b)
            # from the first partition no heavier than p, the first `tries` that may trade
            # places; each one looked at costs a unit of budget
            lo = int(np.searchsorted(minus_work, -self.work[p], side="left"))
            window = members[lo:]
            if capped:
                tried = np.flatnonzero(mine[self.cols[window]].any(axis=1))[:tries]
            else:
                tried = np.arange(min(tries, len(window)))
            looked = int(tried[-1]) + 1 if len(tried) == tries else len(window)
            looked = min(looked, self.budget)
            tried = tried[tried < looked]
            budget, self.budget = self.budget, self.budget - looked
            if not len(tried):
                continue
            js = window[tried]
            rows = np.arange(len(js))[:, None]
            row_a = np.repeat(without_p[None], len(js), axis=0)
            row_a[rows, self.cols[js]] += self.adds[js]
            row_b = np.repeat(self.rows[b][None], len(js), axis=0)
            row_b[rows, self.cols[js]] -= self.adds[js]
            row_b[:, cp] += ap
            gains = duration[a] + duration[b] - row_a.max(axis=1) - row_b.max(axis=1)
            for at in np.flatnonzero(gains > threshold).tolist():
                j = int(js[at])
                self._place(p, a, -1)
                self._place(j, b, -1)
                if not (self._refused(p, slice(b, b + 1))[0]
                        or self._refused(j, slice(a, a + 1))[0]):
                    self._place(p, b)
                    self._place(j, a)
                    self.budget = budget - int(tried[at]) - 1
                    return True
                self._place(p, a)
                self._place(j, b)
        return False
