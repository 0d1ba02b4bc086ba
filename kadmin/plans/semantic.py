"""A plan against a cluster: what the controller would drop, skip or do unintentionally, and
the validation of a document (or a folder's batch files) as a whole. Pure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import pairwise

from kadmin import min_insync
from kadmin.model import (
    ClusterSnapshot,
    Conflict,
    DeletionPlan,
    ElectionPlan,
    PartitionMove,
    Plan,
    PlanKind,
    Problem,
    Reassignment,
    ReassignmentPlan,
    Replicas,
    Severity,
    TopicPartition,
)
from kadmin.plans.report import Findings, ValidationReport, with_problems
from kadmin.plans.structure import validate_document

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})

# --- against a cluster -------------------------------------------------------------------------


def _unknown_partitions(entries: Sequence[TopicPartition] | Sequence[PartitionMove],
                        snapshot: ClusterSnapshot) -> Iterator[Problem]:
    """Unknown topics once per topic (a missing topic would otherwise fill a screen per
    partition), then unknown partitions of known topics one by one."""
    topics = snapshot.topics
    missing: Counter[str] = Counter(e.topic for e in entries if e.topic not in topics)
    for topic, count in sorted(missing.items()):
        yield Problem(topic, f"unknown topic {topic} (not in /brokers/topics; {count} "
                             f"partition(s) of the plan)")
    for e in entries:
        partitions = topics.get(e.topic)
        if partitions is not None and e.partition not in partitions:
            yield Problem(f"{e.topic}-{e.partition}", f"unknown partition: topic {e.topic} has "
                                                      f"{len(partitions)} partition(s)")


def _check_moves(plan: ReassignmentPlan, snapshot: ClusterSnapshot, allow_rf_change: bool
                 ) -> Iterator[Problem]:
    """Once per partition of the plan: plain dict lookups, no per-move objects."""
    yield from _unknown_partitions(plan.moves, snapshot)
    brokers, topics, reassigning = snapshot.brokers, snapshot.topics, snapshot.reassigning
    for move in plan.moves:
        replicas = move.replicas
        if not all(b in brokers for b in replicas):
            yield from _unregistered(move, snapshot)
        in_flight = reassigning.get(move.topic)
        moving = None if in_flight is None else in_flight.get(move.partition)
        if moving is not None:
            # its replica count is no replication factor until the move ends
            yield Problem(str(move.tp), f"{_moving(move.tp, moving)}; kadmin reassign refuses it "
                                        "until the controller is done", Severity.WARNING)
            continue
        partitions = topics.get(move.topic)
        current = None if partitions is None else partitions.get(move.partition)
        if current is not None and len(current) != len(replicas) and not allow_rf_change:
            yield Problem(str(move.tp), f"changes the replication factor from {len(current)} to "
                                        f"{len(replicas)} (allowed with --allow-rf-change)")
        minimum = snapshot.min_insync.get(move.topic)
        if minimum is not None and current is not None:
            yield from _min_insync(move, current, snapshot, minimum)


def _min_insync(move: PartitionMove, current: Replicas, snapshot: ClusterSnapshot,
                minimum: min_insync.MinInsync) -> Iterator[Problem]:
    """A target shorter than the topic's min.insync.replicas (an error), and a move that keeps
    fewer of its in-sync replicas than that while it runs (a warning)."""
    short = min_insync.too_short(move.replicas, minimum)
    if short is not None:
        yield Problem(str(move.tp), short)
        return
    risk = min_insync.kept_in_sync(current, move.replicas, snapshot.state(move.tp), minimum)
    if risk is not None:
        yield Problem(str(move.tp), risk, Severity.WARNING)


def _unregistered(move: PartitionMove, snapshot: ClusterSnapshot) -> Iterator[Problem]:
    """Replicas on brokers that are not registered. Kafka's controller (2.4+) refuses a new
    replica on a broker that is not alive, and a move that keeps a replica there waits for it to
    rejoin the ISR; a reordering adds and removes nothing, so it completes at once (taking
    leadership off a broker that is down is what ``plan demote`` may do): a warning, unless the
    new first replica is the one that is down."""
    replicas = move.replicas
    offline = [b for b in dict.fromkeys(replicas) if b not in snapshot.brokers]
    current = snapshot.settled_replicas(move.tp)
    if current is not None and len(current) == len(replicas) and set(current) == set(replicas):
        if replicas[0] in offline:
            yield Problem(str(move.tp), f"preferred replica {replicas[0]} of {list(replicas)} is "
                                        f"not registered in /brokers/ids; it could not lead")
        else:
            yield Problem(str(move.tp), f"broker(s) {', '.join(map(str, offline))} of replicas "
                                        f"{list(replicas)} not registered in /brokers/ids; the "
                                        f"reordering completes at once all the same",
                          Severity.WARNING)
        return
    yield Problem(str(move.tp), f"broker(s) {', '.join(map(str, offline))} of replicas "
                                f"{list(replicas)} not registered in /brokers/ids")


def _moving(tp: TopicPartition, move: Reassignment) -> str:
    return f"{tp} is being reassigned from {list(move.original)} to {list(move.target)}"


def refuse_moving(reassigning: Mapping[str, Mapping[int, Reassignment]],
                  concerned: Callable[[TopicPartition], bool], action: str) -> None:
    """A Conflict naming the partitions in flight (``ClusterSnapshot.reassigning``) that
    ``concerned`` picks: planning or submitting for one would race the controller, whose work is
    not done. Looks only at the few partitions in flight, never at the whole plan."""
    moving = [_moving(tp, move) for topic in sorted(reassigning)
              for partition, move in sorted(reassigning[topic].items())
              if concerned(tp := TopicPartition(topic, partition))]
    if moving:
        raise Conflict(f"{len(moving)} partition(s) are being reassigned, so {action}; wait until "
                       "the controller is done (kadmin status shows them)",
                       details=moving)


def _check_election(plan: ElectionPlan, snapshot: ClusterSnapshot) -> Iterator[Problem]:
    """The controller skips a partition whose preferred replica is offline or out of the ISR;
    that is worth a warning, not a refusal (the rest of the plan still works). A snapshot without
    leader/ISR state for a partition is not a reason to warn."""
    yield from _unknown_partitions(plan.partitions, snapshot)
    for tp in plan.partitions:
        replicas = snapshot.replicas(tp)
        if not replicas:
            continue
        preferred, state = replicas[0], snapshot.state(tp)
        if preferred not in snapshot.brokers:
            yield Problem(str(tp), f"preferred replica {preferred} is offline; the controller "
                                   f"will skip this partition", Severity.WARNING)
        elif state is not None and preferred not in state.isr:
            yield Problem(str(tp), f"preferred replica {preferred} is not in the ISR "
                                   f"{list(state.isr)}; the controller will skip this partition",
                          Severity.WARNING)


def _check_deletion(plan: DeletionPlan, snapshot: ClusterSnapshot, allow_internal: bool
                    ) -> Iterator[Problem]:
    for topic in plan.topics:
        if topic not in snapshot.topics:
            yield Problem(topic, f"unknown topic {topic} (not in /brokers/topics)")
        if topic in INTERNAL_TOPICS and not allow_internal:
            yield Problem(topic, f"{topic} is an internal topic; deleting it loses state every "
                                 f"client depends on (allowed with --allow-internal)")
        if snapshot.reassigning.get(topic):
            yield Problem(topic, f"topic {topic} has {len(snapshot.reassigning[topic])} "
                                 "partition(s) being reassigned; kadmin topics delete refuses it "
                                 "(unless --allow-reassigning)", Severity.WARNING)


def validate_against_cluster(plan: Plan, snapshot: ClusterSnapshot, *,
                             allow_rf_change: bool = False, allow_internal: bool = False
                             ) -> Iterator[Problem]:
    """What the controller would drop, skip or do unintentionally; ``where`` is the
    topic-partition (or topic) so the operator can look it up in the cluster. Lazy: the caller
    samples what it shows."""
    if isinstance(plan, ReassignmentPlan):
        return _check_moves(plan, snapshot, allow_rf_change)
    if isinstance(plan, ElectionPlan):
        return _check_election(plan, snapshot)
    return _check_deletion(plan, snapshot, allow_internal)


def validate(doc: object, kind: PlanKind | None = None, snapshot: ClusterSnapshot | None = None,
             *, allow_rf_change: bool = False, allow_internal: bool = False) -> ValidationReport:
    """The document on its own, then (with a snapshot) its entries without errors against the
    cluster: every problem of every entry in one run. The report carries the plan only when
    neither found an error."""
    report = validate_document(doc, kind)
    checked = report.plan if report.plan is not None else report.sound
    if checked is None or snapshot is None:
        return report
    return with_problems(report, validate_against_cluster(
        checked, snapshot, allow_rf_change=allow_rf_change, allow_internal=allow_internal))


def validate_batches(docs: Sequence[tuple[str, object]], snapshot: ClusterSnapshot | None = None,
                     *, allow_rf_change: bool = False) -> ValidationReport:
    """A reassignment plan cut into batch files (a Spark planner's folder), as the one plan
    they make: each file on its own (problems named ``<file>: <path>``), a partition in two
    files, then the whole plan against the cluster."""
    findings = Findings()
    omitted: Counter[Severity] = Counter()
    moves: list[PartitionMove] = []
    homes: list[str] = []
    """The batch file of each of ``moves``, in the same order."""
    for name, doc in docs:
        report = validate_document(doc, PlanKind.REASSIGN)
        for problem in report.problems:
            findings.add(problem._replace(where=f"{name}: {problem.where}", file=name))
        omitted.update({Severity.ERROR: report.omitted_errors,
                        Severity.WARNING: report.omitted_warnings})
        # the entries without errors are checked against the cluster all the same
        sound = report.plan if report.plan is not None else report.sound
        if isinstance(sound, ReassignmentPlan):
            moves.extend(sound.moves)
            homes.extend([name] * len(sound.moves))
    order = sorted(range(len(moves)), key=moves.__getitem__)
    for i, j in pairwise(order):
        if moves[i].tp == moves[j].tp:
            findings.add(Problem(str(moves[i].tp), f"is in more than one batch file: {homes[i]} "
                                                   f"and {homes[j]}"))
    plan = ReassignmentPlan(tuple(moves[i] for i in order))
    if snapshot is not None:
        for problem in validate_against_cluster(plan, snapshot, allow_rf_change=allow_rf_change):
            findings.add(problem)
    failed = findings.errors.total + omitted[Severity.ERROR]
    found = findings.report(PlanKind.REASSIGN, None if failed else plan)
    return replace(found, omitted_errors=found.omitted_errors + omitted[Severity.ERROR],
                   omitted_warnings=found.omitted_warnings + omitted[Severity.WARNING])
