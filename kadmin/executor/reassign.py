"""Run a reassignment plan against a live cluster: validate, write the rollback, compose the
schedule (kadmin.schedule), run its batches one by one, verify, and elect when asked.

The live cluster decides what is left to do, never the journal: a partition whose replicas
already equal its target is done, and a reassignment znode whose every entry belongs to this plan
is a batch of ours that an interrupted run left behind (it is waited on, never submitted again).
The journal keeps the schedule, so a rerun continues the same batches (see journal.py).

Progress goes out as :mod:`kadmin.events` values through ``emit``; nothing here touches a terminal.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from kazoo.client import KazooClient

from kadmin import files, plans, schedule, throttles
from kadmin.events import BatchDone, BatchResumed, ExecutionPlanned, Finished, TimedOut
from kadmin.executor import journal as journals
from kadmin.executor import rollback as rollbacks
from kadmin.executor.common import (
    Emit,
    ExecutionSettings,
    Outcome,
    PlanFiles,
    deadline_of,
    ignore,
    in_flight_reassignment,
    live,
    not_in_isr,
    ours_in_flight,
    refuse_moving,
    require_valid,
    unmoved,
)
from kadmin.executor.elect import execute_election
from kadmin.executor.progress import Accountant
from kadmin.executor.runner import BatchRunner, clear_own_throttles
from kadmin.executor.transfers import limits as batch_limits
from kadmin.executor.transfers import transfers as transfers_of
from kadmin.executor.verify import verify_reassignment
from kadmin.health_gate import HealthGate
from kadmin.model import (
    ClusterSnapshot,
    Conflict,
    ElectionPlan,
    InvalidInput,
    KadminError,
    OperationFailed,
    PartitionMove,
    PlanKind,
    ReassignmentPlan,
    Replicas,
    Sample,
    TopicPartition,
    sample_of,
)
from kadmin.operations.planfiles import read_back_plan
from kadmin.sizes import moved_bytes
from kadmin.zk import admin, config, reader
from kadmin.zk.identity import cluster_identity


def weigh_move(sizes: Mapping[TopicPartition, int], snapshot: ClusterSnapshot,
               move: PartitionMove) -> int:
    """Bytes ``move`` copies in the cluster ``snapshot``: from the partition's settled replicas,
    so a batch of this plan that an interrupted run left in flight (whose topic znode lists
    target and old replicas together) still weighs what it copies."""
    return moved_bytes(sizes.get(move.tp, 0), snapshot.settled_replicas(move.tp) or (),
                       move.replicas)


def options_key(settings: ExecutionSettings, sized: bool) -> str:
    """What a schedule depends on besides the plan and the cluster: a rerun with the same key
    continues the journal's schedule."""
    return (f"batch_size={settings.batch_size} max_znode_bytes={settings.max_znode_bytes} "
            f"max_batch_bytes={settings.max_batch_bytes} "
            f"max_moves_per_broker={settings.max_moves_per_broker} sizes={sized}")


@dataclass(frozen=True)
class Scheduled:
    """A run's schedule against the cluster as read at its start."""

    journal: journals.Journal
    """To write before the first submission (batches from ``journal.submitted`` on run)."""
    batches: tuple[tuple[PartitionMove, ...], ...]
    """The batches this run submits, in order: the journal's from ``submitted`` on, without the
    partitions already at their target (empty ones dropped)."""
    positions: tuple[int, ...]
    """Each of ``batches``' index in ``journal.batches``."""
    transfers: tuple[tuple[schedule.Transfer, ...], ...]
    """The model's view of each of ``batches``."""
    loads: tuple[int, ...]
    bound: int
    """The execution model's lower bound (docs/execution.md) for everything this run submits."""
    unchanged: int
    """Partitions at their target that no run of this plan submitted."""
    already_done: int
    """Partitions at their target that an earlier run submitted."""
    sized: bool
    resumed: bool = False
    """This run continues an earlier, unfinished one (its journal)."""
    contradicted: Sample[TopicPartition] = dataclasses.field(
        default_factory=lambda: Sample((), 0))
    """Partitions the journal records submitted that the live cluster shows neither at their
    target nor moving: submitted again, in batches of their own."""

    def prediction(self, rate: int) -> schedule.Prediction:
        flat = [t for batch in self.transfers for t in batch]
        spans, start = [], 0
        for batch in self.transfers:
            spans.append(tuple(range(start, start + len(batch))))
            start += len(batch)
        return schedule.predict(flat, schedule.Schedule(tuple(spans), self.loads, self.bound),
                                rate)


def compose_run(client: KazooClient, plan: ReassignmentPlan, files_of: PlanFiles,
                snapshot: ClusterSnapshot, settings: ExecutionSettings,
                sizes: Mapping[TopicPartition, int] | None,
                in_flight: set[TopicPartition]) -> Scheduled:
    """The schedule this run follows: the journal's when it was composed with the same options,
    else the journal's submitted batches followed by a composition of the rest (or all of it,
    without a journal, or after a finished run's). Reads the partition states of what is left
    (their leaders send).

    A partition the journal records submitted that is neither at its target nor moving (the
    cluster changed since, a rollback ran, or the controller dropped it) contradicts the journal:
    it is listed in ``contradicted`` and composed into new batches, as if never submitted."""
    cluster = cluster_identity(client)
    last = journals.read(files_of.journal, plan)
    found = journals.of_run(files_of.journal, last, cluster)
    recorded = found.submitted_partitions(plan) if found is not None else frozenset()
    pending, _ = plans.changed_moves(plan, snapshot)
    pending_tps = {m.tp for m in pending}
    contradicted = sample_of(m.tp for m in pending if m.tp in recorded and m.tp not in in_flight)
    submitted = recorded - {m.tp for m in pending if m.tp not in in_flight}
    at_target = [m.tp for m in plan.moves if m.tp not in pending_tps]
    # counted as done by a run of this plan: the last run's on this cluster, finished or not
    done_by_runs = (last.submitted_partitions(plan)
                    if last is not None and last.cluster == cluster else frozenset())
    already_done = sum(1 for tp in at_target if tp in done_by_runs)
    index = {m.tp: i for i, m in enumerate(plan.moves)}
    states = reader.read_states(client, pending_tps - in_flight)
    key = options_key(settings, sizes is not None)
    limits = batch_limits(settings.batch_size, settings.max_znode_bytes,
                          settings.max_batch_bytes, settings.max_moves_per_broker)
    if found is not None and found.options == key:
        planned = {i for b in found.batches[found.submitted:] for i in b}
        # partitions no batch to come holds and no run submitted: at their target when the
        # schedule was made, moved away since; composed into batches of their own
        extra = [m for m in pending if index[m.tp] not in planned and m.tp not in submitted
                 and m.tp not in in_flight]
        journal = found
        if extra:
            journal = journals.Journal(**{**found.__dict__, "batches": found.batches + tuple(
                tuple(index[extra[i].tp] for i in b)
                for b in _compose(extra, snapshot, sizes, states, limits))})
    else:
        rest = [m for m in pending if m.tp not in submitted and m.tp not in in_flight]
        composed = _compose(rest, snapshot, sizes, states, limits)
        journal = journals.new(files_of.plan, plan, cluster, key,
                               [[index[rest[i].tp] for i in b] for b in composed], kept=found)
    batches, positions, views = [], [], []
    for position in range(journal.submitted, len(journal.batches)):
        moves = tuple(plan.moves[i] for i in journal.batches[position]
                      if plan.moves[i].tp in pending_tps and plan.moves[i].tp not in in_flight)
        if moves:
            batches.append(moves)
            positions.append(position)
            views.append(tuple(transfers_of(moves, snapshot, sizes, states)))
    return Scheduled(journal, tuple(batches), tuple(positions), tuple(views),
                     tuple(schedule.load_of(v)[0] for v in views),
                     schedule.lower_bound(t for v in views for t in v),
                     unchanged=len(at_target) - already_done, already_done=already_done,
                     sized=sizes is not None, resumed=found is not None,
                     contradicted=contradicted)


def _compose(moves: Sequence[PartitionMove], snapshot: ClusterSnapshot,
             sizes: Mapping[TopicPartition, int] | None, states: Mapping, limits: schedule.Limits
             ) -> tuple[tuple[int, ...], ...]:
    return schedule.compose(transfers_of(moves, snapshot, sizes, states), limits).batches


@dataclass(frozen=True)
class Prepared:
    """What a run knows before it writes anything: the checks passed, the cluster as read and
    the schedule it follows (shared by the run and its dry run, so both refuse alike)."""

    in_flight: tuple[PartitionMove, ...]
    """Our batch that an interrupted run left in /admin/reassign_partitions (waited on)."""
    snapshot: ClusterSnapshot
    scheduled: Scheduled
    rollback: ReassignmentPlan | None
    """The rollback file to write (None: the one there already covers the run)."""
    deleting: tuple[str, ...]
    """The topics queued in /admin/delete_topics."""


def prepare(client: KazooClient, plan: ReassignmentPlan, files_of: PlanFiles,
            settings: ExecutionSettings, sizes: Mapping[TopicPartition, int] | None,
            found_ours: Callable[[tuple[PartitionMove, ...]], None] = lambda _: None,
            cluster: reader.LiveCluster | None = None) -> Prepared:
    """The reads and checks before a run's first write, in its order: another request in
    /admin/reassign_partitions (a Conflict unless it is our batch), the plan's topics (what
    cannot be decoded stops it), partitions moving (a Conflict), the plan against the cluster,
    the journal and the schedule, the rollback file. ``found_ours`` hears of our batch in
    flight as soon as it is found (a run that resumes it keeps its files, whatever follows).

    ``cluster``: the plan's topics as the caller already read them (``live(client, topics)``,
    which reads /admin/reassign_partitions before them), used instead of reading both again."""
    listed = (in_flight_reassignment(client) if cluster is None
              else cluster.in_flight.reassignment)
    in_flight = ours_in_flight(client, listed, {m.tp: m.replicas for m in plan.moves})
    found_ours(in_flight)
    in_flight_tps = {m.tp for m in in_flight}
    found = cluster if cluster is not None else live(client, sorted({m.topic for m in plan.moves}))
    snapshot = found.snapshot
    refuse_moving(plan, snapshot, in_flight_tps)
    # our batch in ZooKeeper is the controller's business now; the run that submitted it
    # validated it
    require_valid(ReassignmentPlan(tuple(m for m in plan.moves if m.tp not in in_flight_tps)),
                  snapshot, settings)
    scheduled = compose_run(client, plan, files_of, snapshot, settings, sizes, in_flight_tps)
    # kept once written (by `plan generate` or the first run): a rerun after a crash must not
    # replace the pre-change assignment with a half-applied one; completed with the partitions
    # this run changes that it lacks
    rollback = rollbacks.covering(files_of.rollback, plan, snapshot,
                                  {m.tp for m in plans.changed_moves(plan, snapshot)[0]})
    return Prepared(in_flight, snapshot, scheduled, rollback, found.in_flight.deletions)


@dataclass(frozen=True)
class DryRun:
    scheduled: Scheduled
    stats: plans.PlanStats
    in_flight: int = 0
    """Partitions of our batch an interrupted run left in ZooKeeper: the run waits on them
    first, as one more batch."""
    would_fail: tuple[str, ...] = ()
    """A line per partition the controller would drop (its topic queued for deletion): the run
    submits them and fails on them (exit 1)."""


@contextmanager
def guarded(paths: PlanFiles) -> Iterator[None]:
    """Held by a run and by its dry run alike: the plan file's lock (another run of the plan is
    a Conflict), and the places of the files a run may write checked before anything is
    written (README, file rules)."""
    with files.exclusive(paths.plan):
        for path in (paths.rollback, paths.journal):
            files.check_place(path, True)
        yield


def dry_run_reassignment(client: KazooClient, plan: ReassignmentPlan, files_of: PlanFiles,
                         settings: ExecutionSettings,
                         sizes: Mapping[TopicPartition, int] | None = None,
                         cluster: reader.LiveCluster | None = None) -> DryRun:
    """The batches a real run would now submit, their modelled durations and the before/after
    stats, computed exactly as the run does, with every refusal of the run before its first
    submission (the plan's lock, the files it writes, kadmin's throttle records and, with a
    throttle, the config znodes it merges into) and the partitions the controller would drop;
    writes nothing. ``cluster``: the plan's topics as the caller read them (see
    :func:`prepare`; read here when None)."""
    with guarded(files_of):  # refused as the run refuses them
        prepared = prepare(client, plan, files_of, settings, sizes, cluster=cluster)
    # the config znodes the run rewrites: where it clears what a killed run left (kadmin's
    # records), and with a throttle those it merges into; each read once, every problem named
    entities = [] if prepared.in_flight else list(config.recorded_entities(client))
    if settings.throttle is not None:
        entities += throttles.batch_throttle(
            (m for batch in prepared.scheduled.batches for m in batch),
            {m.tp: prepared.snapshot.replicas(m.tp) or () for m in plan.moves}).entities()
    config.check_readable(client, entities)
    scheduled, deleting = prepared.scheduled, frozenset(prepared.deleting)
    would_fail = tuple(f"{m.tp}: topic {m.topic} is queued for deletion in "
                       "/admin/delete_topics; the controller drops its reassignment"
                       for batch in scheduled.batches for m in batch if m.topic in deleting)
    return DryRun(scheduled, plans.plan_stats(plan, prepared.snapshot, sizes),
                  len(prepared.in_flight), would_fail)


def execute_reassignment(client: KazooClient, plan: ReassignmentPlan, paths: PlanFiles,
                         settings: ExecutionSettings, emit: Emit = ignore,
                         sizes: Mapping[TopicPartition, int] | None = None) -> Outcome:
    """Run the plan (``paths.plan``, which must exist) to the end, or to the deadline. With
    ``sizes`` (bytes per partition) the schedule weighs bytes and progress counts them; with
    ``settings.throttle`` each batch runs throttled; with ``settings.elect`` the preferred
    leaders are elected at the end.

    One run of a plan file at a time (a lock on the file, a Conflict for the second): the
    rollback file a run creates, and removes again when its first batch is refused, must not be
    one that another run of the same plan relies on."""
    with guarded(paths):
        existed = {path for path in (paths.rollback, paths.journal) if path.exists()}
        run = _Run(client, plan, paths, settings, emit, sizes)
        try:
            return run.run()
        except KadminError as exc:
            _taken_back(run, paths, existed)
            if run.submitted or isinstance(exc, Conflict):
                raise
            # failed before submitting: if another reassignment started meanwhile (between a
            # check and the create, or while the gate waited on the partitions it moves), that
            # is why, whatever the timing: a conflict, exit 3, as when it was seen first
            busy = admin.in_progress(client, PlanKind.REASSIGN)
            if busy is None:
                raise
            raise Conflict(f"{busy}; nothing of the plan was submitted") from exc
        except BaseException:
            _taken_back(run, paths, existed)
            raise


def _taken_back(run: _Run, paths: PlanFiles, existed: set[Path]) -> None:
    """A run refused, failed or stopped before anything reached the controller changed
    nothing, so it leaves none of the files it created behind either."""
    if not run.submitted:
        for path in (paths.rollback, paths.journal):
            if path not in existed:
                # best effort: a read-only folder must not mask the error itself
                with suppress(OSError):
                    path.unlink(missing_ok=True)


class _Run:
    """One run of a plan: the steps of :func:`execute_reassignment`, sharing its state."""

    def __init__(self, client: KazooClient, plan: ReassignmentPlan, paths: PlanFiles,
                 settings: ExecutionSettings, emit: Emit,
                 sizes: Mapping[TopicPartition, int] | None) -> None:
        self.client, self.plan, self.paths = client, plan, paths
        self.settings, self.emit, self.sizes = settings, emit, sizes
        self.deadline = deadline_of(settings)
        self.runner: BatchRunner | None = None
        self.resumed_ours = False
        """A batch of this plan an earlier run left in ZooKeeper is waited on."""

    @property
    def submitted(self) -> bool:
        """Whether anything of this run is (or may be) in ZooKeeper: its files must stay."""
        return self.resumed_ours or (self.runner is not None and self.runner.submitted)

    def _found_ours(self, in_flight: tuple[PartitionMove, ...]) -> None:
        self.resumed_ours = bool(in_flight)

    def run(self) -> Outcome:
        client, plan, settings = self.client, self.plan, self.settings
        targets = {m.tp: m.replicas for m in plan.moves}
        prepared = prepare(client, plan, self.paths, settings, self.sizes, self._found_ours)
        in_flight, snapshot, scheduled = prepared.in_flight, prepared.snapshot, prepared.scheduled
        self.snapshot = snapshot
        # the throttle records' owner: this plan (the journal prepared is always this plan's)
        owner = throttles.run_owner(scheduled.journal.plan_sha256)
        if prepared.rollback is not None:
            files.atomic_write_json(self.paths.rollback, plans.plan_document(prepared.rollback),
                                    force=True, read_back=read_back_plan)
        if not in_flight:
            clear_own_throttles(client, 0, self.emit, owner)  # a killed run left them
        resumed_views = () if not in_flight else (
            tuple(transfers_of(in_flight, snapshot, self.sizes)),)
        work = [*((in_flight,) if in_flight else ()), *scheduled.batches]
        views = [*resumed_views, *scheduled.transfers]
        weights = [sum(t.work for t in v) for v in views]
        total = len(plan.moves)
        self.account = Accountant(
            total, scheduled.unchanged + scheduled.already_done,
            [schedule.load_of(v)[0] for v in views], weights if self.sizes is not None else None,
            settings.throttle, time.monotonic())
        self.emit(ExecutionPlanned(
            "reassign", total, scheduled.unchanged, len(work),
            already_done=scheduled.already_done, resumed=bool(in_flight) or scheduled.resumed,
            bytes_total=self.account.bytes_total, bytes_done=self.account.bytes_done,
            eta=self.account.left(time.monotonic(), after=False),
            contradicted=tuple(map(str, scheduled.contradicted.items)),
            contradicted_count=scheduled.contradicted.total))
        # written with the first submission: a run refused at its first create leaves nothing
        self.journal = dataclasses.replace(
            scheduled.journal, partitions_done=scheduled.unchanged + scheduled.already_done)
        runner = self.runner = BatchRunner(client, self.emit, settings.throttle, HealthGate(
            client, lambda tp: tp not in targets, settings.health_interval)
            if settings.health_gate else None, self.deadline, owner)
        positions = [*((-1,) if in_flight else ()), *scheduled.positions]
        for number, (batch, position) in enumerate(zip(work, positions, strict=True), start=1):
            outcome = self._batch(runner, number, len(work), batch, position)
            if outcome is not None:
                return outcome
        # every batch of the schedule went out, or found nothing left to do
        if work or self.paths.journal.exists():
            last = len(self.journal.batches)
            self._record(submitted=last, batches_done=last, in_flight=0, throttle=None,
                         partitions_done=self.account.done)
        # every partition has been submitted or was in place: one not at its target failed
        failures = verify_reassignment(client, plan, frozenset(targets)).failures
        self.emit(Finished("reassign", not failures, len(failures)))
        if failures or not settings.elect:
            return Outcome("reassign", total, failures)
        return self._elect()

    def _batch(self, runner: BatchRunner, number: int, count: int,
               batch: Sequence[PartitionMove], position: int) -> Outcome | None:
        """Batch ``number`` of ``count``, at ``position`` in the journal's schedule (-1: ours,
        found in ZooKeeper, resumed); an Outcome when the run ends here (timed out)."""
        account, paths, index = self.account, self.paths, number - 1
        resumed = position < 0
        skipped = 0
        if resumed:
            self.emit(BatchResumed(number, count, len(batch)))
        else:
            if number > 1:
                # read again: another run of this plan may have moved them since this began
                left = unmoved(self.client, batch)
                skipped = len(batch) - len(left)
                batch = left
            account.begin(index, skipped)
            if not batch:
                account.finish(0)
                self.journal = self.journal.update(
                    paths.journal, submitted=position + 1, batches_done=position + 1,
                    partitions_done=account.done, in_flight=0, throttle=None)
                self.emit(BatchDone(number, count, account.done, account.total,
                                    account.bytes_done, account.left(time.monotonic(), after=True)))
                return None
            weigh = self._weigh()
            size = None if weigh is None else sum(map(weigh, batch))
            # refused here (a conflict, an ACL, a config it cannot decode) before anything
            # reached ZooKeeper, execute_reassignment takes this run's files back
            runner.submit(number, count, batch, size, lambda t: self._record(
                throttle=t, in_flight=0))
            self._record(submitted=position + 1, in_flight=len(batch))
        if resumed:
            account.begin(index)
        remaining = runner.wait(lambda u: self.emit(account.waiting(
            number, len(batch), u.remaining, u.remaining_weight, u.controller, u.connected,
            time.monotonic())), self._weigh())
        if remaining:
            # the throttles stay: the batch still copies; a rerun waits for it, then removes them
            self.emit(TimedOut(len(remaining)))
            self._record(in_flight=len(remaining),
                         partitions_done=account.done + len(batch) - len(remaining))
            return Outcome("reassign", account.total, not_in_isr(self.client, remaining),
                           timed_out=True)
        runner.clear(number)
        account.finish(len(batch))
        # every batch submitted is complete now (a resumed batch the journal did not yet count
        # as submitted is found done, and skipped, when its turn in the schedule comes)
        self._record(batches_done=self.journal.submitted, partitions_done=account.done, in_flight=0,
                     throttle=None)
        self.emit(BatchDone(number, count, account.done, account.total, account.bytes_done,
                            account.left(time.monotonic(), after=True)))
        return None

    def _weigh(self) -> Callable[[PartitionMove], int] | None:
        if self.sizes is None:
            return None
        sizes, snapshot = self.sizes, self.snapshot
        return lambda m: weigh_move(sizes, snapshot, m)

    def _rollback_replicas(self) -> dict[TopicPartition, Replicas]:
        """The replicas the rollback file holds (kept from before the first run), or none when
        it cannot be read."""
        try:
            rollback = plans.parse_plan(files.read_json(self.paths.rollback), PlanKind.REASSIGN)
        except (InvalidInput, OSError):
            return {}
        assert isinstance(rollback, ReassignmentPlan)
        return {m.tp: m.replicas for m in rollback.moves}

    def _record(self, **changes: object) -> None:
        try:
            self.journal = self.journal.update(self.paths.journal, **changes)
        except KadminError as exc:
            if not self.submitted:
                raise
            # the batch is the controller's now: say so, or the operator thinks nothing happened
            raise OperationFailed(
                f"{exc}; the batch submitted is in /admin/reassign_partitions all the same and "
                "the controller runs it: fix the journal's place and run the same command again "
                "to wait for it (nothing is submitted twice)") from None

    def _elect(self) -> Outcome:
        """Preferred leaders of the partitions whose first replica the plan changes. For those
        already at their target when this run began (moved by an earlier run it resumes), the
        first replica before is the rollback file's, the assignment before the first run; a
        partition it does not know counts as changed (the election skips partitions led by their
        preferred replica)."""
        before = {m.tp: self.snapshot.settled_replicas(m.tp) for m in self.plan.moves}
        original = self._rollback_replicas()
        for m in self.plan.moves:
            if before[m.tp] == m.replicas:
                before[m.tp] = original.get(m.tp)
        changed = tuple(m.tp for m in self.plan.moves
                        if not before[m.tp] or before[m.tp] == m.replicas
                        or before[m.tp][0] != m.replicas[0])  # type: ignore[index]
        total = len(self.plan.moves)
        if not changed:
            return Outcome("reassign", total)
        election = execute_election(self.client, ElectionPlan(tuple(sorted(changed))),
                                    self.settings, self.emit, deadline=self.deadline)
        return Outcome("reassign --elect", election.total if election.timed_out else total,
                       election.failures, timed_out=election.timed_out)
