"""The composer kadmin.schedule used before it kept per-batch durations incrementally and its
loads broker-major: kept only as the oracle that the faster one places every partition exactly
as this one did (tests/unit/test_schedule_equivalence.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from kadmin.schedule import MOVERS, SEARCH_BUDGET, Limits, Transfer


class Composer:
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
