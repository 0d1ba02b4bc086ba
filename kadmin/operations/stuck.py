"""Stuck reassignments read live (:mod:`kadmin.stuck` decides), and ``reassign --repair-stale``:
a stale /admin/reassign_partitions removed once every entry is checked complete, the controller
moved where the release needs it."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NoNodeError

from kadmin import stuck
from kadmin.kafka_version import KafkaVersion
from kadmin.model import Conflict, InvalidInput
from kadmin.operations.cancel import move_controller, topic_znode_versions
from kadmin.operations.source import Connection, connected
from kadmin.zk import codec, paths, reader


def read_request(client: KazooClient) -> tuple[stuck.Request | None, int]:
    """/admin/reassign_partitions as :mod:`kadmin.stuck` needs it, with its znode version
    (None, -1: absent)."""
    try:
        data, stat = client.get(paths.REASSIGN_PARTITIONS)
    except NoNodeError:
        return None, -1
    moves = codec.decode_reassignment(data)
    age = max(0.0, time.time() - stat.ctime / 1000)
    return stuck.Request(tuple(moves), age, stat.version > 0), stat.version


def diagnose(client: KazooClient, topics: Collection[str] | None,
             stuck_after: float = stuck.DEFAULT_STUCK_AFTER) -> list[stuck.Stuck]:
    """What cannot finish now among ``topics`` (None: every topic). The request is read before
    the topic znodes (a partition finishing in between then reads as finished)."""
    try:
        request, _ = read_request(client)
    except codec.DecodeError:
        return []  # an unreadable znode is reported as such by the caller's own reads
    if topics is not None and request is not None:
        topics = {*topics, *(m.topic for m in request.moves)}
    snapshot = reader.read_cluster(client, topics=topics).snapshot
    return stuck.diagnose(snapshot, request, stuck_after)


def diagnose_live(connection: Connection, topics: Collection[str] | None,
                  stuck_after: float = stuck.DEFAULT_STUCK_AFTER) -> list[stuck.Stuck]:
    """:func:`diagnose` on a connection of its own."""
    with connected(connection) as client:
        return diagnose(client, topics, stuck_after)


@dataclass(frozen=True)
class Repaired:
    partitions: int
    """Entries the stale znode held."""
    controller_moved: bool
    evidence: str


def repair_stale(connection: Connection, kafka_version: KafkaVersion | None, dry_run: bool,
                 say: Callable[[str], None], timeout: float | None = None) -> Repaired:
    """Delete a stale /admin/reassign_partitions after checking every entry complete (a
    Conflict naming what is not, nothing written); before Kafka 2.4 also move the controller,
    which otherwise keeps the entries in memory and writes them back."""
    with connected(connection) as client:
        request, version = read_request(client)
        if request is None:
            raise Conflict(f"{paths.REASSIGN_PARTITIONS} does not exist: nothing to repair")
        snapshot = reader.read_cluster(client, topics={m.topic for m in request.moves}).snapshot
        if not stuck.is_stale(snapshot, request):
            left = [str(m.tp) for m in request.moves
                    if snapshot.replicas(m.tp) != m.replicas or snapshot.reassignment(m.tp)]
            raise Conflict(f"{paths.REASSIGN_PARTITIONS} is not stale: "
                           + (f"{', '.join(left[:10])} not at their targets yet"
                              if left else "some targets are not all in the ISR yet")
                           + "; the controller may still be working (wait, or reassign "
                             "--cancel)")
        versions = topic_znode_versions(client, sorted({m.topic for m in request.moves}))
        newer = sorted(t for t, v in versions.items() if v >= 2)
        if newer:
            before_kip455, evidence = False, f"topic znode {newer[0]} is version {versions[newer[0]]}"
        elif kafka_version is not None:
            before_kip455 = not kafka_version.records_moves_in_topic
            evidence = f"--kafka-version {kafka_version}"
        else:
            raise InvalidInput("cannot tell the cluster's Kafka release from ZooKeeper (its "
                               "topic znodes are version 1): give --kafka-version (e.g. 2.3 or "
                               "2.8); before 2.4 the controller must move too")
        if dry_run:
            return Repaired(len(request.moves), before_kip455, evidence)
        say(f"deleting the stale {paths.REASSIGN_PARTITIONS} ({len(request.moves)} complete "
            "partition(s))")
        try:
            client.delete(paths.REASSIGN_PARTITIONS, version=version)
        except (BadVersionError, NoNodeError):
            raise Conflict(f"{paths.REASSIGN_PARTITIONS} changed while being checked: nothing "
                           "was deleted; run the repair again") from None
        if before_kip455:
            deadline = float("inf") if timeout is None else time.monotonic() + timeout
            move_controller(client, deadline, say)
        return Repaired(len(request.moves), before_kip455, evidence)
