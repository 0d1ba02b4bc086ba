"""``reassign --metrics-file PATH``: a run's progress as a Prometheus text-format file, kept
current for node_exporter's textfile collector. An adapter: it consumes the executor's progress
events (:mod:`kadmin.events`), the same values the progress bar and ``--json`` show, and writes
them with prometheus_client (a CollectorRegistry, then ``write_to_textfile``, which writes a
temporary file and renames it over the old one, so a scrape never reads half a file).

The file rule of every kadmin writer holds: the path may name a regular file (replaced) or
nothing; a symbolic link, a folder, a FIFO or a device is refused before the run starts, and
checked again before every write. Every sample carries the label ``plan`` (the plan file as
named), so several runs on one host can write files side by side.

Metrics (gauges): ``kadmin_reassign_partitions{state="total|done|remaining"}``,
``kadmin_reassign_bytes{state=...}`` (with partition sizes), ``kadmin_reassign_batch`` (the
batch in flight, from 1; the last one once done) and ``kadmin_reassign_batches``,
``kadmin_reassign_throttle_bytes_per_second`` (0: none), ``kadmin_reassign_eta_seconds`` (the
schedule's model for what is left, NaN when it cannot tell: without sizes, or without a
throttle before a batch has finished), ``kadmin_reassign_last_update_timestamp_seconds``,
``kadmin_reassign_finished`` (1 once the run ended, 0 before) and
``kadmin_reassign_failed_partitions``. The file is left in place at the end, marked finished.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

from prometheus_client import CollectorRegistry, Gauge, write_to_textfile

from kadmin import files
from kadmin.events import (
    BatchDone,
    BatchResumed,
    BatchSubmitted,
    Event,
    ExecutionPlanned,
    Finished,
    ThrottleCleared,
    ThrottleSet,
    TimedOut,
    Waiting,
)

PREFIX = "kadmin_reassign"


class MetricsFile:
    """The metrics of one run of ``plan``, written to ``path`` after each event of the
    reassignment (an election that ``--elect`` runs after it is not counted)."""

    def __init__(self, path: Path, plan: str, clock: Callable[[], float] = time.time) -> None:
        files.check_place(path, True)
        self.path, self.clock = path, clock
        self.registry = CollectorRegistry()
        labels = {"plan": plan}

        def gauge(name: str, text: str, states: bool = False) -> Gauge:
            return Gauge(f"{PREFIX}_{name}", text, ["plan", *(("state",) if states else ())],
                         registry=self.registry)

        self.partitions = gauge("partitions", "Partitions of the plan: total, done, remaining.",
                                states=True)
        self.bytes = gauge("bytes", "Bytes the plan copies: total, done, remaining (with "
                                    "partition sizes).", states=True)
        self.batch = gauge("batch", "The batch in flight, from 1 (the last one once done).")
        self.batches = gauge("batches", "Batches this run submits.")
        self.throttle = gauge("throttle_bytes_per_second",
                              "Replication throttle of the batch in flight (0: none).")
        self.eta = gauge("eta_seconds", "Seconds left by the schedule's model (NaN: unknown).")
        self.updated = gauge("last_update_timestamp_seconds", "When this file was written.")
        self.finished = gauge("finished", "1 once the run has ended (done, failed or timed "
                                          "out).")
        self.failed = gauge("failed_partitions", "Partitions that failed or were still in "
                                                 "flight at the end.")
        self.labels = labels
        self.total = 0
        self.bytes_total: int | None = None
        self.over = False
        self.written = False
        for g in (self.batch, self.batches, self.throttle, self.finished, self.failed):
            g.labels(**labels).set(0)
        self.eta.labels(**labels).set(math.nan)

    def __call__(self, event: Event) -> None:
        if self.over:
            return
        if isinstance(event, ExecutionPlanned):
            if event.operation != "reassign":
                return
            self.total, self.bytes_total = event.total, event.bytes_total
            self.batches.labels(**self.labels).set(event.batches)
            self._done(event.unchanged + event.already_done, event.bytes_done)
            self._eta(event.eta)
        elif isinstance(event, BatchSubmitted | BatchResumed):
            self.batch.labels(**self.labels).set(event.batch)
        elif isinstance(event, ThrottleSet):
            self.throttle.labels(**self.labels).set(event.rate)
        elif isinstance(event, ThrottleCleared):
            self.throttle.labels(**self.labels).set(0)
        elif isinstance(event, Waiting):
            self._done(event.done, event.bytes_done)
            self._eta(event.eta)
        elif isinstance(event, BatchDone):
            self.batch.labels(**self.labels).set(event.batch)
            self._done(event.done, event.bytes_done)
            self._eta(event.eta)
        elif isinstance(event, TimedOut):
            self.failed.labels(**self.labels).set(event.remaining)
            self._ended()
        elif isinstance(event, Finished):
            self.failed.labels(**self.labels).set(event.failed)
            if event.ok:
                self._eta(0.0)
            self._ended()
        else:
            return
        self.write()

    def _done(self, done: int, bytes_done: int | None) -> None:
        self.partitions.labels(state="total", **self.labels).set(self.total)
        self.partitions.labels(state="done", **self.labels).set(done)
        self.partitions.labels(state="remaining", **self.labels).set(self.total - done)
        if self.bytes_total is not None and bytes_done is not None:
            self.bytes.labels(state="total", **self.labels).set(self.bytes_total)
            self.bytes.labels(state="done", **self.labels).set(bytes_done)
            self.bytes.labels(state="remaining", **self.labels).set(self.bytes_total - bytes_done)

    def _eta(self, seconds: float | None) -> None:
        self.eta.labels(**self.labels).set(math.nan if seconds is None else seconds)

    def _ended(self) -> None:
        self.finished.labels(**self.labels).set(1)
        self.over = True

    def close(self) -> None:
        """The run has ended, however (an error, Ctrl-C): a file written before is marked
        finished; none is written by a run that ended before its first event."""
        if self.written and not self.over:
            self._ended()
            self.write()

    def write(self) -> None:
        """The registry to the file, atomically; refused (and nothing written) if the path has
        become something other than a regular file."""
        self.updated.labels(**self.labels).set(self.clock())
        files.check_target(self.path, True)
        write_to_textfile(str(self.path), self.registry)
        self.written = True
