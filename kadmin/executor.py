"""Run a plan against a live cluster: validate, write the rollback, submit batches, wait, verify.

The live cluster decides what is left to do, never the journal: a partition whose replicas already
equal its target is done, and a reassignment znode whose every entry belongs to this plan is a batch
of ours that an interrupted run left behind (it is waited on, never submitted again). The journal
next to the plan only records how far earlier runs got, for the operator; losing it loses nothing.

Progress goes out as :mod:`kadmin.events` values through ``emit``; nothing here touches a terminal.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from kazoo.client import KazooClient

from kadmin import files, plans, throttles
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
    rate_and_eta,
)
from kadmin.health_gate import FULL_READ_INTERVAL, HealthGate
from kadmin.model import (
    ClusterSnapshot,
    Conflict,
    DeletionPlan,
    ElectionPlan,
    InvalidInput,
    NotAuthorized,
    PartitionMove,
    PlanKind,
    ReassignmentPlan,
    Replicas,
    Severity,
    TopicPartition,
    sample_of,
)
from kadmin.sizes import moved_bytes
from kadmin.zk import admin, codec, config, paths, reader, session

Emit = Callable[[Event], None]


def _ignore(_: Event) -> None:
    """Default sink for callers that do not want progress."""


@dataclass(frozen=True)
class ExecutionSettings:
    batch_size: int = 1000
    max_znode_bytes: int = 1_000_000
    timeout: float | None = None
    """Bound on the whole wait, in seconds; None waits for as long as it takes."""
    allow_rf_change: bool = False
    allow_internal: bool = False
    allow_reassigning: bool = False
    """Queue topic deletions even while a reassignment moves some of their partitions."""
    throttle: int | None = None
    """Replication throttle (bytes/s) set for each batch and removed after it; None: none."""
    health_gate: bool = True
    """Before each batch, wait while partitions outside the plan are under-replicated or
    offline (as Cruise Control postpones moves)."""
    health_interval: float = FULL_READ_INTERVAL
    """Seconds between the gate's full reads of every partition state (see health_gate)."""
    max_batch_bytes: int | None = None
    """With partition sizes: the most bytes one batch copies (a bigger partition goes alone)."""


@dataclass(frozen=True)
class PlanFiles:
    """Where the rollback and the journal of one plan live: next to the plan, so they travel with it."""

    plan: Path

    @property
    def rollback(self) -> Path:
        return files.sibling(self.plan, ".rollback.json")

    @property
    def journal(self) -> Path:
        return files.sibling(self.plan, ".journal.json")


@dataclass(frozen=True)
class Outcome:
    """The result the CLI turns into an exit code: ``failures`` are one line each."""

    operation: str
    total: int
    failures: tuple[str, ...] = ()
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return not self.failures and not self.timed_out


def _deadline(settings: ExecutionSettings) -> float:
    return float("inf") if settings.timeout is None else time.monotonic() + settings.timeout


def _live(client: KazooClient, topics: Sequence[str], *, states: bool = False) -> reader.LiveCluster:
    """The cluster as far as one plan is concerned (a topic or state znode that cannot be decoded
    stops the operation). Partition states cost one read per partition, so only elections (whose
    outcome depends on the ISR) ask for them."""
    return reader.read_for_operation(client, set(topics), states=states)


def _require_valid(plan: ReassignmentPlan | ElectionPlan | DeletionPlan, snapshot: ClusterSnapshot,
                   settings: ExecutionSettings) -> None:
    """The same rules as ``plan validate --cluster``: nothing is written when any error is found."""
    errors = sample_of(str(p) for p in plans.validate_against_cluster(
        plan, snapshot, allow_rf_change=settings.allow_rf_change,
        allow_internal=settings.allow_internal) if p.severity is Severity.ERROR)
    if errors.total:
        raise InvalidInput(
            f"the plan does not fit the live cluster ({errors.total:,} error(s)); nothing was "
            "written", details=errors.items, more=errors.rest)


def plan_fingerprint(plan: ReassignmentPlan) -> str:
    digest = hashlib.sha256()
    for move in plan.moves:
        digest.update(f"{move.topic}\0{move.partition}\0{move.replicas}\n".encode())
    return digest.hexdigest()


def _write_journal(paths: PlanFiles, fingerprint: str, total: int, done: int, batches_done: int,
                   in_flight: int, through: TopicPartition | None,
                   throttle: dict[str, object] | None = None) -> None:
    """``submitted_through``: the last partition, in plan order, that any run of this plan has
    submitted. Batches go out in plan order, so every partition up to it was either submitted
    or already in place: what lets ``verify`` tell "failed" from "not started".

    ``throttle`` records the throttles in force for the batch in flight (rate and config
    entities); kadmin's record in ZooKeeper (/kadmin/throttles) is what a rerun removes."""
    files.atomic_write_json(paths.journal, {
        "version": 1,
        "plan": paths.plan.name,
        "plan_sha256": fingerprint,
        "partitions": total,
        "partitions_done": done,
        "batches_done": batches_done,
        "in_flight": in_flight,
        "submitted_through": None if through is None else {"topic": through.topic,
                                                           "partition": through.partition},
        "throttle": throttle,
        "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }, force=True)


def _read_journal(paths: PlanFiles, fingerprint: str) -> dict | None:
    """The journal of an earlier run of *this* plan, or None (missing, unreadable, other plan)."""
    if not paths.journal.exists():
        return None
    try:
        doc = files.read_json(paths.journal)
    except InvalidInput:
        return None
    return doc if isinstance(doc, dict) and doc.get("plan_sha256") == fingerprint else None


def _through(journal: dict | None) -> TopicPartition | None:
    """``submitted_through`` of a journal; None when there is none (no run submitted anything,
    or a journal from before kadmin recorded it)."""
    mark = (journal or {}).get("submitted_through")
    if isinstance(mark, dict) and type(mark.get("topic")) is str \
            and type(mark.get("partition")) is int:
        return TopicPartition(mark["topic"], mark["partition"])
    return None


def submitted_through(paths: PlanFiles, plan: ReassignmentPlan) -> TopicPartition | None:
    """How far runs of ``plan`` have submitted it, from its journal next to ``paths.plan``."""
    return _through(_read_journal(paths, plan_fingerprint(plan)))


def _not_in_isr(client: KazooClient, moves: Sequence[PartitionMove]) -> tuple[str, ...]:
    """One line per partition still moving: which target replicas have not joined its ISR yet.

    Read at a deadline, when ZooKeeper itself may be why time ran out: kazoo holds a request
    made while it reconnects until a server answers, so an unbounded read would keep kadmin
    past its --timeout for as long as the outage lasts. These reads run only while connected
    and end ``admin.AFTER_DEADLINE`` from now; once that has passed, every further read fails
    at once."""
    calls = admin.ZkCalls(client, time.monotonic() + admin.AFTER_DEADLINE, while_connected=True)
    return tuple(_isr_line(calls, move) for move in moves)


def _isr_line(calls: admin.ZkCalls, move: PartitionMove) -> str:
    head = f"{move.tp}: target {list(move.replicas)}"
    path = paths.partition_state(move.topic, move.partition)
    try:
        data = calls.data(path)
        isr = set() if data is None else set(codec.decode_state(data).isr)
    except session.RETRYABLE:
        return f"{head}, ISR unknown (ZooKeeper did not answer)"
    except codec.DecodeError as exc:
        return f"{head}, ISR unknown ({path}: {exc})"
    return f"{head}, not yet in ISR: {[r for r in move.replicas if r not in isr]}"


def dry_run_reassignment(client: KazooClient | None, plan: ReassignmentPlan,
                         snapshot: ClusterSnapshot, settings: ExecutionSettings,
                         sizes: Mapping[TopicPartition, int] | None = None
                         ) -> tuple[list[Sequence[PartitionMove]], plans.PlanStats]:
    """Batches and before/after stats, computed exactly as a real run would; writes nothing."""
    ours = {m.tp for m in _ours_in_flight(client, {m.tp: m.replicas for m in plan.moves})} \
        if client is not None else set()
    _refuse_moving(plan, snapshot, ours)
    _require_valid(plan, snapshot, settings)
    pending, _ = plans.changed_moves(plan, snapshot)
    batches = plans.reassignment_batches(
        pending, settings.batch_size, settings.max_znode_bytes,
        moved_bytes=None if sizes is None else partial(weigh_move, sizes, snapshot),
        max_moved_bytes=settings.max_batch_bytes)
    return batches, plans.plan_stats(plan, snapshot, sizes)


def weigh_move(sizes: Mapping[TopicPartition, int], snapshot: ClusterSnapshot,
               move: PartitionMove) -> int:
    """Bytes ``move`` copies in the cluster ``snapshot``: from the partition's settled replicas,
    so a batch of this plan that an interrupted run left in flight (whose topic znode lists
    target and old replicas together) still weighs what it copies."""
    return moved_bytes(sizes.get(move.tp, 0), snapshot.settled_replicas(move.tp) or (),
                       move.replicas)


def _in_flight_reassignment(client: KazooClient) -> tuple[PartitionMove, ...] | None:
    """/admin/reassign_partitions (None: absent or unreadable), read *before* the topic znodes.

    The controller writes a partition's final replicas before it takes the partition out of that
    znode, so a partition that leaves it after this read shows its final replicas in a topic
    read that follows. Read the other way round, a partition finishing between the two reads
    looks unfinished and not in flight at once: a rerun would submit it a second time, and
    ``verify`` would call it failed."""
    return _live(client, ()).in_flight.reassignment


def _ours_in_flight(client: KazooClient, targets: dict[TopicPartition, Replicas]
                    ) -> tuple[PartitionMove, ...]:
    """Our batch that an interrupted run left in /admin/reassign_partitions, to wait on rather
    than submit again; anyone else's request there is a Conflict. (An unreadable znode reads as
    none: the create that follows refuses with a Conflict naming it.)"""
    in_flight = _in_flight_reassignment(client)
    if in_flight is None:
        return ()
    if not in_flight or any(targets.get(m.tp) != m.replicas for m in in_flight):
        admin.ensure_idle(client, PlanKind.REASSIGN)  # raises Conflict naming what runs
        raise Conflict("a reassignment is already in progress in /admin/reassign_partitions")
    return in_flight


def _refuse_moving(plan: ReassignmentPlan, snapshot: ClusterSnapshot,
                   ours: set[TopicPartition]) -> None:
    """Conflict for a partition of the plan that the topic znodes show moving, unless it is in
    ``ours`` (a batch of this plan an interrupted run left in /admin/reassign_partitions)."""
    planned = {m.tp for m in plan.moves}
    plans.refuse_moving(snapshot.reassigning, lambda tp: tp in planned and tp not in ours,
                        "nothing of the plan was submitted")


def _unmoved(client: KazooClient, batch: Sequence[PartitionMove]) -> tuple[PartitionMove, ...]:
    """The batch's moves that the live cluster does not show applied yet (a Conflict if someone
    else started moving one since the run began)."""
    live = _live(client, sorted({m.topic for m in batch}))
    moves = ReassignmentPlan(tuple(batch))
    _refuse_moving(moves, live.snapshot, set())
    return plans.changed_moves(moves, live.snapshot)[0]


def execute_reassignment(client: KazooClient, plan: ReassignmentPlan, paths: PlanFiles,
                         settings: ExecutionSettings, emit: Emit = _ignore,
                         sizes: Mapping[TopicPartition, int] | None = None) -> Outcome:
    """Run the plan (``paths.plan``, which must exist) to the end, or to the deadline. With
    ``sizes`` (bytes per partition) batches can be bounded by bytes and progress counts bytes;
    with ``settings.throttle`` each batch runs throttled.

    One run of a plan file at a time (a lock on the file, a Conflict for the second): the
    rollback file a run creates, and removes again when its first batch is refused, must not be
    one that another run of the same plan relies on."""
    with files.exclusive(paths.plan):
        # the files this run may write, checked before anything is written (README, file rules)
        for path in (paths.rollback, paths.journal):
            files.check_target(path, True)
        existed = {path for path in (paths.rollback, paths.journal) if path.exists()}
        run = _Run()
        try:
            return _execute_reassignment(client, plan, paths, settings, emit, sizes, run)
        except BaseException:
            if not run.submitted:
                # refused, failed or stopped before anything reached the controller: the run
                # changed nothing, so it leaves none of its files behind either
                for path in (paths.rollback, paths.journal):
                    if path not in existed:
                        path.unlink(missing_ok=True)
            raise


@dataclass
class _Run:
    """What one run has done so far, for the cleanup of a run that ends early."""

    submitted: bool = False
    """A batch of the plan is (or may be) in ZooKeeper: the run's files must stay."""


def _execute_reassignment(client: KazooClient, plan: ReassignmentPlan, paths: PlanFiles,
                          settings: ExecutionSettings, emit: Emit,
                          sizes: Mapping[TopicPartition, int] | None, run: _Run) -> Outcome:
    targets = {m.tp: m.replicas for m in plan.moves}
    ours_in_flight = _ours_in_flight(client, targets)
    run.submitted = bool(ours_in_flight)
    in_flight_tps = {m.tp for m in ours_in_flight}
    live = _live(client, sorted({m.topic for m in plan.moves}))
    _refuse_moving(plan, live.snapshot, in_flight_tps)
    # Our batch in ZooKeeper is the controller's business now; the run that submitted it
    # validated it.
    _require_valid(ReassignmentPlan(tuple(m for m in plan.moves if m.tp not in in_flight_tps)),
                   live.snapshot, settings)
    fingerprint = plan_fingerprint(plan)

    pending, unchanged = plans.changed_moves(plan, live.snapshot)
    weights = None if sizes is None else {
        m.tp: weigh_move(sizes, live.snapshot, m) for m in pending}
    weigh = None if weights is None else (lambda m: weights.get(m.tp, 0))
    to_submit = [m for m in pending if m.tp not in in_flight_tps]
    batches: list[Sequence[PartitionMove]] = plans.reassignment_batches(
        to_submit, settings.batch_size, settings.max_znode_bytes, moved_bytes=weigh,
        max_moved_bytes=settings.max_batch_bytes) if to_submit else []
    # Kept once written (by `plan generate` or the first run): a rerun after a crash must not
    # replace the pre-change assignment with a half-applied one.
    new_rollback = not paths.rollback.exists()
    if new_rollback:
        files.atomic_write_json(paths.rollback,
                                plans.plan_document(plans.current_assignment(plan, live.snapshot)))
    if not ours_in_flight:
        _clear_own_throttles(client, 0, emit)  # left by a run killed mid-batch: that batch is over
    total = len(plan.moves)
    done = total - len(pending)
    count = len(batches) + (1 if ours_in_flight else 0)
    earlier = _read_journal(paths, fingerprint)
    resumed = bool(ours_in_flight) or earlier is not None
    through = _through(earlier)

    def record(done: int, batches_done: int, in_flight: int,
               throttle: dict[str, object] | None = None) -> None:
        _write_journal(paths, fingerprint, total, done, batches_done, in_flight, through,
                       throttle)

    bytes_total = None if weights is None else sum(weights.values())
    emit(ExecutionPlanned("reassign", total, unchanged, count, already_done=done, resumed=resumed,
                          bytes_total=bytes_total, bytes_done=None if weights is None else 0))
    deadline = _deadline(settings)
    gate = (HealthGate(client, lambda tp: tp not in targets, settings.health_interval)
            if settings.health_gate else None)
    copied = 0
    started = time.monotonic()

    work: list[tuple[Sequence[PartitionMove], bool]] = (
        [(ours_in_flight, True)] if ours_in_flight else []) + [(b, False) for b in batches]
    for number, (batch, in_zookeeper) in enumerate(work, start=1):
        throttle = None
        if in_zookeeper:
            emit(BatchResumed(number, count, len(batch)))
        else:
            if number > 1:
                # read again: another run of this plan may have moved them since this run began
                unmoved = _unmoved(client, batch)
                done += len(batch) - len(unmoved)
                copied += sum(map(weigh, batch)) - sum(map(weigh, unmoved)) if weigh else 0
                batch = unmoved
                if not batch:
                    emit(BatchDone(number, count, done, total, _maybe(copied, weights)))
                    record(done, number, 0)
                    continue
            if gate is not None:
                gate.wait(number, deadline, emit)
            if settings.throttle is not None:
                throttle = _set_throttles(client, batch, settings.throttle, number, emit)
                record(done, number - 1, 0, throttle)
            submitted_before, run.submitted = run.submitted, True  # a lost answer may hide it
            try:
                admin.submit_reassignment(client, batch)
            except (Conflict, NotAuthorized):
                # another process won the race for the znode, or an ACL refused it: not written
                run.submitted = submitted_before
                _clear_own_throttles(client, number, emit)
                raise
            emit(BatchSubmitted(number, count, len(batch),
                                None if weigh is None else sum(map(weigh, batch))))
        last = max(m.tp for m in batch)
        through = last if through is None else max(through, last)
        record(done, number - 1, len(batch), throttle)
        base, base_bytes = done, copied
        batch_bytes = None if weigh is None else sum(map(weigh, batch))

        def update(u: admin.WaitUpdate, number: int = number, base: int = base,
                   size: int = len(batch), base_bytes: int = base_bytes,
                   batch_bytes: int | None = batch_bytes) -> None:
            progress = Waiting(number, u.remaining, base + size - u.remaining, total,
                               u.controller, u.connected)
            if batch_bytes is not None and bytes_total is not None:
                left = u.remaining_weight or 0
                now_copied = base_bytes + batch_bytes - left
                rate, eta = rate_and_eta(now_copied, time.monotonic() - started,
                                         bytes_total - now_copied)
                progress = dataclasses.replace(
                    progress, bytes_done=now_copied, bytes_total=bytes_total,
                    batch_bytes_done=batch_bytes - left, batch_bytes_total=batch_bytes,
                    rate=rate, eta=eta, batch_eta=None if rate is None else left / rate)
            emit(progress)

        remaining = admin.wait_reassignment(client, deadline=deadline, on_update=update,
                                            weigh=weigh)
        if remaining:
            # the throttles stay: the batch still copies; a rerun waits for it, then removes them
            emit(TimedOut(len(remaining)))
            record(base + len(batch) - len(remaining), number - 1, len(remaining), throttle)
            return Outcome("reassign", total, _not_in_isr(client, remaining), timed_out=True)
        done = base + len(batch)
        copied = base_bytes + (batch_bytes or 0)
        _clear_own_throttles(client, number, emit)
        emit(BatchDone(number, count, done, total, _maybe(copied, weights)))
        record(done, number, 0)
    if not work and paths.journal.exists():
        # a run killed after its last batch finished left the journal short of the end
        record(done, 0, 0)

    # every partition has been submitted or was in place: one not at its target failed
    failures = verify_reassignment(client, plan, max((m.tp for m in plan.moves),
                                                     default=None)).failures
    emit(Finished("reassign", not failures, len(failures)))
    return Outcome("reassign", total, failures)


def _maybe(value: int, weights: object | None) -> int | None:
    """``value`` when bytes are counted at all (with sizes), else None."""
    return None if weights is None else value


def _set_throttles(client: KazooClient, batch: Sequence[PartitionMove], rate: int, number: int,
                   emit: Emit) -> dict[str, object]:
    """Spec section 5's throttles for the batch, merged into the config znodes (kadmin's own
    additions recorded in /kadmin/throttles); returns what the journal records."""
    current = reader.read_assignments(client, {m.topic for m in batch})
    need = throttles.batch_throttle(batch, {
        m.tp: current.get(m.topic, {}).get(m.partition, ()) for m in batch})
    value = str(rate)
    edits: dict[str, config.Edit] = {
        throttles.topic_entity(topic): partial(throttles.add, replicas=keys, rates={})
        for topic, keys in need.replicas.items()}
    edits.update({throttles.broker_entity(b): partial(
        throttles.add, replicas={}, rates={throttles.LEADER_RATE: value,
                                           throttles.FOLLOWER_RATE: value})
        for b in need.brokers})
    config.update(client, edits)
    emit(ThrottleSet(number, rate, len(need.replicas), len(need.brokers)))
    return {"rate": rate, "entities": need.entities()}


def _clear_own_throttles(client: KazooClient, number: int, emit: Emit) -> None:
    """Take out exactly the throttle entries kadmin recorded adding (none: nothing to do)."""
    entities = config.recorded_entities(client)
    if entities:
        # the others first: one record kadmin cannot read stops the run, naming it
        config.update(client, dict.fromkeys(entities, throttles.remove_own), skip_unreadable=True)
        emit(ThrottleCleared(number, len(entities)))


@dataclass(frozen=True)
class Verification:
    """Every partition of a plan in one of four states; ``failures`` are one line each."""

    complete: tuple[TopicPartition, ...]
    in_progress: tuple[TopicPartition, ...]
    not_started: tuple[TopicPartition, ...]
    failures: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not (self.in_progress or self.not_started or self.failures)


def verify_reassignment(client: KazooClient, plan: ReassignmentPlan,
                        submitted_through: TopicPartition | None) -> Verification:
    """Each partition of the plan, against the live cluster:

    - in progress: moving to its target - listed so in /admin/reassign_partitions, or shown
      moving there in its topic znode (Kafka 2.4+);
    - complete: not moving, and its replicas equal the target (order included);
    - not started: neither, and no run submitted it: it comes after ``submitted_through`` in
      plan order (None: nothing of the plan was submitted);
    - failed: gone, being moved to another target, or submitted yet not at its target.
    """
    before = _in_flight_reassignment(client) or ()
    live = _live(client, sorted({m.topic for m in plan.moves}))
    # listed when in the znode before or after the topic reads: a batch submitted in between
    # is in the second, a partition that finished in between is final in the topic read
    listed = {m.tp: m.replicas for m in (*before, *(live.in_flight.reassignment or ()))}
    complete, in_progress, not_started, failures = [], [], [], []
    for move in plan.moves:
        tp, target = move.tp, move.replicas
        moving = live.snapshot.reassignment(tp)
        heading = {t for t in (listed.get(tp), moving and moving.target) if t}
        current = live.snapshot.replicas(tp)
        if heading:
            # checked first: while moving, Kafka 2.4+ shows target + old replicas in the topic
            # znode, which equals the target whenever the target only adds replicas
            if heading == {target}:
                in_progress.append(tp)
            else:
                elsewhere = sorted(list(t) for t in heading - {target})
                failures.append(f"{tp}: being reassigned to {elsewhere[0]} by another request, "
                                f"not to its target {list(target)}")
        elif current == target:
            complete.append(tp)
        elif current is None:
            failures.append(f"{tp}: partition no longer exists")
        elif submitted_through is not None and tp <= submitted_through:
            failures.append(f"{tp}: replicas {list(current)}, target {list(target)}")
        else:
            not_started.append(tp)
    return Verification(tuple(complete), tuple(in_progress), tuple(not_started), tuple(failures))


def execute_election(client: KazooClient, plan: ElectionPlan, settings: ExecutionSettings,
                     emit: Emit = _ignore) -> Outcome:
    """Elect preferred leaders in znode-sized batches, then explain every partition still not led
    by its preferred replica."""
    live = _live(client, sorted({tp.topic for tp in plan.partitions}), states=True)
    _require_valid(plan, live.snapshot, settings)
    admin.ensure_idle(client, PlanKind.ELECTION)
    snapshot = live.snapshot
    pending = [tp for tp in plan.partitions if not _led_by_preferred(snapshot, tp)]
    batches = plans.election_batches(pending, settings.batch_size, settings.max_znode_bytes) \
        if pending else []
    total = len(plan.partitions)
    emit(ExecutionPlanned("elect", total, total - len(pending), len(batches)))
    deadline = _deadline(settings)
    done = total - len(pending)
    for number, batch in enumerate(batches, start=1):
        admin.submit_election(client, batch)
        emit(BatchSubmitted(number, len(batches), len(batch)))
        if not admin.wait_election(client, deadline=deadline):
            emit(TimedOut(len(batch)))
            return Outcome("elect", total, (
                f"/admin/preferred_replica_election still holds batch {number} "
                f"({len(batch)} partitions) after the timeout",), timed_out=True)
        done += len(batch)
        emit(BatchDone(number, len(batches), done, total))

    after = _live(client, sorted({tp.topic for tp in plan.partitions}), states=True).snapshot
    failures = tuple(_election_failure(after, tp) for tp in plan.partitions
                     if not _led_by_preferred(after, tp))
    emit(Finished("elect", not failures, len(failures)))
    return Outcome("elect", total, failures)


def _led_by_preferred(snapshot: ClusterSnapshot, tp: TopicPartition) -> bool:
    replicas, state = snapshot.replicas(tp), snapshot.state(tp)
    return replicas is not None and len(replicas) > 0 and state is not None \
        and state.leader == replicas[0]


def _election_failure(snapshot: ClusterSnapshot, tp: TopicPartition) -> str:
    replicas, state = snapshot.replicas(tp) or (), snapshot.state(tp)
    leader = state.leader if state else None
    if not replicas:
        return f"{tp}: partition no longer exists"
    preferred = replicas[0]
    if preferred not in snapshot.brokers:
        why = f"preferred replica {preferred} is offline"
    elif state is None:
        why = "the partition has no state znode, so no leader or ISR"
    elif preferred not in state.isr:
        why = f"preferred replica {preferred} is not in the ISR {list(state.isr)}"
    else:
        why = "the controller did not move the leadership"
    return f"{tp}: leader is {leader}, not preferred replica {preferred}: {why}"


def check_deletion(client: KazooClient, plan: DeletionPlan, settings: ExecutionSettings
                   ) -> list[Sequence[str]]:
    """Everything that must hold before the operator is asked to confirm a deletion; returns
    the topics of each transaction of markers."""
    moving = _in_flight_reassignment(client) or ()
    snapshot = _live(client, list(plan.topics)).snapshot
    if not settings.allow_reassigning:
        _refuse_deleting_moving(plan, snapshot, moving)
    _require_valid(plan, snapshot, settings)
    batches = plans.deletion_batches(plan.topics, settings.max_znode_bytes, client.chroot or "")
    admin.ensure_idle(client, PlanKind.DELETION)
    return batches


def _refuse_deleting_moving(plan: DeletionPlan, snapshot: ClusterSnapshot,
                            submitted: Sequence[PartitionMove]) -> None:
    """Conflict for a topic a reassignment still moves, in /admin/reassign_partitions or in its
    topic znode: Kafka's controller holds such a deletion until the move ends, so the wait that
    follows would hang on it, and the move's work is thrown away."""
    doomed = set(plan.topics)
    partitions = sorted({m.tp for m in submitted if m.topic in doomed}
                        | {tp for tp in snapshot.reassigning_partitions() if tp.topic in doomed})
    if partitions:
        topics = sorted({tp.topic for tp in partitions})
        raise Conflict(f"{len(topics)} topic(s) to delete are being reassigned "
                       f"({len(partitions)} partition(s) moving); nothing was deleted (wait until "
                       "the reassignment is done, or --allow-reassigning)",
                       details=(f"topic {tp.topic}: partition {tp.partition} is moving"
                                for tp in partitions))


def execute_deletion(client: KazooClient, plan: DeletionPlan, settings: ExecutionSettings,
                     emit: Emit = _ignore) -> Outcome:
    batches = check_deletion(client, plan, settings)
    total, count = len(plan.topics), len(batches)
    emit(ExecutionPlanned("delete", total, 0, count))
    queued: list[str] = []
    for number, batch in enumerate(batches, start=1):
        # all queued before the wait: the controller works through every marker it finds
        admin.submit_deletions(client, batch, queued_before=queued)
        queued += batch
        emit(BatchSubmitted(number, count, len(batch)))

    def update(u: admin.WaitUpdate) -> None:
        emit(Waiting(count, u.remaining, total - u.remaining, total, u.controller, u.connected))

    remaining = admin.wait_deletions(client, plan.topics, deadline=_deadline(settings),
                                     on_update=update)
    if remaining:
        emit(TimedOut(len(remaining)))
        return Outcome("delete", total, tuple(f"topic {t} is not deleted yet" for t in remaining),
                       timed_out=True)
    emit(BatchDone(count, count, total, total))
    emit(Finished("delete", True, 0))
    return Outcome("delete", total)
