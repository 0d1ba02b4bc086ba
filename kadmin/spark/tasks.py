"""What Spark tasks run: the per-partition steps of the planners, over plain records. Imports only
the standard library and kadmin's pure core (no pyspark, jsonschema, kazoo, typer or rich), so an
executor whose Python has nothing but PySpark and the shipped kadmin.zip can run it; the drivers
(:mod:`kadmin.spark.plan`, :mod:`kadmin.spark.rebalance`) pass these functions to Spark.
See :mod:`kadmin.spark.plan` for the steps."""

from __future__ import annotations

import heapq
import zlib
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from operator import add, itemgetter
from typing import NamedTuple

from kadmin import files, placement, snapshots
from kadmin.balance.part import Counts, Part, PartTotals
from kadmin.balance.table import PartitionTable
from kadmin.model import (
    InvalidInput,
    PartitionMove,
    TopicAssignment,
)
from kadmin.zk import codec

SAMPLE_SIZE = 10_000
"""Topic names sampled to choose the range bounds of the sort (see :func:`range_bounds`)."""


ENTRIES_PER_RECORD = 1_024
"""Encoded entries shipped as one record: one pickled tuple instead of a thousand small ones."""


class ScanResult(NamedTuple):
    """One input split after the scan (step 1)."""

    lines: int
    topics: int
    partitions: int
    sample: tuple[tuple[int, str, int], ...]
    """(sample key, topic, partitions) of the split's SAMPLE_SIZE topics of smallest key."""
    other_replicas: Counter[int]
    other_leaders: Counter[int]
    bad_line: tuple[int, bytes] | None
    """(line number within the split, the line) of the first line that does not parse."""


class CountResult(NamedTuple):
    """One sorted Spark partition after the count (step 3)."""

    topics: int
    partitions: int
    duplicate: str | None
    problem: str | None
    """The first ``placement.check_topic`` refusal, in topic order."""


class PlaceTotals(NamedTuple):
    """The trailing record of one placed Spark partition (step 4)."""

    moves: int
    unchanged: int
    replica_moves: int
    leader_changes: int
    replicas_before: Counter[int]
    replicas_after: Counter[int]
    leaders_before: Counter[int]
    leaders_after: Counter[int]

    def plus(self, other: PlaceTotals) -> PlaceTotals:
        return PlaceTotals._make(map(add, self, other))


def _selected(name: str, selection: frozenset[str] | None) -> bool:
    return selection is None or name in selection


def scan_split(lines: Iterable[bytes], selection: frozenset[str] | None, source: str
               ) -> Iterator[ScanResult]:
    """Step 1 for one input split (see the module docstring)."""
    sample: list[tuple[int, str, int]] = []  # a heap: (-key, name, partitions), largest key on top
    other_replicas: Counter[int] = Counter()
    other_leaders: Counter[int] = Counter()
    count = topics = partitions = 0
    bad: tuple[int, bytes] | None = None
    for count, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            name, assignment = snapshots.parse_topic_line(line, source)
        except InvalidInput:
            # at most one byte past the line limit travels back: enough to be refused again
            bad = (count, line[:files.MAX_JSONL_LINE + 1])
            break
        if not _selected(name, selection):
            other_replicas.update(chain.from_iterable(assignment.values()))
            other_leaders.update(r[0] for r in assignment.values() if r)
            continue
        topics += 1
        partitions += len(assignment)
        key = -sample_key(name)
        if len(sample) < SAMPLE_SIZE:
            heapq.heappush(sample, (key, name, len(assignment)))
        elif key > sample[0][0]:
            heapq.heapreplace(sample, (key, name, len(assignment)))
    yield ScanResult(count, topics, partitions,
                     tuple((-key, name, n) for key, name, n in sample),
                     other_replicas, other_leaders, bad)


def sample_key(name: str) -> int:
    """A topic's rank for the sample: a hash of its name that every process computes alike
    (Python's own ``hash`` of a string differs from one process to the next)."""
    return zlib.crc32(name.encode("utf-8"))


def keyed_topics(lines: Iterable[bytes], selection: frozenset[str] | None, source: str
                 ) -> Iterator[tuple[str, TopicAssignment]]:
    """The selected topics of an input split (the scan has already proven every line parses)."""
    for line in lines:
        if line.strip():
            name, assignment = snapshots.parse_topic_line(line, source)
            if _selected(name, selection):
                yield name, assignment


def range_bounds(scans: Sequence[ScanResult], n_ranges: int) -> list[str]:
    """Topic names that cut the sample into ``n_ranges`` runs of similar partition counts.

    The sample is the SAMPLE_SIZE selected topics of smallest :func:`sample_key` over the whole
    file, merged from each split's own smallest: the same topics however the file was split,
    so the bounds depend only on the snapshot and ``n_ranges``."""
    kept = heapq.nsmallest(SAMPLE_SIZE, chain.from_iterable(s.sample for s in scans))
    weighted = sorted((name, n) for _, name, n in kept)
    total = sum(n for _, n in weighted)
    bounds: list[str] = []
    step, passed = total / n_ranges, 0.0
    for name, weight in weighted:
        passed += weight
        if passed >= step * (len(bounds) + 1) and len(bounds) < n_ranges - 1 and (
                not bounds or name > bounds[-1]):
            bounds.append(name)
    return bounds


def range_of(bounds: Sequence[str], name: str) -> int:
    """Spark partition of a topic: names up to ``bounds[0]`` go to 0, and so on."""
    return bisect_left(bounds, name)


def sort_run(records: Iterable[tuple[str, TopicAssignment]]
             ) -> list[tuple[str, TopicAssignment]]:
    return sorted(records, key=itemgetter(0))


def count_run(records: Iterable[tuple[str, TopicAssignment]], ring_size: int,
              options: placement.PlacementOptions) -> Iterator[CountResult]:
    """Step 3 for one sorted Spark partition."""
    topics = partitions = 0
    previous = duplicate = problem = None
    for name, assignment in records:
        if name == previous and duplicate is None:
            duplicate = name
        previous = name
        topics += 1
        partitions += len(assignment)
        if problem is None and assignment:  # a topic without partitions has nothing to place
            try:
                placement.check_topic(len(assignment),
                                      placement.replication_factor_of(assignment, options),
                                      ring_size, name)
            except InvalidInput as error:
                problem = str(error)
    yield CountResult(topics, partitions, duplicate, problem)


def place_run(index: int, records: Iterable[tuple[str, TopicAssignment]], first_counters: Sequence[int],
              ring: placement.BrokerRing, options: placement.PlacementOptions
              ) -> Iterator[tuple[bytes, ...] | PlaceTotals]:
    """Step 4 for one sorted Spark partition: its encoded moves in order, then its totals."""
    counter = first_counters[index]
    moves = unchanged = replica_moves = leader_changes = 0
    replicas_before: Counter[int] = Counter()
    replicas_after: Counter[int] = Counter()
    leaders_before: Counter[int] = Counter()
    leaders_after: Counter[int] = Counter()
    entries: list[bytes] = []
    for name, current in records:
        rf = placement.replication_factor_of(current, options)
        target = placement.place_topic(current, ring, rf, counter, options)
        counter += len(current)
        replicas_before.update(chain.from_iterable(current.values()))
        leaders_before.update(r[0] for r in current.values() if r)
        replicas_after.update(chain.from_iterable(target.values()))
        leaders_after.update(r[0] for r in target.values())
        for partition, new in target.items():  # ascending partition ids
            old = current[partition]
            if old == new:
                unchanged += 1
                continue
            moves += 1
            replica_moves += len(set(new) - set(old))
            leader_changes += old[:1] != new[:1]
            entries.append(codec.encode_reassignment_entry(PartitionMove(name, partition, new)))
        if len(entries) >= ENTRIES_PER_RECORD:
            yield tuple(entries)
            entries = []
    if entries:
        yield tuple(entries)
    yield PlaceTotals(moves, unchanged, replica_moves, leader_changes, replicas_before,
                      replicas_after, leaders_before, leaders_after)


# --- the rebalancer's tasks ----------------------------------------------------------------------


def load_part(records: Iterable[tuple[str, TopicAssignment]]) -> Iterator[Part | str]:
    """One sorted Spark partition as one chunk; or, when a topic is on two lines (so no table
    can be made), that topic's name, for the driver to report before anything is planned."""
    topics: list[tuple[str, TopicAssignment]] = []
    for name, assignment in records:
        if topics and topics[-1][0] == name:
            yield name
            return
        topics.append((name, assignment))
    yield Part(PartitionTable.of(topics), {})


EXACT_PROGRAM_MODULES = ("numpy", "scipy.optimize", "scipy.sparse")
"""What :mod:`kadmin.balance.evenness`'s exact program imports where it runs."""


def exact_program_missing(_: object = None) -> str | None:
    """The first module of the exact program this Python cannot import (None: it has them
    all): the driver asks one executor before it hands the program to the tasks."""
    import importlib

    for name in EXACT_PROGRAM_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            return name
    return None


def first_counts(part: Part | str) -> tuple[Counts | None, str | None]:
    return (None, part) if isinstance(part, str) else (part.counts(), None)


def encode_parts(parts: Iterable[Part], targets: Sequence[int]
            ) -> Iterator[tuple[bytes, ...] | PartTotals]:
    for part in parts:
        entries = [codec.encode_reassignment_entry(move) for move in part.moves()]
        for start in range(0, len(entries), ENTRIES_PER_RECORD):
            yield tuple(entries[start:start + ENTRIES_PER_RECORD])
        yield part.totals(targets)
