"""``plan rebalance`` and ``spark rebalance``: the fewest replica moves that balance the
selected topics over the target brokers. One request type for both; the Spark planner's own
settings (its master, the batch files) travel beside it in :class:`SparkRun`."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kadmin import files, plans
from kadmin.balance import metrics
from kadmin.balance import rebalance as balancing
from kadmin.balance.across import RackBalance
from kadmin.balance.capacity import over_capacity
from kadmin.balance.evenness import TopicGoal
from kadmin.balance.metrics import Balance
from kadmin.balance.replicas import replica_counts
from kadmin.balance.scope import scope_of
from kadmin.balance.table import PartitionTable
from kadmin.balance.weighted import bytes_per_broker, topic_bytes_per_broker
from kadmin.model import (
    ClusterSnapshot,
    InvalidInput,
    PlanKind,
    ReassignmentPlan,
    Replicas,
    TopicPartition,
)
from kadmin.operations.capacity import read_capacities, warn_strangers
from kadmin.operations.folder import MANIFEST_FILE
from kadmin.operations.generate import Output, Progress, SparkRun
from kadmin.operations.planfiles import refuse_below_min_insync, write_plan
from kadmin.operations.selection import select_topics
from kadmin.operations.source import (
    ClusterSource,
    Warn,
    no_warnings,
    partition_sizes,
    read_cluster,
)
from kadmin.requests import RebalanceRequest
from kadmin.sizes import moved_bytes


@dataclass(frozen=True)
class ByteFigures:
    """Bytes a rebalance copies, and the bytes each target broker holds of the selected topics
    (every target, in broker order)."""

    moved: int
    before: Mapping[int, int]
    after: Mapping[int, int]
    largest: int = 0
    """The largest partition: bytes per broker within it of each other is the aim."""


@dataclass(frozen=True)
class Rebalanced:
    """What a rebalance reports, from one machine or from Spark: the plan's figures and the
    balance before and after."""

    topics: int
    partitions: int
    """Partitions the plan changes."""
    replica_moves: int
    lower_bound: int
    """The fewest moves (with ``bytes_moved``: bytes) any plan balancing these topics makes."""
    leader_changes: int
    unplaced: int
    partial: bool
    before: Balance
    after: Balance
    resized: bool = False
    """A replication factor change, not a rebalance."""
    bytes_moved: int | None = None
    """Balanced by bytes: the bytes the plan copies."""
    byte_figures: ByteFigures | None = None
    """With partition sizes."""
    written: Path | None = None
    """The plan file or the plan folder's manifest (None: on stdout, or nothing to move)."""
    folder: bool = False
    """Written as a plan folder (Spark): written even when empty, its rollback written by
    ``kadmin reassign``."""
    drained: Mapping[int, tuple[int, int | None]] = field(default_factory=dict)
    """Brokers outside the targets that held replicas: replicas on each before and after
    (None: not known one by one, as after a Spark plan; ``after.elsewhere`` has the total)."""
    unregistered: tuple[int, ...] = ()
    """Targets that are not registered, kept: the partitions holding one are left as they are."""
    held: int = 0
    """Partitions left as they are because they hold a replica on an unregistered target."""
    limits: str | None = None
    """The limits given (``--max-moves 0``), for saying what stopped a plan."""
    topic_goal: TopicGoal | None = None
    """What the plan did for each topic's evenness (``--topic-spread``, or the default)."""
    racks: RackBalance | None = None
    """With racks of unequal size: balanced across them, or rack by rack."""
    over_capacity: tuple[tuple[int, int, int], ...] = ()
    """With sizes and capacities: ``(broker, bytes after, capacity)`` of brokers left above
    their capacity."""


def rebalance(request: RebalanceRequest, source: ClusterSource, output: Output, warn: Warn
              ) -> Rebalanced:
    """``plan rebalance``: the plan of ``request`` over the cluster ``source`` names (and its
    partition sizes), written with its rollback unless nothing moves."""
    request.check()
    with files.gc_paused():  # millions of acyclic tuples and dicts: the collector only slows it
        snapshot = read_cluster(source, warn, states=False)
        sizes = partition_sizes(source.sizes, snapshot, warn)
        selected = select_topics(snapshot, request.topics, default_all=True)
        if request.by_bytes and sizes is None:
            raise InvalidInput("--balance bytes needs partition sizes: give --sizes FILE (or a "
                               "snapshot that carries them)")
        plan, rollback, figures = rebalanced_plan(snapshot, selected, request, sizes, warn)
        refuse_below_min_insync(plan, snapshot)
        written = (write_plan(plan, PlanKind.REASSIGN, output.path, output.force, rollback,
                              stdout=output.stdout) if plan.moves else None)
    return replace(figures, written=written)


def rebalanced_plan(snapshot: ClusterSnapshot, selected: Sequence[str],
                    request: RebalanceRequest | None = None,
                    sizes: Mapping[TopicPartition, int] | None = None,
                    warn: Warn = no_warnings
                    ) -> tuple[ReassignmentPlan, ReassignmentPlan, Rebalanced]:
    """The plan, its rollback and the figures of a rebalance (or replication factor change) of
    ``selected`` topics: what ``plan rebalance`` writes and reports, and the demo shows. With
    ``sizes`` the figures count bytes too; capacities of brokers not in the cluster go to
    ``warn``."""
    request = request or RebalanceRequest()
    capacities = None if request.capacity is None else read_capacities(request.capacity)
    warn_strangers(capacities, snapshot, warn)
    chosen = set(selected)
    plans.refuse_moving(snapshot.reassigning, lambda tp: tp.topic in chosen,
                        "no plan is made for their topics")
    table = PartitionTable.from_topics(snapshot.topics, selected)
    counts = replica_counts(table.replicas)
    scope = scope_of(snapshot.brokers, counts, request.brokers, request.remove,
                     request.rack_aware)
    size_of = None if sizes is None else [sizes[table.tp(i)] for i in range(len(table))]
    weights = None if capacities is None else capacities.weights(scope.targets)
    objective = request.objective(scope.rack_of, weights)
    # bytes the topics not selected hold on each broker: they stay, and take capacity
    others = None if sizes is None or weights is None else topic_bytes_per_broker(
        {t: parts for t, parts in snapshot.topics.items() if t not in chosen}, sizes)
    if objective.by_bytes:
        assert size_of is not None, "--balance bytes is refused without sizes"
        result = balancing.rebalance_bytes(table, size_of, scope.targets, scope.rack_of,
                                           leaders=objective.leaders, capacities=weights,
                                           kept=scope.unregistered, others=sum(
                                               (others or {}).get(b, 0) for b in scope.targets))
    elif request.replication_factor is None:
        result = balancing.plan(table, scope.targets, objective, counts=counts,
                                kept=scope.unregistered)
    else:
        loads = replica_counts([r for t in snapshot.topics.values() for r in t.values()])
        result = balancing.change_factor(table, request.replication_factor, scope.targets,
                                         loads, scope.rack_of, objective.limits,
                                         kept=scope.unregistered)
    moves, undo = table.moves(result.final)
    after = [result.final.get(i, r) for i, r in enumerate(table.replicas)]
    live = scope.live
    drained = [b for b in sorted(counts) if b not in scope.targets]
    # Replicas per broker after the plan: only the drained brokers' are reported.
    left = replica_counts(after) if drained else {}
    figures = Rebalanced(
        len(selected), len(moves), result.replica_moves, result.lower_bound,
        result.leader_changes, result.unplaced, result.partial,
        metrics.balance(table.replicas, table.topic_of, table.topics, live),
        metrics.balance(after, table.topic_of, table.topics, live, result.worst_topic),
        resized=request.replication_factor is not None, bytes_moved=result.bytes_moved,
        byte_figures=None if size_of is None else ByteFigures(
            sum(moved_bytes(size_of[i], table.replicas[i], r) for i, r in result.final.items()),
            _held(table.replicas, size_of, live), _held(after, size_of, live),
            max(size_of, default=0)),
        topic_goal=result.topics, racks=result.racks,
        over_capacity=() if size_of is None or weights is None or others is None else tuple(
            over_capacity(_plus(_held(after, size_of, live), others), weights)),
        drained={b: (counts[b], left.get(b, 0)) for b in drained},
        unregistered=scope.unregistered, held=result.held, limits=request.limit_words)
    return ReassignmentPlan(tuple(moves)), ReassignmentPlan(tuple(undo)), figures


def _plus(held: Mapping[int, int], others: Mapping[int, int]) -> dict[int, int]:
    return {b: n + others.get(b, 0) for b, n in held.items()}


def _held(replicas: Sequence[Replicas], sizes: Sequence[int], targets: Collection[int]
          ) -> dict[int, int]:
    """Bytes each target broker holds, 0 for one that holds nothing, in broker order."""
    held = bytes_per_broker(replicas, sizes)
    return {b: held.get(b, 0) for b in sorted(targets)}


def spark_rebalance(cluster_dir: Path, out_dir: Path, request: RebalanceRequest,
                    run: SparkRun, progress: Progress | None = None,
                    warn: Warn = no_warnings) -> Rebalanced:
    """``spark rebalance``: the same request planned on Spark into the plan folder ``out_dir``;
    its figures are the manifest's. The capacity file is read, and checked against the
    snapshot's brokers, before Spark starts."""
    from kadmin.spark.rebalance import run_rebalance  # pyspark starts a JVM: only here

    request.check()
    plans.check_znode_limit(run.max_znode_bytes, run.jute_maxbuffer)
    capacities = None if request.capacity is None else read_capacities(request.capacity)
    manifest = run_rebalance(cluster_dir, out_dir, request, master=run.master,
                             batch_size=run.batch_size, max_znode_bytes=run.max_znode_bytes,
                             force=run.force, verbose=run.verbose,
                             price_rounds=run.price_rounds, progress=progress,
                             capacities=capacities, warn=warn)
    return Rebalanced(manifest.topics, manifest.partitions, manifest.replica_moves,
                      manifest.lower_bound, manifest.leader_changes, manifest.planned.unplaced,
                      manifest.planned.partial, manifest.before, manifest.after,
                      written=out_dir / MANIFEST_FILE, folder=True,
                      drained={b: (n, None) for b, n in manifest.drained.items()},
                      limits=request.limit_words, topic_goal=manifest.topic_goal,
                      racks=None if manifest.planned.racks is None else
                      manifest.planned.racks.balance())
