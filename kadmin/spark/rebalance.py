"""The Spark rebalancer: ``kadmin spark rebalance``, and ``spark-submit kadmin/spark/submit.py
rebalance``.

It writes the plan ``kadmin plan rebalance`` would make, with the same guarantees (moves equal
to the lower bound with no racks or equal racks, replica and preferred-leader spreads of at most
one, no broker twice, rack diversity kept, deterministic), for estates no single process holds,
in the folder format of ``kadmin spark plan`` (batch files + manifest.json) that ``kadmin
reassign --plan DIR`` executes. The manifest also records the moves, the lower bound, and the
balance before and after.

The pipeline is ``kadmin spark plan``'s (:mod:`kadmin.spark.pipeline`): the scan and range sort
make every Spark partition a contiguous run of topics in name order, here a *chunk*, held by its
task as a :class:`~kadmin.balance.part.Part` (persisted between rounds). The balancing itself is
:func:`kadmin.balance.chunks.plan`: the driver splits the quota over the chunks from their counts
(a few thousand numbers each) and each task runs the balancing core on its chunk; this module
only supplies the chunks (:class:`SparkParts`) and the input checks.

Topics (``--topic-spread N``, and the default objective): each task runs ``plan rebalance``'s
exact program (:mod:`kadmin.balance.evenness`) on its chunk, with the broker counts the driver
gives it (see :mod:`kadmin.balance.chunks`, step 2). With ``--topic-spread`` chunks are cut small
enough for the program (:data:`kadmin.balance.evenness.LIMIT` partition-broker pairs: with 1,000
brokers, 400 partitions a chunk), a topic too large for one is refused, and the executors must
import numpy and scipy (HiGHS): the driver asks one executor first and, when it cannot, stops
with one line saying how to ship an environment. The default objective runs the program where a
chunk is small enough and the executors have scipy, else keeps the local search, so its plan
depends on the executors' Python (the same Python, the same bytes). Exactness: the per-chunk
counts are a decomposition, so the sum over chunks is proven the fewest moves (or the least
spread) only where it meets a bound (:class:`kadmin.balance.chunk_topics.TopicsPlanned`): with
``--topic-spread`` the larger of the plain bound and the sum of the chunks' relaxations (each
chunk's fewest moves within ``N``, its brokers free) raised by a Lagrangian bound (the brokers'
counts priced, :meth:`kadmin.balance.chunk_topics.TopicRounds.price`), which is the lower bound the manifest
records; its ``topic_goal`` says whether the plan meets it (``exact``, and ``proven`` in words).
By default every chunk, whatever its size, is held to the certificate of
:mod:`kadmin.balance.spreads` taken with the whole cluster's gives and takes (numpy on the
executors; :meth:`kadmin.balance.chunk_topics.TopicRounds.certify`; with the water levels, so the chunks
add up to the whole table's bound) and, on a selection of at most
:data:`kadmin.balance.driver.WHOLE_PARTITIONS`, raised by the topic x broker program over the
whole (:mod:`kadmin.balance.aggregate`, on the driver): a worst topic spread no plan of the
fewest moves goes below, proven where the plan meets it, with the chunks and topics that meet
their own bound counted.
Racks (:mod:`kadmin.balance.chunk_racks`): where keeping every partition's racks costs moves
over the rack-free bound, a selection small enough is planned whole on the driver (as ``plan
rebalance``: moves and topic spread proven over the whole); a larger one: the driver solves the
whole selection's rack-kept fewest moves from the chunks' partitions per replica set and each
chunk plans at the counts it gets. The plan makes exactly those moves, the lower bound the
manifest records (``racks``), proven; split over chunks, the topic spread is proven per chunk
only.
Measured against ``plan rebalance --topic-spread 1`` (tests/unit/test_balance_chunks.py, 7 chunks):
every topic within 1 on all five clusters, at 0 to 1.0% more moves than the exact minimum (0 and
proven on the skewed one); on the cluster (one broker added to 11) the exact minimum,
proven (tests/spark/test_spark_rebalance.py).

The encoded moves then stream to the driver in topic order and are cut into batch files exactly
as ``spark plan`` cuts them. Driver memory: the counts matrix (chunks x brokers), one chunk's
entries and one window of batches; the rare tail (see :mod:`kadmin.balance.quotas`) adds at
most ``TAIL_PARTITIONS``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from pyspark import RDD, SparkContext, StorageLevel

from kadmin.balance import evenness, quotas
from kadmin.balance.capacity import Capacities
from kadmin.balance.chunk_topics import TopicsPlanned
from kadmin.balance.chunks import Planned, plan
from kadmin.balance.evenness import TopicGoal
from kadmin.balance.metrics import Balance, loads
from kadmin.balance.part import PRICE_ROUNDS, Answer, Context, Counts, Part, Picked, Question, Step
from kadmin.balance.scope import scope_of, targets_of
from kadmin.model import InvalidInput, OperationFailed, listed
from kadmin.operations import folder
from kadmin.operations.capacity import warn_strangers
from kadmin.operations.selection import topic_names
from kadmin.requests import RebalanceRequest
from kadmin.spark import pipeline
from kadmin.spark.failures import SHIP_AN_ENVIRONMENT
from kadmin.spark.pipeline import read_source, spark_job, write_folder
from kadmin.spark.session import Progress, Stages
from kadmin.spark.tasks import encode_parts, exact_program_missing, first_counts, load_part

MIN_CHUNKS = 2
"""Chunks of a small cluster (big ones get one per ``PARTITIONS_PER_TASK`` partitions). A
fixed number, not Spark's parallelism: the plan depends on the chunks, and the same snapshot must
give the same plan on a laptop and on a cluster."""


@dataclass(frozen=True)
class Manifest:
    """What ``manifest.json`` records: the batches in order, the figures of ``kadmin plan
    rebalance --json`` (over the selected topics and the target brokers), the options and the
    input."""

    batches: tuple[folder.BatchFile, ...]
    topics: int
    partitions: int
    """Partitions in the batch files: those whose replica list changes."""
    replica_moves: int
    lower_bound: int
    leader_changes: int
    planned: Planned
    before: Balance
    after: Balance
    options: RebalanceRequest
    all_topics: bool
    targets: tuple[int, ...]
    batch_size: int
    max_znode_bytes: int
    fingerprint: Mapping[str, Mapping[str, Any]]
    drained: Mapping[int, int] = field(default_factory=dict)
    """Replicas on each broker outside the targets before the plan (for the summary; not
    written: the manifest's ``elsewhere`` says what stays there)."""
    topic_goal: TopicGoal | None = None
    """What the chunks' exact programs did for the topics (None: none ran)."""

    def document(self) -> dict[str, Any]:
        return folder.manifest_document(
            self.batches,
            topics=self.topics,
            partitions=self.partitions,
            replica_moves=self.replica_moves,
            lower_bound=self.lower_bound,
            leader_changes=self.leader_changes,
            partial=self.planned.partial,
            unplaced=self.planned.unplaced,
            rounds=self.planned.rounds,
            before=self.before.figures(),
            after=self.after.figures(),
            brokers=loads(self.before, self.after),
            options={
                "mode": "rebalance",
                "target_brokers": list(self.targets),
                "all_topics": self.all_topics,
                "leaders": self.options.leaders,
                "max_moves": self.options.max_moves,
                "rack_aware": self.options.rack_aware,
                "topic_spread": self.options.topic_spread,
                "batch_size": self.batch_size,
                "max_znode_bytes": self.max_znode_bytes,
            },
            racks=None if self.planned.racks is None else asdict(self.planned.racks),
            topic_goal=None if self.topic_goal is None else {
                **asdict(self.topic_goal), "reachable": self.topic_goal.reachable,
                "proven": _proof(self.topic_goal, self.planned.topics)},
            input={name: dict(value) for name, value in self.fingerprint.items()},
        )


def run_rebalance(cluster_dir: Path, out_dir: Path,
                  options: RebalanceRequest | None = None,
                  *, master: str | None = "local[*]", batch_size: int = 1000,
                  max_znode_bytes: int = 1_000_000, force: bool = False, verbose: bool = False,
                  price_rounds: int = PRICE_ROUNDS, progress: Progress | None = None,
                  capacities: Capacities | None = None,
                  warn: Callable[[str], object] = lambda line: None) -> Manifest:
    """Rebalance the selected topics of the snapshot folder ``cluster_dir`` and write the batch
    files and manifest to ``out_dir`` (``price_rounds``: see :attr:`Context.price_rounds`;
    ``capacities``: the capacity file ``options.capacity`` names, as the operation read it;
    ``warn`` hears of its brokers that the cluster lacks). Input errors raise InvalidInput
    before anything is written, and those of the inputs read here (the snapshot's brokers, the
    capacities) before Spark starts; an active SparkSession is used as it is and left
    running."""
    options = options or RebalanceRequest()
    assert (options.capacity is None) == (capacities is None), "the operation reads --capacity"
    topics = topic_names(options.topics, default_all=True)
    if options.replication_factor is not None or options.max_leader_changes is not None \
            or options.by_bytes:
        raise InvalidInput("spark rebalance balances replica counts: it does not take "
                           "--replication-factor, --max-leader-changes or --balance bytes")
    if options.topic_spread is not None and options.topic_spread < 0:
        raise InvalidInput(f"--topic-spread must be at least 0, got {options.topic_spread}")
    if price_rounds < 0:
        raise InvalidInput(f"--price-rounds must be at least 0, got {price_rounds}")

    def check() -> None:
        if options.max_moves is not None and options.max_moves < 0:
            raise InvalidInput(f"--max-moves must be at least 0, got {options.max_moves}")

    source = read_source(cluster_dir, out_dir, topics, empty="no topics to balance", force=force,
                         batch_size=batch_size, max_znode_bytes=max_znode_bytes, check=check)
    selection, registered, fingerprint = source.selection, source.brokers, source.fingerprint
    if capacities is not None:  # every target has a capacity: known before Spark starts
        capacities.weights(targets_of(registered, options.brokers, options.remove))

    with spark_job(source, master, verbose, progress) as job:
        sc, stages = job.sc, job.stages
        chunks = job.sorted_topics(empty=None, ranges_at_least=MIN_CHUNKS,
                                   persist=False,  # read once, into the chunks
                                   partitions_per_task=_per_task(options, registered))
        try:
            loaded = chunks.ranged.mapPartitions(load_part).persist(StorageLevel.MEMORY_AND_DISK)
            with stages("sort topics into chunks"):
                first = loaded.map(first_counts).collect()
        finally:
            chunks.release()
        parts = SparkParts(sc, cast("RDD[Part]", loaded), stages)
        try:
            chunks.check(next((d for _, d in first if d is not None), None), selection)
            counts = [c for c, _ in first if c is not None]
            holding = {b for c in counts for b, n in c.replicas.items() if n}
            warn_strangers(capacities, set(registered) | holding, warn)
            scope = scope_of(registered, holding, options.brokers, options.remove,
                             options.rack_aware)
            if scope.unregistered:
                raise InvalidInput(
                    f"--brokers: broker(s) {listed(scope.unregistered)} are not registered; "
                    f"spark rebalance cannot leave their partitions as they are: plan with "
                    f"'kadmin plan rebalance' (which does), or drain them with --remove-brokers")
            drained = {b: sum(c.replicas.get(b, 0) for c in counts)
                       for b in sorted(holding - set(scope.targets))}  # before plan() runs
            context = Context(scope.targets, options.objective(
                scope.rack_of, None if capacities is None else capacities.weights(scope.targets)),
                price_rounds)
            exact, certify, racks = _exact_programs(sc, counts, options, len(scope.targets),
                                                    scope.rack_of is not None, stages)
            parts.share(context)
            result = plan(parts, counts, context, exact_topics=exact, certify=certify,
                          racks=racks, report=stages.note)
            encoded = parts.encoded()

            def manifest(written: Sequence[folder.BatchFile], trailers: Sequence[Any]
                         ) -> Manifest:
                after = quotas.merged([t.after for t in trailers])
                return Manifest(
                    batches=tuple(written), topics=chunks.found,
                    partitions=sum(t.partitions for t in trailers),
                    replica_moves=sum(t.replica_moves for t in trailers),
                    lower_bound=result.lower_bound if result.topics is None else
                    result.topics.lower_bound(result.lower_bound, after.worst_topic_spread),
                    leader_changes=sum(t.leader_changes for t in trailers), planned=result,
                    before=quotas.merged([t.before for t in trailers]),
                    after=after, options=options,
                    all_topics=topics is None,
                    targets=scope.targets, batch_size=batch_size,
                    max_znode_bytes=max_znode_bytes, fingerprint=fingerprint, drained=drained,
                    topic_goal=None if result.topics is None else result.topics.goal(
                        result.lower_bound, after.worst_topic_spread))

            try:
                return write_folder(out_dir, encoded, manifest, batch_size=batch_size,
                                        max_znode_bytes=max_znode_bytes, force=force,
                                        stages=stages)
            finally:
                encoded.unpersist()
        finally:
            parts.release()


def _proof(goal: TopicGoal, topics: TopicsPlanned | None) -> str:
    """What the manifest's ``topic_goal`` proves, in words (see
    :class:`kadmin.balance.chunk_topics.TopicsPlanned`, and
    :mod:`kadmin.balance.chunk_racks` with racks)."""
    if topics is not None and topics.racked:
        return ("racks kept: the moves are the fewest of the whole selection (its class "
                "program on the driver: the lower bound, proven); "
                + ("the selection planned whole on the driver; " if topics.racked == "whole"
                   else f"the broker counts split over the chunks from that plan, each chunk's "
                        f"topics the least its counts allow in {topics.chunks_proven} of "
                        f"{topics.of} chunk(s); ")
                + ("the least worst topic spread any plan of these moves reaches, proven"
                   if goal.exact else f"not proven the least over the whole (no plan of "
                   f"these moves goes below {goal.least})"))
    chunks = "" if topics is None else (
        f"the exact program ran on {topics.chunks} of {topics.of} chunk(s)"
        + ("" if topics.proven else ", some out of time") + "; "
        + ("" if topics.bound is None else
           f"no plan of the fewest moves goes below worst topic spread {topics.bound} "
           f"(the certificate over every chunk, and over the whole selection where it is "
           f"small); {topics.chunks_proven} of {topics.of} "
           f"chunk(s) ({topics.topics_proven} of {topics.topics} topics) meet their own "
           f"bound; "))
    if goal.exact:
        return chunks + ("the fewest moves: they meet the lower bound (the larger of the plain "
                         "bound and the chunks' Lagrangian bound: each chunk's fewest moves "
                         "within the spread with its brokers' counts priced)"
                         if goal.asked is not None
                         else "the least worst topic spread any plan of the fewest "
                         "moves reaches: it meets the bound")
    return chunks + ("each chunk exact for the broker counts the driver gave it, which are a "
                     "decomposition: not proven the fewest (or least) over the whole")


def _per_task(options: RebalanceRequest, registered: Mapping[int, Any]) -> int | None:
    """Partitions per chunk: with ``--topic-spread`` small enough for the exact program over
    every target broker (at most ``--brokers``, or every registered broker; a chunk of whole
    topics may still be larger, and is refused); else the pipeline's."""
    if options.topic_spread is None:
        return None
    brokers = len(options.brokers) if options.brokers else len(registered)
    return max(1, min(pipeline.PARTITIONS_PER_TASK, evenness.LIMIT // max(1, brokers)))


def _exact_programs(sc: SparkContext, counts: Sequence[Counts], options: RebalanceRequest,
                    targets: int, racks: bool, stages: Stages) -> tuple[bool, bool, bool]:
    """Whether the tasks may run the exact topic program, the default objective's
    certificate, and (``racks``: the targets have racks) the class program of
    :mod:`kadmin.balance.chunk_racks`: ``--topic-spread`` needs the program on every chunk
    (each small enough, and scipy on the executors, or a one-line error); the default
    objective uses it where a chunk is small enough and the executors have scipy (else the
    local topic search), the certificate (numpy) on every chunk whatever its size, and the
    class program whatever the chunks' sizes (with ``--max-moves`` too) where the executors
    have scipy."""
    asked = options.topic_spread
    if asked is not None:
        largest = max((c.partitions for c in counts), default=0)
        if largest * targets > evenness.LIMIT:
            raise InvalidInput(
                f"--topic-spread: a chunk holds whole topics, and one of {largest:,} "
                f"partitions over {targets:,} brokers is more than the exact program takes "
                f"({evenness.LIMIT:,} partition-broker pairs); select fewer topics (--topics) "
                f"or fewer brokers (--brokers)")
    elif not options.even_topics or (options.max_moves is not None and not racks):
        return False, False, False
    with stages("check the executors for the exact program"):
        missing = sc.parallelize([0], 1).map(exact_program_missing).collect()[0]
    small = asked is not None or any(c.partitions * targets <= evenness.DEFAULT_LIMIT
                                     for c in counts)
    if missing is None:
        return small, True, racks
    if asked is not None:
        raise OperationFailed(
            f"--topic-spread runs an exact program (scipy's HiGHS) in Spark's tasks, and the "
            f"executors cannot import {missing!r}: " + SHIP_AN_ENVIRONMENT)
    stages.note(f"the executors cannot import {missing!r}: topics are evened by the local "
                f"search, not the exact program"
                + (", and not held to the certificate" if missing == "numpy" else ""))
    return False, missing != "numpy", False


class SparkParts:
    """The chunks as an RDD of one :class:`Part` per Spark partition, persisted; each step
    makes the next RDD (persisted, then the previous one released unless held); questions
    only read it."""

    def __init__(self, sc: SparkContext, rdd: RDD[Part], stages: Stages) -> None:
        self.sc, self.rdd, self.stages = sc, rdd, stages
        self.context: Any = None
        self.held: RDD[Part] | None = None
        """The chunks :meth:`hold` keeps persisted (one at a time)."""

    def share(self, context: Context) -> None:
        self.context = self.sc.broadcast(context)

    def apply(self, steps: Sequence[Step | None], label: str) -> list[Counts | None]:
        shared, context = self.sc.broadcast(list(steps)), self.context

        def step(index: int, it: Iterable[Part]) -> Iterator[Part]:
            todo = shared.value[index]
            for part in it:
                yield part if todo is None else part.step(todo, context.value)

        following = self.rdd.mapPartitionsWithIndex(step, preservesPartitioning=True).persist(
            StorageLevel.MEMORY_AND_DISK)
        with self.stages(label):
            counts = following.mapPartitionsWithIndex(
                lambda i, it: [None if shared.value[i] is None else p.counts() for p in it]
            ).collect()
        if self.rdd is not self.held:
            self.rdd.unpersist()
        shared.unpersist()
        self.rdd = following
        return counts

    def ask(self, questions: Sequence[Question | None], label: str) -> list[Answer]:
        """The answers, collected from the persisted chunks (map and collect: nothing new is
        persisted, and the chunks' RDD stays the same)."""
        shared, context = self.sc.broadcast(list(questions)), self.context

        def answer(index: int, it: Iterable[Part]) -> Iterator[Answer]:
            question = shared.value[index]
            for part in it:
                yield None if question is None else part.answer(question, context.value)

        try:
            with self.stages(label):
                return self.rdd.mapPartitionsWithIndex(answer).collect()
        finally:
            shared.unpersist()

    def pick(self, brokers: Collection[int], limit: int) -> list[list[Picked]]:
        wanted = frozenset(brokers)
        with self.stages("gather the tail"):
            return self.rdd.map(lambda part: part.picked(wanted, limit)).collect()

    def encoded(self) -> RDD[Any]:
        """Each chunk's plan entries, encoded, in order, then its :class:`PartTotals`
        (persisted and computed in parallel before the driver streams them)."""
        context = self.context
        out = self.rdd.mapPartitions(lambda it: encode_parts(it, context.value.targets)).persist(
            StorageLevel.MEMORY_AND_DISK)
        with self.stages("encode the plan"):
            out.count()
        return out

    def hold(self) -> object:
        assert self.held is None, "one held RDD at a time"
        self.held = self.rdd
        return self.rdd

    def let_go(self, held: object, restore: bool) -> None:
        assert held is self.held
        kept, self.held = cast("RDD[Part]", held), None
        if restore:
            self.rdd.unpersist()
            self.rdd = kept
        elif kept is not self.rdd:
            kept.unpersist()

    def release(self) -> None:
        if self.held is not None and self.held is not self.rdd:
            self.held.unpersist()
        self.rdd.unpersist()
        if self.context is not None:
            self.context.unpersist()
