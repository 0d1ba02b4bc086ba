"""``plan generate``, ``plan election``, ``plan deletion``: plans made from a cluster by rule,
validated, and written with their rollback."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kadmin import files, placement, plans
from kadmin.balance.chunks import PRICE_ROUNDS
from kadmin.events import PlannerEvent
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    DeletionPlan,
    ElectionPlan,
    PartitionMove,
    PlanKind,
    ReassignmentPlan,
)
from kadmin.operations.folder import MANIFEST_FILE
from kadmin.operations.planfiles import Stdout, checked, refuse_below_min_insync, write_plan
from kadmin.operations.selection import (
    TopicSelection,
    select_brokers,
    select_topics,
    split_ints,
    split_names,
    topic_names,
)
from kadmin.operations.source import ClusterSource, Warn, optional_cluster, read_cluster


@dataclass(frozen=True)
class Output:
    """Where a plan goes: a file (None: plans/<kind>-<UTC time>.json; ``-``: stdout)."""

    path: Path | None = None
    force: bool = False
    stdout: Stdout | None = None


@dataclass(frozen=True)
class SparkRun:
    """How a Spark planner (``kadmin spark plan``/``rebalance``) runs and writes its plan folder,
    beside the request."""

    master: str | None = "local[*]"
    batch_size: int = 1000
    max_znode_bytes: int = 1_000_000
    force: bool = False
    verbose: bool = False
    price_rounds: int = PRICE_ROUNDS
    """``spark rebalance --topic-spread``: rounds of pricing the brokers' counts at most."""
    jute_maxbuffer: int = plans.JUTE_MAXBUFFER
    """The servers' jute.maxbuffer, which ``max_znode_bytes`` must stay under."""


Progress = Callable[[PlannerEvent], None]
"""Where a Spark planner reports its stages and findings (the CLI shows them on stderr)."""


@dataclass(frozen=True)
class GenerateRequest:
    selection: TopicSelection
    brokers: str | None = None
    """Target broker ids as typed (None: every broker)."""
    options: placement.PlacementOptions = field(default_factory=placement.PlacementOptions)


@dataclass(frozen=True)
class Generated:
    plan: ReassignmentPlan
    rollback: ReassignmentPlan
    topics: int
    unchanged: int
    """Selected partitions already where the placement puts them."""
    written: Path | None
    """The plan file (None: on stdout, or no plan because nothing moves)."""
    rf_changes: int = 0
    """Partitions whose replication factor the plan changes (run with --allow-rf-change); only
    ``--replication-factor`` changes one."""


def rf_changes(plan: ReassignmentPlan, rollback: ReassignmentPlan) -> int:
    """Partitions whose replica count ``plan`` changes (``rollback`` holds their current one)."""
    return sum(len(m.replicas) != len(r.replicas)
               for m, r in zip(plan.moves, rollback.moves, strict=True))


def proposed_plan(snapshot: ClusterSnapshot, topics: list[str], brokers: list[Broker],
                  options: placement.PlacementOptions) -> tuple[ReassignmentPlan, int]:
    """The placement's target for every selected partition, minus those already in place."""
    target = placement.place(snapshot.topics, topics, brokers, options)
    moves, unchanged = [], 0
    for topic in sorted(target):
        current = snapshot.topics[topic]
        for partition, replicas in sorted(target[topic].items()):
            if current.get(partition) == replicas:
                unchanged += 1
            else:
                moves.append(PartitionMove(topic, partition, replicas))
    return ReassignmentPlan(tuple(moves)), unchanged


def generate(request: GenerateRequest, source: ClusterSource, output: Output, warn: Warn
             ) -> Generated:
    """The placement's plan for the selected topics of the cluster ``source`` names, and its
    rollback, written unless empty (an empty plan is refused by every command that reads
    one)."""
    with files.gc_paused():  # millions of acyclic tuples and dicts: the collector only slows it
        snapshot = read_cluster(source, warn, states=False)
        selected = select_topics(snapshot, request.selection)
        chosen = set(selected)
        plans.refuse_moving(snapshot.reassigning, lambda tp: tp.topic in chosen,
                            "no plan is made for their topics")
        plan, unchanged = proposed_plan(snapshot, selected,
                                        select_brokers(snapshot, request.brokers),
                                        request.options)
        refuse_below_min_insync(plan, snapshot)
        rollback = plans.current_assignment(plan, snapshot)
        written = write_plan(plan, PlanKind.REASSIGN, output.path, output.force, rollback,
                             stdout=output.stdout) if plan.moves else None
    changed = 0 if request.options.replication_factor is None else rf_changes(plan, rollback)
    return Generated(plan, rollback, len(selected), unchanged, written, changed)


@dataclass(frozen=True)
class Written:
    """An election or deletion plan, and where it went (None: stdout, or not written because it
    has no partition)."""

    plan: ElectionPlan | DeletionPlan
    path: Path | None


def election(selection: TopicSelection, source: ClusterSource, output: Output, warn: Warn
             ) -> Written:
    """A preferred replica election plan for the selected topics, validated and written (not
    when it has no partition)."""
    snapshot = read_cluster(source, warn)
    plan = plans.election_plan_for(snapshot, select_topics(snapshot, selection))
    if not plan.partitions:
        return Written(plan, None)
    checked(plan, PlanKind.ELECTION, snapshot)
    return Written(plan, write_plan(plan, PlanKind.ELECTION, output.path, output.force,
                                    stdout=output.stdout))


@dataclass(frozen=True)
class DeletionRequest:
    topics: str
    """``--topics`` as typed."""
    allow_internal: bool = False


def deletion(request: DeletionRequest, source: ClusterSource, output: Output, warn: Warn
             ) -> Written:
    """The deletion plan of ``--topics``, validated (against the cluster when ``source`` names
    one) and written. Names Kafka could never have created are refused before any cluster is
    read."""
    plan = plans.deletion_plan_for(split_names(request.topics, "--topics"))
    snapshot = optional_cluster(source, warn)
    checked(plan, PlanKind.DELETION, snapshot, allow_internal=request.allow_internal)
    return Written(plan, write_plan(plan, PlanKind.DELETION, output.path, output.force,
                                    stdout=output.stdout))


@dataclass(frozen=True)
class SparkPlanRequest:
    """``spark plan``: a snapshot folder, the plan folder to write, and the placement."""

    cluster: Path
    out: Path
    selection: TopicSelection
    brokers: str | None = None
    """Target broker ids as typed (None: every broker)."""
    options: placement.PlacementOptions = field(default_factory=placement.PlacementOptions)


def spark_generate(request: SparkPlanRequest, run: SparkRun, progress: Progress | None = None
                   ) -> SparkPlanned:
    """``spark plan``: the placement's plan of the selected topics (none: all) onto the target
    brokers (none: all), computed on Spark and written as the plan folder ``request.out``."""
    topics = topic_names(request.selection, default_all=False)
    plans.check_znode_limit(run.max_znode_bytes, run.jute_maxbuffer)
    brokers = split_ints(request.brokers, "--brokers") if request.brokers else None
    from kadmin.spark.plan import run_plan  # pyspark starts a JVM: only here

    out_dir = request.out
    manifest = run_plan(request.cluster, out_dir, topics=topics, brokers=brokers,
                        options=request.options, master=run.master, batch_size=run.batch_size,
                        max_znode_bytes=run.max_znode_bytes, force=run.force,
                        verbose=run.verbose, progress=progress)
    return SparkPlanned(manifest.partitions, len(manifest.batches), out_dir / MANIFEST_FILE)


@dataclass(frozen=True)
class SparkPlanned:
    """What ``spark plan`` reports: the partitions in its batch files, and where."""

    partitions: int
    batches: int
    manifest: Path
