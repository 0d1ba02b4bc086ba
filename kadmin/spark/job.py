"""The Spark bulk planner: ``kadmin spark plan``, and ``spark-submit kadmin/spark/job.py``.

It writes the plan ``kadmin plan generate`` would write for the same snapshot and options, but
for estates whose topics do not fit one machine's patience: the placement, the diff against the
current assignment and the znode encoding run in parallel, and the driver never holds more than
one Spark partition of topics plus one batch. The output is a folder of numbered batch files
(``batch-00001.json``...), each a Kafka reassignment file whose bytes are exactly the
``/admin/reassign_partitions`` payload that ``plans.reassignment_batches`` would have cut, plus
``manifest.json``.

Why the plan is identical, step by step (the single-machine reference is ``placement.place``,
the diff of ``kadmin plan generate`` and ``plans.reassignment_batches``):

1. Scan (one pass over ``topics.jsonl``, split by bytes): parse every line with the snapshot
   reader's own line parser; count lines, selected topics and their partitions; count the
   replicas and preferred leaders of the *unselected* topics (they are part of the before/after
   broker load, as in ``plans.plan_stats``); and keep a sample of the selected topics with
   their partition counts: those whose names hash smallest, so the same however the file is
   split. A bad line comes back as data (split, line in the split,
   text); the driver turns it into the global line number from the line counts of the splits
   before it and re-parses that one line, so the message is the snapshot reader's.
2. Sort: the sample gives range bounds; ``partitionBy`` with a bisect over the bounds, then a
   sort inside each Spark partition, makes every Spark partition a contiguous run of topic
   names in Python's string order (the order ``place`` uses), in ascending partition order.
   There is no global window and nothing funnels through one task.
3. Count (on the sorted data, persisted): per Spark partition the number of topics and
   partitions, a duplicate topic name, and the first topic ``placement.check_topic`` refuses.
   The driver receives one small tuple per Spark partition; the prefix sums over their partition
   counts are each Spark partition's value of the global placement counter at its first topic.
4. Place: each task walks its topics in order, advancing the counter locally, so every topic gets
   exactly the offset ``placement.topic_offsets`` gives it over the whole sorted list; it calls
   ``placement.place_topic`` with the broadcast ``BrokerRing``, keeps the partitions whose
   target differs from the current replicas, and encodes each as its znode entry
   (``codec.encode_reassignment_entry``) in parallel. Per-broker counts and the partition
   totals travel as one trailing record per Spark partition. The result is persisted and
   materialised by one parallel action.
5. Batch and write (driver): batching is a greedy cut over the whole sorted list, sequential by
   nature. ``toLocalIterator`` streams the Spark partitions in order, one (plus one prefetched)
   at a time; the encoded entries go through ``plans.batches`` itself in bounded windows. A
   greedy cut restarted at a batch boundary cuts the rest exactly as the uninterrupted run, so
   every batch but a window's last is final and written at once, and the last is carried into
   the next window. Driver memory is one Spark partition plus one window (and a line per batch
   file for the manifest), whatever the partition count.

Steps 1, 2 and 5, the input checks and the Spark session are shared with the Spark rebalancer
(:mod:`kadmin.spark.rebalance`), which puts its own balancing where steps 3 and 4 are. Each
Spark action runs under a stage name, and its tasks are reported as they finish
(:class:`Stages`) while Spark's own log stays out of the terminal (:func:`spark_session`).

The folder appears atomically: everything is written into a hidden temp sibling (manifest last)
that is renamed to ``--out`` at the end, and removed on any failure, so a folder named ``--out``
is always complete. An existing ``--out`` is refused unless ``force``.

Executors import kadmin from a zip of this very package that the driver ships with the job, so a
cluster needs nothing installed but PySpark. The snapshot folder must be readable at the same
path by the driver and every executor (local disk in local mode, a shared mount on a cluster).
"""

from __future__ import annotations

import atexit
import hashlib
import heapq
import os
import shutil
import sys
import tempfile
import threading
import zipfile
import zlib
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import partial, reduce
from itertools import chain
from operator import add, itemgetter
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar, cast

if __name__ == "__main__" and not __package__:
    # spark-submit runs this file as a script: its own folder, not the repository, is on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pyspark import RDD, Broadcast, SparkConf, SparkContext, StorageLevel
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

import kadmin
from kadmin import files, placement, plans, snapshots
from kadmin.events import PlannerEvent, PlannerNote, StageProgress
from kadmin.model import (
    LIST_LIMIT,
    Broker,
    InvalidInput,
    PartitionMove,
    TopicAssignment,
    TopicPartition,
    and_more,
)
from kadmin.zk import codec

BROKERS_FILE = snapshots.BROKERS_FILE
TOPICS_FILE = snapshots.TOPICS_FILE
MANIFEST_FILE = "manifest.json"
MANIFEST_VERSION = 1

BYTES_PER_SPLIT = 16 * 2**20
"""Input split of the scan; small enough that both cores of a small machine stay busy."""
PARTITIONS_PER_TASK = 100_000
"""Kafka partitions per sorted Spark partition: the unit the driver streams (a few MB of entries)."""
SAMPLE_SIZE = 10_000
"""Topic names sampled to choose the range bounds of the sort (see :func:`range_bounds`)."""
ENTRIES_PER_RECORD = 1_024
"""Encoded entries shipped as one record: one pickled tuple instead of a thousand small ones."""
WINDOW_ENTRIES = 64_000
"""Entries the driver batches at a time (then carries the open batch into the next window)."""
ENVELOPE = len(codec.REASSIGNMENT_PREFIX) + len(codec.REASSIGNMENT_SUFFIX)
"""Bytes of a reassignment znode around its list of entries."""


def batch_file_name(number: int) -> str:
    return f"batch-{number:05d}.json"


# --- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchFile:
    file: str
    partitions: int
    bytes: int
    """Size of the file, which is exactly the size of the znode it becomes."""


@dataclass(frozen=True)
class Manifest:
    """What ``manifest.json`` records: the batches in order, the totals, the options and the input.

    ``stats`` has the meaning of ``plans.plan_stats`` for the plan of all batches, except that
    ``stats.unchanged`` counts the selected partitions already in place (they are in no batch).
    """

    batches: tuple[BatchFile, ...]
    topics: int
    partitions: int
    """Partitions in the batch files: those whose target differs from the current replicas."""
    unchanged: int
    stats: plans.PlanStats
    options: placement.PlacementOptions
    target_brokers: tuple[int, ...]
    all_topics: bool
    batch_size: int
    max_znode_bytes: int
    fingerprint: Mapping[str, Mapping[str, Any]]
    """Per input file: its size and sha256, so a plan can be matched to the snapshot it came from."""

    def document(self) -> dict[str, Any]:
        return {
            "version": MANIFEST_VERSION,
            "kind": "reassign",
            "batches": [asdict(b) for b in self.batches],
            "topics": self.topics,
            "partitions": self.partitions,
            "unchanged": self.unchanged,
            "placed": self.partitions + self.unchanged,
            "replica_moves": self.stats.replica_moves,
            "leader_changes": self.stats.leader_changes,
            "brokers": [asdict(b) for b in self.stats.brokers],
            "options": {
                "strategy": self.options.strategy.value,
                "replication_factor": self.options.replication_factor,
                "start_index": self.options.start_index,
                "start_partition": self.options.start_partition,
                "rack_aware": self.options.rack_aware,
                "target_brokers": list(self.target_brokers),
                "all_topics": self.all_topics,
                "batch_size": self.batch_size,
                "max_znode_bytes": self.max_znode_bytes,
            },
            "input": {name: dict(value) for name, value in self.fingerprint.items()},
        }


# --- per-task records ---------------------------------------------------------------------------


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


# --- the driver ---------------------------------------------------------------------------------


Progress = Callable[[PlannerEvent], None]
"""Where a planner reports its stages and findings (the CLI shows them on stderr)."""


def run_plan(cluster_dir: Path, out_dir: Path, *, topics: Sequence[str] | None = None,
             brokers: Sequence[int] | None = None,
             options: placement.PlacementOptions = placement.PlacementOptions(),  # noqa: B008
             master: str | None = "local[*]", batch_size: int = 1000,
             max_znode_bytes: int = 1_000_000, force: bool = False, verbose: bool = False,
             progress: Progress | None = None) -> Manifest:
    """Plan ``topics`` (None: every topic) of the snapshot folder ``cluster_dir`` onto ``brokers``
    (None: every broker) and write the batch files and manifest to ``out_dir``.

    ``master`` None uses the launcher's (spark-submit's) master; an active SparkSession is used
    as it is and left running. Input errors raise InvalidInput before anything is written.
    """
    check_output(out_dir, force, batch_size, max_znode_bytes)
    if options.start_index is not None and options.start_index < 0:
        raise InvalidInput(f"start index {options.start_index} must be at least 0")
    selection = selection_of(topics, "no topics to place")
    check_snapshot_folder(cluster_dir, selection)
    cluster_brokers = snapshots.read_brokers(cluster_dir / BROKERS_FILE)
    ring = placement.BrokerRing.of(_target_brokers(cluster_brokers, brokers), options.rack_aware)
    fingerprint = fingerprints(cluster_dir)

    with spark_session(master, verbose) as spark:
        sc = spark.sparkContext
        ship_kadmin(sc)
        stages = Stages(sc, progress)
        chunks = sorted_topics(sc, cluster_dir / TOPICS_FILE, selection, stages,
                               empty="no topics to place", ranges_at_least=sc.defaultParallelism)
        try:
            planned = _placed(sc, chunks, selection, ring, options, stages)
        finally:
            chunks.release()

        def manifest(written: Sequence[BatchFile], trailers: Sequence[Any]) -> Manifest:
            totals = reduce(PlaceTotals.plus, trailers)
            return Manifest(
                batches=tuple(written), topics=chunks.found, partitions=totals.moves,
                unchanged=totals.unchanged, stats=_stats(totals, chunks.scans, cluster_brokers),
                options=options, target_brokers=ring.ids, all_topics=selection is None,
                batch_size=batch_size, max_znode_bytes=max_znode_bytes,
                fingerprint=fingerprint)

        try:
            return write_folder(out_dir, planned, manifest, batch_size=batch_size,
                                max_znode_bytes=max_znode_bytes, force=force, stages=stages)
        finally:
            planned.unpersist()


def check_output(out_dir: Path, force: bool, batch_size: int, max_znode_bytes: int) -> None:
    """The output options, refused before Spark starts."""
    files.check_target(out_dir, force, marker=MANIFEST_FILE)
    plans.batches((), len, ENVELOPE, batch_size, max_znode_bytes)  # refuses bad limits now


def selection_of(topics: Sequence[str] | None, empty: str) -> frozenset[str] | None:
    selection = None if topics is None else frozenset(topics)
    if selection is not None and not selection:
        raise InvalidInput(empty)
    return selection


def check_snapshot_folder(cluster_dir: Path, selection: frozenset[str] | None) -> None:
    """A snapshot folder, and none of the selected topics in flight (the Conflict of the
    single-machine planners, from the folder's reassigning.jsonl, a few lines read here)."""
    if not cluster_dir.is_dir():
        raise InvalidInput(f"{cluster_dir}: the Spark planner reads a snapshot folder "
                           f"({BROKERS_FILE}, {TOPICS_FILE}); write one with "
                           "`kadmin cluster snapshot --format dir`")
    snapshots.require_members(cluster_dir)
    topics = cluster_dir / TOPICS_FILE
    files.require_regular(topics)  # Spark opens it by name
    files.check_jsonl_size(topics, topics.stat().st_size)  # the limits of every reader
    path = cluster_dir / snapshots.REASSIGNING_FILE
    if path.is_file():
        reassigning = {name: moving for _, name, moving in snapshots.iter_reassigning_jsonl(path)}
        plans.refuse_moving(reassigning, lambda tp: selection is None or tp.topic in selection,
                            "no plan is made for their topics")


def fingerprints(cluster_dir: Path) -> dict[str, dict[str, Any]]:
    """Per input file: its size and sha256, so a plan can be matched to the snapshot it came
    from."""
    out = {}
    for name in (BROKERS_FILE, TOPICS_FILE):
        digest = hashlib.sha256()
        with (cluster_dir / name).open("rb") as handle:
            while chunk := handle.read(2**20):
                digest.update(chunk)
        out[name] = {"bytes": (cluster_dir / name).stat().st_size, "sha256": digest.hexdigest()}
    return out


class Sorted(NamedTuple):
    """The selected topics, read and sorted (steps 1 and 2)."""

    lines: RDD[bytes]
    scans: list[ScanResult]
    ranged: RDD[tuple[str, TopicAssignment]]
    """Every Spark partition a contiguous run of topic names in order, sorted inside
    (computed by the first action on it)."""
    found: int
    """Selected topics found."""
    selected: Broadcast[frozenset[str] | None]
    source: str

    def check(self, duplicate: str | None, selection: frozenset[str] | None) -> None:
        """The input errors every planner refuses once it has looked at the sorted topics: a
        topic on two lines, selected topics the snapshot lacks."""
        if duplicate is not None:
            _raise_duplicate(self.lines, duplicate, self.source)
        if selection is not None and self.found != len(selection):
            _raise_unknown(self.lines.context.parallelize(sorted(selection))
                           .subtract(self.ranged.keys()), len(selection) - self.found)

    def release(self) -> None:
        self.ranged.unpersist()
        self.selected.unpersist()


def sorted_topics(sc: SparkContext, topics_path: Path, selection: frozenset[str] | None,
                  stages: Stages, *, empty: str | None, ranges_at_least: int,
                  persist: bool = True) -> Sorted:
    """Steps 1 and 2 (scan, then the range partitioning and sort, left to the first action on
    ``ranged``) into at least ``ranges_at_least`` Spark partitions, more for big inputs (one
    per PARTITIONS_PER_TASK). A line that does not parse is raised here; ``empty`` is the error
    for a snapshot without topics (None: no error). Without ``persist`` (a caller that reads
    ``ranged`` once) a second read redoes the sort from Spark's shuffle files."""
    source = str(topics_path)
    selected = sc.broadcast(selection)
    splits = max(2 * sc.defaultParallelism, -(-topics_path.stat().st_size // BYTES_PER_SPLIT))
    lines = cast("RDD[bytes]", sc.textFile(  # bytes, not str: use_unicode=False
        topics_path.resolve().as_uri(), minPartitions=splits, use_unicode=False))
    with stages(f"read {topics_path.name}"):
        scans = lines.mapPartitions(lambda it: scan_split(it, selected.value, source)).collect()
    _raise_bad_line(scans, source)
    found = sum(s.topics for s in scans)
    partitions = sum(s.partitions for s in scans)
    if not found and selection is None and empty is not None:
        raise InvalidInput(empty)
    stages.note(f"{found:,} topic(s) with {partitions:,} partition(s) selected in "
                f"{topics_path.name}")
    bounds = range_bounds(scans, max(ranges_at_least, -(-partitions // PARTITIONS_PER_TASK)))
    ranged = (lines.mapPartitions(lambda it: keyed_topics(it, selected.value, source))
              .partitionBy(len(bounds) + 1, partial(range_of, bounds))
              .mapPartitions(sort_run, preservesPartitioning=True))
    if persist:
        ranged.persist(StorageLevel.MEMORY_AND_DISK)
    return Sorted(lines, scans, ranged, found, selected, source)


def _placed(sc: SparkContext, chunks: Sorted, selection: frozenset[str] | None,
            ring: placement.BrokerRing, options: placement.PlacementOptions, stages: Stages
            ) -> RDD[Any]:
    """Steps 3 and 4: the placed, encoded moves (persisted and materialised). Every input
    error is raised before anything is written, in the order ``place`` checks: the file, no
    topics, unknown topics, each topic."""
    with stages("sort and count topics"):
        counts = chunks.ranged.mapPartitions(lambda it: count_run(it, ring.size, options)).collect()
    chunks.check(next((c.duplicate for c in counts if c.duplicate is not None), None), selection)
    problem = next((c.problem for c in counts if c.problem is not None), None)
    if problem is not None:
        raise InvalidInput(problem)
    first_counters = placement.topic_offsets([c.partitions for c in counts],
                                             placement.counter_start(options))
    shared_ring = sc.broadcast(ring)
    planned = chunks.ranged.mapPartitionsWithIndex(
        lambda i, it: place_run(i, it, first_counters, shared_ring.value, options)
    ).persist(StorageLevel.MEMORY_AND_DISK)
    with stages("place partitions"):
        planned.count()  # every Spark partition in parallel, before the driver streams them
    return planned


class Stages:
    """Runs the driver's Spark actions under a name and reports their tasks as they finish,
    polled from the status tracker (twice a second), so a long action shows it is alive."""

    def __init__(self, sc: SparkContext, progress: Progress | None) -> None:
        self.sc, self.progress = sc, progress
        self.started = 0

    def note(self, text: str) -> None:
        if self.progress is not None:
            self.progress(PlannerNote(text))

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        if self.progress is None:
            yield
            return
        report = self.progress
        self.started += 1
        group = f"kadmin-{self.started}"
        self.sc.setJobGroup(group, stage)
        stop = threading.Event()

        def poll() -> None:
            last = None
            while not stop.wait(0.5):
                now = self._tasks(group)
                if now != last and now[1]:
                    report(StageProgress(stage, *now))
                    last = now

        report(StageProgress(stage, 0, 0))
        watcher = threading.Thread(target=poll, name="kadmin-spark-progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()
            self.sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        done, total = self._tasks(group)
        report(StageProgress(stage, done, total, finished=True))

    def _tasks(self, group: str) -> tuple[int, int]:
        tracker = self.sc.statusTracker()
        done = total = 0
        for job_id in tracker.getJobIdsForGroup(group):
            job_info = tracker.getJobInfo(job_id)
            for stage_id in job_info.stageIds if job_info else ():
                info = tracker.getStageInfo(stage_id)
                # stages that never ran (skipped: their output is cached) do not count
                if info is not None and info.numActiveTasks + info.numCompletedTasks:
                    done += info.numCompletedTasks
                    total += info.numTasks
        return done, total


def _raise_bad_line(scans: Sequence[ScanResult], source: str) -> None:
    """The first unparsable line by its line number in the whole file, re-parsed here so that
    the message is exactly the snapshot reader's."""
    lines_before = 0
    for scan in scans:
        if scan.bad_line is not None:
            number, text = scan.bad_line
            snapshots.parse_topic_line(text, f"{source}:{lines_before + number}")
            raise AssertionError(f"{source}:{lines_before + number} failed on an executor only")
        lines_before += scan.lines


def _raise_duplicate(lines: RDD[bytes], name: str, source: str) -> None:
    """A topic on two lines, named by both line numbers (the error path can afford a pass)."""
    first, second = (lines.zipWithIndex()
                     .filter(lambda pair: bool(pair[0].strip())
                             and snapshots.parse_topic_line(pair[0], source)[0] == name)
                     .map(lambda pair: pair[1] + 1)
                     .takeOrdered(2))
    raise InvalidInput(f"{source}:{second}: $.topic: topic {name} is already on line {first}")


def _raise_unknown(missing: RDD[str], count: int) -> None:
    """``place``'s refusal of selected topics that the snapshot does not have."""
    shown = missing.takeOrdered(LIST_LIMIT)
    raise InvalidInput(f"unknown topic {shown[0]}" + (f" {and_more(count - 1)}" if count > 1
                                                       else ""),
                       tuple(f"unknown topic {t}" for t in shown), more=count - len(shown))


class Documented(Protocol):
    def document(self) -> dict[str, Any]: ...


M = TypeVar("M", bound=Documented)


def write_folder(out_dir: Path, planned: RDD[Any], manifest: Callable[[Sequence[BatchFile],
                                                                       Sequence[Any]], M],
                 *, batch_size: int, max_znode_bytes: int, force: bool, stages: Stages) -> M:
    """Step 5 into a new folder, atomically: the batch files, then ``manifest`` (made of the
    batch files and the trailing records of every Spark partition) as manifest.json."""
    with stages("write batch files"), files.atomic_dir(out_dir, marker=MANIFEST_FILE, force=force) as folder:
        written, trailers = _write_batches(planned, folder, batch_size, max_znode_bytes)
        result = manifest(written, trailers)
        files.atomic_write_json(folder / MANIFEST_FILE, result.document())
    stages.note(f"{sum(b.partitions for b in written):,} partition(s) in {len(written):,} "
                f"batch file(s)")
    return result


def _write_batches(planned: RDD[Any], folder: Path, batch_size: int, max_znode_bytes: int
                   ) -> tuple[list[BatchFile], list[Any]]:
    """Step 5: stream the encoded moves in order, cut them with ``plans.batches``, write each
    batch as soon as it is final. Records that are not tuples of entries (each Spark
    partition's totals) are returned in order."""
    written: list[BatchFile] = []
    trailers: list[Any] = []
    window: list[bytes] = []

    def cut(final: bool) -> list[bytes]:
        """Write the window's final batches; return the entries of the one still open."""
        batches = plans.batches(window, len, ENVELOPE, batch_size, max_znode_bytes,
                                label=_entry_label)
        done = len(batches) if final else len(batches) - 1
        for batch in batches[:done]:
            written.append(_write_batch(folder, len(written) + 1, batch))
        return list(batches[done]) if done < len(batches) else []

    for record in planned.toLocalIterator(prefetchPartitions=True):
        if not isinstance(record, tuple) or isinstance(record, PlaceTotals):
            trailers.append(record)
        else:
            window.extend(record)
            if len(window) >= WINDOW_ENTRIES:
                window = cut(final=False)
    cut(final=True)
    return written, trailers


def _entry_label(entry: bytes) -> TopicPartition:
    return codec.decode_reassignment(codec.REASSIGNMENT_PREFIX + entry
                                     + codec.REASSIGNMENT_SUFFIX)[0].tp


def _write_batch(folder: Path, number: int, entries: Sequence[bytes]) -> BatchFile:
    """One batch file: exactly the znode payload (a Kafka reassignment file, compact)."""
    name = batch_file_name(number)
    data = codec.REASSIGNMENT_PREFIX + b",".join(entries) + codec.REASSIGNMENT_SUFFIX
    with (folder / name).open("xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return BatchFile(name, len(entries), len(data))


def _stats(totals: PlaceTotals, scans: Sequence[ScanResult],
           cluster_brokers: Mapping[int, Broker]) -> plans.PlanStats:
    """``plans.plan_stats`` of the plan, over the whole cluster: the topics outside the selection
    count with their current replicas before and after."""
    other_replicas = sum((s.other_replicas for s in scans), Counter())
    other_leaders = sum((s.other_leaders for s in scans), Counter())
    before_r, after_r = other_replicas + totals.replicas_before, other_replicas + totals.replicas_after
    before_l, after_l = other_leaders + totals.leaders_before, other_leaders + totals.leaders_after
    ids = sorted(set(cluster_brokers) | set(before_r) | set(after_r))
    return plans.PlanStats(
        totals.moves, totals.unchanged, totals.replica_moves, totals.leader_changes,
        tuple(plans.BrokerLoad(b, before_r[b], after_r[b], before_l[b], after_l[b]) for b in ids))


def _target_brokers(cluster_brokers: Mapping[int, Broker], ids: Sequence[int] | None
                    ) -> list[Broker]:
    if ids is None:
        return list(cluster_brokers.values())
    unknown = sorted(set(ids) - set(cluster_brokers))
    if unknown:
        raise InvalidInput(f"--brokers: unknown broker id(s) {unknown}; the cluster has "
                           f"{sorted(cluster_brokers)[:20]}")
    return [cluster_brokers[b] for b in ids]


# --- Spark --------------------------------------------------------------------------------------


@contextmanager
def spark_session(master: str | None = "local[*]", verbose: bool = False
                  ) -> Iterator[SparkSession]:
    """The active session, left running; or a new one, stopped at the end.

    ``master`` None leaves the choice to the launcher (spark-submit's ``--master``). Unless
    ``verbose``, a JVM this starts writes its output (log4j's WARN lines and the JVM's own
    notices) to an unnamed temporary file instead of the terminal: kadmin reports the progress
    itself, and errors reach the driver as exceptions anyway."""
    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    if (master or "local").startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        # local workers must run this interpreter (and see its packages), not `python3` on PATH
        os.environ["PYSPARK_PYTHON"] = sys.executable
    conf = (SparkConf().setAppName("kadmin").set("spark.ui.enabled", "false")
            .set("spark.ui.showConsoleProgress", "false"))
    if master:
        conf.setMaster(master)
    with tempfile.TemporaryFile() as log:
        gateway = None if verbose else launch_gateway(
            conf, popen_kwargs={"stdout": log, "stderr": log})
        spark = SparkSession(SparkContext(conf=conf, gateway=gateway))
        spark.sparkContext.setLogLevel("WARN")
        spark.conf.set("spark.sql.shuffle.partitions",
                       str(2 * spark.sparkContext.defaultParallelism))
        try:
            yield spark
        finally:
            spark.stop()


_shipped: set[str] = set()


def ship_kadmin(sc: SparkContext) -> None:
    """Add a zip of this kadmin package to the job so executors import the driver's code."""
    key = sc.applicationId
    if key in _shipped:
        return
    package = Path(kadmin.__file__).resolve().parent
    folder = Path(tempfile.mkdtemp(prefix="kadmin-spark-"))
    atexit.register(shutil.rmtree, folder, True)
    archive = folder / "kadmin.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(package.rglob("*.py")):
            zf.write(path, Path("kadmin") / path.relative_to(package))
    sc.addPyFile(str(archive))
    _shipped.add(key)


def _launcher_master() -> str | None:
    """spark-submit's ``--master``, when this process was started by spark-submit."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return None
    return SparkConf().get("spark.master", None)


def main(argv: Sequence[str] | None = None) -> None:
    """``spark-submit kadmin/spark/job.py [plan|rebalance] --cluster DIR ... --out DIR``: the
    options of ``kadmin spark plan`` (the default) or ``kadmin spark rebalance``, which this
    runs. Without ``--master``, spark-submit's master is used."""
    from kadmin.cli.app import main as cli_main  # the CLI stays out of the executors' imports

    args = list(sys.argv[1:] if argv is None else argv)
    command = args.pop(0) if args and args[0] in ("plan", "rebalance") else "plan"
    master = _launcher_master()
    if master and not any(a == "--master" or a.startswith("--master=") for a in args):
        args += ["--master", master]
    cli_main(["spark", command, *args])


if __name__ == "__main__":
    main()
