"""The progress accountant of a reassignment: partitions and bytes done, the rate, and an ETA
from the schedule's model (docs/execution.md) for what is left, not a straight line.

What is left is the rest of the batch in flight (its modelled duration times the share of its
bytes still to copy) plus the modelled duration of every batch still to run. With a throttle
the model's unit is known (load / rate); without one, the seconds per unit of load are measured
on what this run has finished so far. Pure bookkeeping: the clock is passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kadmin.events import Waiting


@dataclass
class Accountant:
    total: int
    """Partitions of the plan."""
    done: int
    """Partitions at their target before this run submits anything."""
    loads: Sequence[int]
    """The modelled load of each batch this run works through, in order."""
    sizes: Sequence[int] | None
    """Bytes each of those batches copies; None without partition sizes."""
    throttle: int | None
    started: float
    copied: int = 0
    finished_load: int = 0
    batch: int = field(default=0, init=False)
    """The batch in flight, from 0."""
    _base_done: int = field(default=0, init=False)

    @property
    def bytes_total(self) -> int | None:
        return None if self.sizes is None else sum(self.sizes)

    def begin(self, index: int, skipped: int = 0) -> None:
        """Batch ``index`` starts; ``skipped`` of its partitions turned out done already."""
        self.batch = index
        self.done += skipped
        self._base_done = self.done

    def waiting(self, number: int, size: int, remaining: int, bytes_left: int | None,
                controller: int | None, connected: bool, now: float) -> Waiting:
        """The event for an update of batch ``number`` (``size`` partitions submitted)."""
        event = Waiting(number, remaining, self._base_done + size - remaining, self.total,
                        controller, connected)
        if self.sizes is None or bytes_left is None:
            return event
        batch_bytes = self.sizes[self.batch]
        copied = self.copied + batch_bytes - bytes_left
        elapsed = now - self.started
        rate = copied / elapsed if copied > 0 and elapsed > 0 else None
        share = bytes_left / batch_bytes if batch_bytes else 0.0
        batch_eta = self.seconds(self.loads[self.batch] * share, now)
        later = self.seconds(sum(self.loads[self.batch + 1:]), now)
        return Waiting(number, remaining, event.done, self.total, controller, connected,
                       bytes_done=copied, bytes_total=self.bytes_total,
                       batch_bytes_done=batch_bytes - bytes_left, batch_bytes_total=batch_bytes,
                       rate=rate, batch_eta=batch_eta,
                       eta=None if batch_eta is None or later is None else batch_eta + later)

    def seconds(self, load: float, now: float) -> float | None:
        """Seconds the model gives ``load``: at the throttle, or at the pace measured so far
        (None before anything finished)."""
        if self.throttle is not None:
            return load / self.throttle
        elapsed = now - self.started
        if self.finished_load <= 0 or elapsed <= 0:
            return None
        return load * elapsed / self.finished_load

    def left(self, now: float, *, after: bool) -> float | None:
        """Seconds the model gives the batches still to run: those after the batch in flight
        (``after``) or from it on; None without sizes (the loads count partitions then) or
        before a pace is known."""
        if self.sizes is None:
            return None
        return self.seconds(sum(self.loads[self.batch + (1 if after else 0):]), now)

    def finish(self, size: int) -> None:
        """The batch in flight is complete (``size`` partitions were submitted)."""
        self.done = self._base_done + size
        self.copied += 0 if self.sizes is None else self.sizes[self.batch]
        self.finished_load += self.loads[self.batch]

    @property
    def bytes_done(self) -> int | None:
        return None if self.sizes is None else self.copied
