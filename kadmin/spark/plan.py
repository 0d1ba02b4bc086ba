"""The Spark bulk planner: ``kadmin spark plan`` (and ``spark-submit kadmin/spark/submit.py``).

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

The tasks of every step are in :mod:`kadmin.spark.tasks`. Steps 1, 2 and 5 and the input checks
(:mod:`kadmin.spark.pipeline`) and the Spark session (:mod:`kadmin.spark.session`) are shared
with the Spark rebalancer (:mod:`kadmin.spark.rebalance`), which puts its own balancing where
steps 3 and 4 are. Each Spark action runs under a stage name, and its tasks are reported as
they finish (``Stages``) while Spark's own log stays out of the terminal (``spark_session``).
The folder format is :mod:`kadmin.operations.folder`'s.

The folder appears atomically: everything is written into a hidden temp sibling (manifest last)
that is renamed to ``--out`` at the end, and removed on any failure, so a folder named ``--out``
is always complete. An existing ``--out`` is refused unless ``force``.

Executors import kadmin from a zip of this very package that the driver ships with the job, so a
cluster needs nothing installed but PySpark. The snapshot folder must be readable at the same
path by the driver and every executor (local disk in local mode, a shared mount on a cluster).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import reduce
from pathlib import Path
from typing import Any

from pyspark import RDD, SparkContext, StorageLevel

from kadmin import placement, plans
from kadmin.model import (
    Broker,
    InvalidInput,
)
from kadmin.operations import folder
from kadmin.spark.pipeline import Sorted, read_source, spark_job, write_folder
from kadmin.spark.session import Progress, Stages
from kadmin.spark.tasks import PlaceTotals, ScanResult, count_run, place_run


@dataclass(frozen=True)
class Manifest:
    """What ``manifest.json`` records: the batches in order, the totals, the options and the input.

    ``stats`` has the meaning of ``plans.plan_stats`` for the plan of all batches, except that
    ``stats.unchanged`` counts the selected partitions already in place (they are in no batch).
    """

    batches: tuple[folder.BatchFile, ...]
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
        return folder.manifest_document(
            self.batches,
            topics=self.topics,
            partitions=self.partitions,
            unchanged=self.unchanged,
            placed=self.partitions + self.unchanged,
            replica_moves=self.stats.replica_moves,
            leader_changes=self.stats.leader_changes,
            brokers=[asdict(b) for b in self.stats.brokers],
            options={
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
            input={name: dict(value) for name, value in self.fingerprint.items()},
        )


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
    def check() -> None:
        if options.start_index is not None and options.start_index < 0:
            raise InvalidInput(f"start index {options.start_index} must be at least 0")

    source = read_source(cluster_dir, out_dir, topics, empty="no topics to place", force=force,
                         batch_size=batch_size, max_znode_bytes=max_znode_bytes, check=check)
    selection, cluster_brokers = source.selection, source.brokers
    ring = placement.BrokerRing.of(_target_brokers(cluster_brokers, brokers), options.rack_aware)

    with spark_job(source, master, verbose, progress) as job:
        sc, stages = job.sc, job.stages
        chunks = job.sorted_topics(empty="no topics to place",
                                   ranges_at_least=sc.defaultParallelism)
        try:
            planned = _placed(sc, chunks, selection, ring, options, stages)
        finally:
            chunks.release()

        def manifest(written: Sequence[folder.BatchFile], trailers: Sequence[Any]) -> Manifest:
            totals = reduce(PlaceTotals.plus, trailers)
            return Manifest(
                batches=tuple(written), topics=chunks.found, partitions=totals.moves,
                unchanged=totals.unchanged, stats=_stats(totals, chunks.scans, cluster_brokers),
                options=options, target_brokers=ring.ids, all_topics=selection is None,
                batch_size=batch_size, max_znode_bytes=max_znode_bytes,
                fingerprint=source.fingerprint)

        try:
            return write_folder(out_dir, planned, manifest, batch_size=batch_size,
                                max_znode_bytes=max_znode_bytes, force=force, stages=stages)
        finally:
            planned.unpersist()


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
