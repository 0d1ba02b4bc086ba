"""``reassign --cancel``: every partition still moving back to its original replicas, in their
original order, through ZooKeeper alone (what to do is :mod:`kadmin.reverting`'s; this reads the
cluster, asks, writes, waits and checks)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from kadmin import throttles
from kadmin.executor import PlanFiles
from kadmin.executor import journal as journals
from kadmin.kafka_version import KafkaVersion
from kadmin.model import (
    InvalidInput,
    OperationFailed,
    PlanKind,
    ReassignmentPlan,
    Replicas,
    TopicPartition,
)
from kadmin.operations.planfiles import load_plan
from kadmin.operations.source import Connection, connected
from kadmin.reverting import (
    CancelPlan,
    Partition,
    Step,
    is_moving,
    plan_cancel,
    release_evidence,
)
from kadmin.zk import admin, codec, config, paths, reader

ZNODE_MOVES = 1000
"""Partitions per submitted znode (each well under ZooKeeper's 1 MB)."""


@dataclass(frozen=True)
class CancelRequest:
    connection: Connection
    plan: ReassignmentPlan | None = None
    """Only this plan's partitions (None: every reassignment in flight)."""
    anchor: Path | None = None
    """The plan file its rollback and journal sit next to."""
    rollback: Path | None = None
    """A file of the original replicas (Kafka's reassignment format), e.g. a rollback file."""
    kafka_version: KafkaVersion | None = None
    all_or_nothing: bool = False
    timeout: float | None = None
    dry_run: bool = False


@dataclass(frozen=True)
class Cancelled:
    plan: CancelPlan
    evidence: str
    """How the release was known."""
    ran: bool
    """False: a dry run, or nothing to do."""
    failures: tuple[str, ...] = ()
    """Reverted partitions not back at their originals (timed out or moved otherwise)."""
    timed_out: bool = False
    throttles_cleared: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failures and not self.timed_out and not self.plan.kept


def _records(request: CancelRequest) -> dict[TopicPartition, Replicas]:
    """The original replicas kadmin's files name: ``--rollback``, else the plan's rollback."""
    path = request.rollback
    if path is None and request.anchor is not None:
        beside = PlanFiles(request.anchor).rollback
        path = beside if beside.exists() else None
    if path is None:
        return {}
    found = load_plan(path, PlanKind.REASSIGN)
    assert isinstance(found, ReassignmentPlan)
    return {m.tp: m.replicas for m in found.moves}


def topic_znode_versions(client: KazooClient, topics: list[str]) -> dict[str, int]:
    """The ``version`` of each topic znode (1 when absent)."""
    return {t: int(d.get("version", 1)) for t, d in _topic_znodes(client, topics).items()}


def _topic_znodes(client: KazooClient, topics: list[str]) -> dict[str, dict]:
    pending = [(t, client.get_async(paths.topic(t))) for t in topics]
    out = {}
    for topic, reply in pending:
        with contextlib.suppress(NoNodeError):
            out[topic] = json.loads(reply.get()[0])
    return out


def read_partitions(client: KazooClient, request: CancelRequest
                    ) -> tuple[list[Partition], dict[str, int], bool]:
    """The partitions the cancel looks at, the topic znode versions of their topics, and
    whether /admin/reassign_partitions exists."""
    recorded = _records(request)
    requested = {m.tp: m.replicas for m in reader.read_in_flight(client).reassignment or ()}
    admin_znode = client.exists(paths.REASSIGN_PARTITIONS) is not None
    scope = None if request.plan is None else {m.tp for m in request.plan.moves}
    topics = None if scope is None else {tp.topic for tp in scope}
    snapshot = reader.read_for_operation(client, topics).snapshot
    candidates = {*requested, *recorded, *snapshot.reassigning_partitions()}
    if scope is not None:
        candidates &= scope
    candidates = {tp for tp in candidates if snapshot.replicas(tp) is not None}
    docs = _topic_znodes(client, sorted({tp.topic for tp in candidates}))
    states = reader.read_states(client, candidates)
    partitions = []
    for tp in sorted(candidates):
        doc = docs.get(tp.topic, {})
        current = snapshot.replicas(tp) or ()
        tracked = "adding_replicas" in doc
        key = str(tp.partition)
        partitions.append(Partition(
            tp, current,
            tuple(doc.get("adding_replicas", {}).get(key, ())) if tracked else None,
            tuple(doc.get("removing_replicas", {}).get(key, ())) if tracked else None,
            requested.get(tp), recorded.get(tp), states.get(tp)))
    versions = {t: int(d.get("version", 1)) for t, d in docs.items()}
    return partitions, versions, admin_znode


def _release(request: CancelRequest, versions: dict[str, int], partitions: list[Partition],
             admin_znode: bool) -> tuple[KafkaVersion | None, str]:
    """The release by ZooKeeper's evidence, else --kafka-version, else (when something is in
    flight) an InvalidInput saying which option to give."""
    found, why = release_evidence(versions, partitions)
    given = request.kafka_version
    if found is None and given is None and not admin_znode and not any(
            map(is_moving, partitions)):
        return None, "nothing in flight"
    if found is not None and given is not None and (
            found.records_moves_in_topic != given.records_moves_in_topic):
        raise InvalidInput(f"--kafka-version {given} contradicts ZooKeeper: {why} "
                           f"(Kafka {'2.4 or later' if found.records_moves_in_topic else 'before 2.4'})")
    if found is not None:
        return (given or found), why
    if given is not None:
        return given, f"--kafka-version {given} ({why})"
    raise InvalidInput(f"cannot tell the cluster's Kafka release from ZooKeeper ({why}): give "
                       "--kafka-version (e.g. 2.3 or 2.8), the release the controller runs")


def cancel(request: CancelRequest, confirm: Callable[[CancelPlan], bool],
           say: Callable[[str], None]) -> Cancelled | None:
    """Read, decide, then (unless a dry run, or ``confirm`` says no: None) carry the cancel out
    step by step, ``say`` announcing each before it happens."""
    with connected(request.connection) as client:
        partitions, versions, admin_znode = read_partitions(client, request)
        version, evidence = _release(request, versions, partitions, admin_znode)
        plan = plan_cancel(partitions, set(reader.read_cluster(
            client, topics=(), states=False).snapshot.brokers), version, admin_znode)
        before_kip455 = version is not None and not version.records_moves_in_topic
        if before_kip455 and plan.kept and not plan.reverts and all(
                p.recorded is None for p in partitions):
            raise InvalidInput(
                "before Kafka 2.4 the original replicas are not in ZooKeeper (the topic znode "
                "holds old and new together): give --plan P (its rollback file beside it) or "
                "--rollback FILE")
        if request.all_or_nothing and plan.kept:
            raise OperationFailed(
                f"{len(plan.kept)} partition(s) cannot be reverted (--all-or-nothing): nothing "
                "was done", details=tuple(map(str, plan.kept)))
        if request.dry_run:
            return Cancelled(plan, evidence, ran=False)
        if not confirm(plan):
            return None
        return _carry_out(client, request, plan, evidence, say)


def _carry_out(client: KazooClient, request: CancelRequest, plan: CancelPlan, evidence: str,
               say: Callable[[str], None]) -> Cancelled:
    deadline = float("inf") if request.timeout is None else time.monotonic() + request.timeout
    left: tuple[object, ...] = ()
    if Step.DELETE_ADMIN_ZNODE in plan.steps:
        say(f"deleting {paths.REASSIGN_PARTITIONS}")
        with contextlib.suppress(NoNodeError):
            client.delete(paths.REASSIGN_PARTITIONS)
    if Step.MOVE_CONTROLLER in plan.steps:
        move_controller(client, deadline, say)
    moves = plan.moves
    for start in range(0, len(moves), ZNODE_MOVES):
        chunk = moves[start:start + ZNODE_MOVES]
        say(f"submitting the original replicas of {len(chunk)} partition(s)")
        admin.submit_reassignment(client, chunk)
        left = admin.wait_reassignment(client, deadline=deadline)
        if left:
            break
    say("removing kadmin's throttles")
    entities = config.recorded_entities(client)
    cleared = config.update(client, dict.fromkeys(entities, throttles.remove_kadmins),
                            skip_unreadable=True) if entities else []
    if request.anchor is not None:
        journals.record_cancel(PlanFiles(request.anchor).journal)
    now = reader.read_assignments(client, {r.tp.topic for r in plan.reverts})
    failures = tuple(
        f"{r.tp}: replicas {list(got)}, not back at {list(r.original)}"
        for r in plan.reverts
        if (got := now.get(r.tp.topic, {}).get(r.tp.partition, ())) != r.original)
    return Cancelled(plan, evidence, ran=True, failures=failures, timed_out=bool(left),
                     throttles_cleared=tuple(cleared))


def move_controller(client: KazooClient, deadline: float, say: Callable[[str], None]) -> None:
    """Delete /controller and wait for the brokers to elect the next (a new epoch)."""
    say(f"moving the controller: deleting {paths.CONTROLLER} (a new controller is elected and "
        "reloads the cluster; on a large cluster that takes a while)")
    epoch = codec.decode_controller_epoch(client.get(paths.CONTROLLER_EPOCH)[0])
    with contextlib.suppress(NoNodeError):
        client.delete(paths.CONTROLLER)

    def probe(calls: admin.ZkCalls) -> int | None:
        if not calls.exist([paths.CONTROLLER])[0]:
            return None
        data = calls.data(paths.CONTROLLER_EPOCH)
        return None if data is None else codec.decode_controller_epoch(data)

    elected = admin.wait_until(client, probe, lambda e: e is not None and e > epoch,
                               lambda e: 0 if e is not None and e > epoch else 1,
                               what=paths.CONTROLLER, deadline=deadline)
    if elected is None or elected <= epoch:
        raise OperationFailed(f"no new controller registered in {paths.CONTROLLER} before "
                              "--timeout; /admin/reassign_partitions was deleted, nothing "
                              "submitted: run the cancel again once a controller is back")
