"""The pipeline both Spark planners share around their own placement or balancing: the start
(:func:`read_source`, every check of the output and the snapshot folder before Spark starts,
then :func:`spark_job`, the session, the shipped kadmin and the progress), the input side
(steps 1 and 2 of :mod:`kadmin.spark.plan`: the scan of ``topics.jsonl`` and the range sort
that makes every Spark partition a contiguous run of topic names in order) and step 5, the
ordered stream of encoded moves into the plan folder (:mod:`kadmin.operations.folder` writes
it)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, cast

from pyspark import RDD, Broadcast, SparkContext, StorageLevel

from kadmin import files, plans, snapshots
from kadmin.model import (
    LIST_LIMIT,
    Broker,
    InvalidInput,
    TopicAssignment,
    and_more,
)
from kadmin.operations import folder
from kadmin.spark.session import Progress, Stages, ship_kadmin, spark_session
from kadmin.spark.tasks import ScanResult, keyed_topics, range_bounds, range_of, scan_split, sort_run

BROKERS_FILE = snapshots.BROKERS_FILE


TOPICS_FILE = snapshots.TOPICS_FILE


BYTES_PER_SPLIT = 16 * 2**20
"""Input split of the scan; small enough that both cores of a small machine stay busy."""


PARTITIONS_PER_TASK = 100_000
"""Kafka partitions per sorted Spark partition: the unit the driver streams (a few MB of entries)."""


@dataclass(frozen=True)
class Source:
    """A snapshot folder checked before Spark starts: what both planners read of it first."""

    cluster_dir: Path
    selection: frozenset[str] | None
    """The selected topics (None: every topic)."""
    brokers: Mapping[int, Broker]
    """The registered brokers (``brokers.json``)."""
    fingerprint: dict[str, dict[str, Any]]
    """:func:`fingerprints`, for the manifest."""


def read_source(cluster_dir: Path, out_dir: Path, topics: Sequence[str] | None, *, empty: str,
                force: bool, batch_size: int, max_znode_bytes: int,
                check: Callable[[], None] = lambda: None) -> Source:
    """Every check a Spark planner makes before Spark starts, in order: the output options,
    the planner's own (``check``), the selection (``empty``: the error for an empty one), the
    snapshot folder; then its brokers and fingerprints."""
    check_output(out_dir, force, batch_size, max_znode_bytes)
    check()
    selection = selection_of(topics, empty)
    check_snapshot_folder(cluster_dir, selection)
    brokers = snapshots.read_brokers(cluster_dir / BROKERS_FILE)
    return Source(cluster_dir, selection, brokers, fingerprints(cluster_dir))


@dataclass(frozen=True)
class Job:
    """A started Spark job over a :class:`Source`."""

    sc: SparkContext
    stages: Stages
    source: Source

    def sorted_topics(self, *, empty: str | None, ranges_at_least: int, persist: bool = True,
                      partitions_per_task: int | None = None) -> Sorted:
        """:func:`sorted_topics` of the source's ``topics.jsonl`` and selection."""
        return sorted_topics(self.sc, self.source.cluster_dir / TOPICS_FILE,
                             self.source.selection, self.stages, empty=empty,
                             ranges_at_least=ranges_at_least, persist=persist,
                             partitions_per_task=partitions_per_task)


@contextmanager
def spark_job(source: Source, master: str | None, verbose: bool, progress: Progress | None
              ) -> Iterator[Job]:
    """The Spark session (:func:`kadmin.spark.session.spark_session`: an active one as it is,
    else a new one stopped at the end), kadmin shipped to its executors, and the progress of
    its stages."""
    with spark_session(master, verbose) as spark:
        sc = spark.sparkContext
        ship_kadmin(sc)
        yield Job(sc, Stages(sc, progress), source)


def check_output(out_dir: Path, force: bool, batch_size: int, max_znode_bytes: int) -> None:
    """The output options, refused before Spark starts."""
    files.check_place(out_dir, force, marker=folder.MANIFEST_FILE)
    plans.batches((), len, folder.ENVELOPE, batch_size, max_znode_bytes)  # refuses bad limits now


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
                  persist: bool = True, partitions_per_task: int | None = None) -> Sorted:
    """Steps 1 and 2 (scan, then the range partitioning and sort, left to the first action on
    ``ranged``) into at least ``ranges_at_least`` Spark partitions, more for big inputs (one
    per ``partitions_per_task``, by default PARTITIONS_PER_TASK). A line that does not parse
    is raised here; ``empty`` is the error for a snapshot without topics (None: no error).
    Without ``persist`` (a caller that reads ``ranged`` once) a second read redoes the sort
    from Spark's shuffle files."""
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
    per_task = PARTITIONS_PER_TASK if partitions_per_task is None else partitions_per_task
    bounds = range_bounds(scans, max(ranges_at_least, -(-partitions // per_task)))
    ranged = (lines.mapPartitions(lambda it: keyed_topics(it, selected.value, source))
              .partitionBy(len(bounds) + 1, partial(range_of, bounds))
              .mapPartitions(sort_run, preservesPartitioning=True))
    if persist:
        ranged.persist(StorageLevel.MEMORY_AND_DISK)
    return Sorted(lines, scans, ranged, found, selected, source)


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


def write_folder(out_dir: Path, planned: RDD[Any],
                 manifest: Callable[[Sequence[folder.BatchFile], Sequence[Any]], folder.M], *,
                 batch_size: int, max_znode_bytes: int, force: bool, stages: Stages) -> folder.M:
    """Step 5: the encoded moves streamed to the driver in order (one Spark partition, plus one
    prefetched, at a time) into a new plan folder (:func:`kadmin.operations.folder.write_folder`)."""
    with stages("write batch files"):
        result = folder.write_folder(out_dir, planned.toLocalIterator(prefetchPartitions=True),
                                     manifest, batch_size=batch_size,
                                     max_znode_bytes=max_znode_bytes, force=force)
    written = result.batches
    stages.note(f"{sum(b.partitions for b in written):,} partition(s) in {len(written):,} "
                f"batch file(s)")
    return result
