"""Read a live cluster from ZooKeeper, fast enough for millions of partitions.

Every read goes through :mod:`kadmin.zk.multiread`: hundreds of znodes per multiRead request,
a few requests in flight while Python decodes the answers of earlier ones, memory flat (servers
before 3.6: pipelined single reads). A read of a whole cluster is one request for the admin
znodes and the listings, then the brokers, then the topic znodes and, pulled by their answers,
the partition states.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from kazoo.client import KazooClient

from kadmin.model import (
    Broker,
    ClusterSnapshot,
    OperationFailed,
    PartitionMove,
    PartitionState,
    Reassignment,
    TopicAssignment,
    TopicPartition,
    topic_name_problem,
)
from kadmin.zk import codec, multiread, paths
from kadmin.zk.multiread import Op, pipelined
from kadmin.zk.topic_configs import read_min_insync

__all__ = ["InFlight", "LiveCluster", "pipelined", "read_assignments", "read_cluster",
           "read_for_operation", "read_in_flight", "read_states", "unreadable_error"]

T = TypeVar("T")
V = TypeVar("V")


@dataclass(frozen=True)
class InFlight:
    """Admin requests the controller has not finished. ``None`` means no such znode (or, in a
    :class:`LiveCluster`, one listed in ``unreadable``)."""

    reassignment: tuple[PartitionMove, ...] | None
    election: tuple[TopicPartition, ...] | None
    deletions: tuple[str, ...]


@dataclass(frozen=True)
class LiveCluster:
    """A cluster as read from ZooKeeper, with the znodes kadmin could not decode.

    ``unreadable`` holds ``(znode path, reason)``: one corrupt znode must not hide the rest of a
    cluster from the operator, but it must not go unnoticed either.
    """

    snapshot: ClusterSnapshot
    in_flight: InFlight
    unreadable: tuple[tuple[str, str], ...]


class _Decoder:
    """Decodes payloads, then either collects the failures (``read_cluster``) or raises the
    first one as the operator's one-line error (the narrower reads, whose callers act on the
    answer and must not act on a partial one)."""

    def __init__(self, collect: bool) -> None:
        self.unreadable: list[tuple[str, str]] | None = [] if collect else None

    def __call__(self, path: str, decode: Callable[[V], T], payload: V) -> T | None:
        try:
            return decode(payload)
        except codec.DecodeError as error:
            self.report(path, str(error))
            return None

    def report(self, path: str, reason: str) -> None:
        if self.unreadable is None:
            raise OperationFailed(f"cannot decode {path}: {reason}")
        self.unreadable.append((path, reason))


_ADMIN_AND_LISTINGS = (
    (Op(paths.REASSIGN_PARTITIONS), codec.decode_reassignment),
    (Op(paths.PREFERRED_REPLICA_ELECTION), codec.decode_election),
    (Op(paths.DELETE_TOPICS, children=True), None),
    (Op(paths.BROKER_IDS, children=True), None),
    (Op(paths.CONTROLLER), codec.decode_controller),
    (Op(paths.CONTROLLER_EPOCH), codec.decode_controller_epoch),
    (Op(paths.BROKER_TOPICS, children=True), None),
)
"""What a read of the cluster starts with, in this order: admin znodes first (see
``read_cluster``), then the listings and single znodes (a few requests: the sizes of these
znodes are not known, so multiread's slow start sends the first ones alone)."""


def _first_read(client: KazooClient, decoder: _Decoder, wanted: Collection[str]
                ) -> dict[str, Any]:
    """The znodes of ``_ADMIN_AND_LISTINGS`` whose paths are ``wanted``, read in that order and
    decoded (listings as they are); missing ones are absent, as are undecodable ones
    (reported)."""
    found: dict[str, Any] = {}
    requests = [(op, decode) for op, decode in _ADMIN_AND_LISTINGS if op.path in wanted]
    for path, decode, value in multiread.read(client, requests):
        decoded = value if decode is None else decoder(path, decode, value)
        if decoded is not None:
            found[path] = decoded
    return found


def _in_flight(found: dict[str, Any]) -> InFlight:
    return InFlight(
        reassignment=found.get(paths.REASSIGN_PARTITIONS),
        election=found.get(paths.PREFERRED_REPLICA_ELECTION),
        deletions=tuple(sorted(found.get(paths.DELETE_TOPICS, ()))),
    )


def _read_brokers(client: KazooClient, children: Iterable[str], decoder: _Decoder,
                  registrations: bool = True) -> dict[int, Broker]:
    """Registered brokers. One whose registration cannot be decoded is still registered - its
    ephemeral znode says it is alive - so it stays, with nothing known but its id: dropping it
    would make it look dead, and a plan would drain it."""
    brokers: dict[int, Broker] = {}
    requests = []
    for child in children:
        broker_id = decoder(f"{paths.BROKER_IDS}/{child}",
                            partial(codec.decimal_id, what="broker id"), child)
        if broker_id is not None:
            requests.append((paths.broker(broker_id), broker_id))
    if not registrations:
        return {broker_id: Broker(broker_id) for broker_id in sorted(i for _, i in requests)}
    for path, broker_id, data in multiread.read(client, requests):
        try:
            brokers[broker_id] = codec.decode_broker(broker_id, data)
        except codec.DecodeError as error:
            decoder.report(path, f"{error} (broker {broker_id} is registered, so it counts as "
                                 "live; its host, port and rack are unknown)")
            brokers[broker_id] = Broker(broker_id)
    return dict(sorted(brokers.items()))


def _topic_names(children: Iterable[str], decoder: _Decoder) -> list[str]:
    """Children of /brokers/topics that Kafka could have created; any other is reported (a
    snapshot, plan or deletion naming it would be refused later, far from its cause)."""
    names = []
    for child in children:
        problem = topic_name_problem(child)
        if problem is None:
            names.append(child)
        else:
            decoder.report(paths.topic(child), problem)
    return sorted(names)


def _assignments(client: KazooClient, topics: Iterable[str],
                 decoder: _Decoder) -> Iterator[tuple[str, codec.TopicZnode]]:
    requests = ((paths.topic(name), name) for name in topics)
    for path, name, data in multiread.read(client, requests):
        znode = decoder(path, codec.decode_topic_znode, data)
        if znode is not None:
            yield name, znode


def _states(client: KazooClient, partitions: Iterable[TopicPartition],
            decoder: _Decoder) -> Iterator[tuple[TopicPartition, PartitionState]]:
    requests = ((paths.partition_state(tp.topic, tp.partition), tp) for tp in partitions)
    for path, tp, data in multiread.read(client, requests):
        state = decoder(path, codec.decode_state, data)
        if state is not None:
            yield tp, state


NO_STATE = "no state znode: the partition is offline as far as ZooKeeper shows (leader unknown)"
"""The reason given for a partition without a state znode: Kafka's controller writes one for every
partition it created, so none means a topic still being created, or a damaged tree."""


def _report_stateless(assignments: dict[str, TopicAssignment],
                      states: dict[str, dict[int, PartitionState]],
                      chosen: Callable[[TopicPartition], bool], deleting: Collection[str],
                      decoder: _Decoder) -> None:
    """Report each chosen partition that has no state (its znode missing: reported here; or
    undecodable: reported already), but those of topics queued for deletion, whose state
    znodes the controller removes first. Never counted nowhere: every reader shows it."""
    undecodable = {path for path, _ in decoder.unreadable or ()}
    for name in sorted(assignments):
        if name in deleting:
            continue
        known = states.get(name, {})
        for partition in sorted(assignments[name]):
            path = paths.partition_state(name, partition)
            if (partition not in known and path not in undecodable
                    and chosen(TopicPartition(name, partition))):
                decoder.report(path, NO_STATE)


_IN_FLIGHT = (paths.REASSIGN_PARTITIONS, paths.PREFERRED_REPLICA_ELECTION, paths.DELETE_TOPICS)


def read_cluster(client: KazooClient, *, topics: Collection[str] | None = None,
                 states: bool | Callable[[TopicPartition], bool] = True,
                 registrations: bool = True) -> LiveCluster:
    """Brokers, controller, the assignment of ``topics`` (all when None; unknown ones are
    absent) with their reassignments in flight, their partition states unless ``states`` is
    False (only those of the partitions it accepts when it is a function), and the in-flight
    admin requests. Without ``registrations`` the brokers are the registered ids only (no read
    of their registrations). Undecodable znodes (and topics whose names Kafka could not have
    created) are reported in ``unreadable`` and left out - but for a broker, which stays with
    its id only."""
    decoder = _Decoder(collect=True)
    # admin znodes first: the controller writes a partition's final replicas before it takes the
    # partition out of /admin/reassign_partitions, so read in this order a partition is always
    # either still listed as moving or shows its final replicas, never neither. ZooKeeper
    # answers a session's requests, and the reads within a multiRead, in the order sent.
    wanted = {op.path for op, _ in _ADMIN_AND_LISTINGS}
    if topics is not None:
        wanted.discard(paths.BROKER_TOPICS)
    found = _first_read(client, decoder, wanted)
    brokers = _read_brokers(client, found.get(paths.BROKER_IDS, ()), decoder, registrations)
    names = (_topic_names(found.get(paths.BROKER_TOPICS, ()), decoder) if topics is None
             else sorted(set(topics)))
    assignments: dict[str, TopicAssignment] = {}
    reassigning: dict[str, dict[int, Reassignment]] = {}

    def read_topics() -> Iterator[tuple[str, TopicAssignment]]:
        for name, znode in _assignments(client, names, decoder):
            assignments[name] = znode.partitions
            if znode.reassigning:
                reassigning[name] = znode.reassigning
            yield name, znode.partitions

    partition_states: dict[str, dict[int, PartitionState]] = {}
    if states:
        # pulled by the state reads while topic reads are still arriving: both pipelines run
        everything: Callable[[TopicPartition], bool] = lambda _: True  # noqa: E731
        chosen = everything if states is True else states
        partitions = (tp for name, assignment in read_topics() for p in sorted(assignment)
                      if chosen(tp := TopicPartition(name, p)))
        for tp, state in _states(client, partitions, decoder):
            partition_states.setdefault(tp.topic, {})[tp.partition] = state
        _report_stateless(assignments, partition_states, chosen,
                          set(found.get(paths.DELETE_TOPICS, ())), decoder)
    else:
        for _ in read_topics():
            pass

    snapshot = ClusterSnapshot(
        brokers=brokers,
        topics=assignments,
        states=partition_states,
        controller=found.get(paths.CONTROLLER),
        controller_epoch=found.get(paths.CONTROLLER_EPOCH),
        reassigning=reassigning,
    )
    return LiveCluster(snapshot, _in_flight(found), tuple(decoder.unreadable or ()))


def unreadable_error(unreadable: Sequence[tuple[str, str]], consequence: str) -> OperationFailed:
    """The operator's error for znodes that could not be decoded: their number and what it
    means on the first line, then each ``path: reason`` (sampled, as every error's details)."""
    return OperationFailed(f"cannot decode {len(unreadable)} znode(s) of the cluster; "
                           f"{consequence}", details=(f"{path}: {reason}"
                                                      for path, reason in unreadable))


def read_for_operation(client: KazooClient, topics: Collection[str] | None, *,
                       states: bool = False) -> LiveCluster:
    """:func:`read_cluster` for a command about to act on ``topics``: a topic or partition state
    znode it cannot decode (or a missing state it reads), a registration named by an id spelled
    otherwise than Kafka spells it and an undecodable /admin/reassign_partitions stop it (exit 1,
    named),
    before anything is written. Brokers with an unreadable registration are kept as live ids and
    the other admin znodes are left to the conflict checks (they name them), so neither blocks
    an operation they do not concern."""
    live = read_cluster(client, topics=topics, states=states)
    broken = [(path, reason) for path, reason in live.unreadable if _stops_operation(path)]
    if broken:
        raise unreadable_error(broken, "nothing was written")
    return with_min_insync(client, live)


def with_min_insync(client: KazooClient, live: LiveCluster) -> LiveCluster:
    """``live`` with its topics' ``min.insync.replicas`` (see :mod:`kadmin.zk.topic_configs`)."""
    snapshot = dataclasses.replace(live.snapshot, min_insync=read_min_insync(
        client, live.snapshot.topics))
    return dataclasses.replace(live, snapshot=snapshot)


def _stops_operation(path: str) -> bool:
    """Whether an unreadable znode at ``path`` leaves an operation without something it must
    know: a topic or partition state (the topic would look deleted, the partition leaderless),
    a broker registered under a decimal name Kafka does not write ("007": broker 7 would look
    unregistered), or
    /admin/reassign_partitions (whether partitions are moving)."""
    if path.startswith(paths.BROKER_TOPICS + "/") or path == paths.REASSIGN_PARTITIONS:
        return True
    if path.startswith(paths.BROKER_IDS + "/"):
        # "007" may be broker 7 spelled otherwise (it must not look unregistered); "broker-x"
        # or "²" cannot be any broker's, and a registration kept by id stops nothing
        name = path[len(paths.BROKER_IDS) + 1:]
        return name.isascii() and name.isdigit() and name != str(int(name))
    return False


def read_in_flight(client: KazooClient) -> InFlight:
    """The admin requests still pending. An undecodable admin znode is an ``OperationFailed``:
    "something is pending but unreadable" must stop the caller, not read as "nothing"."""
    return _in_flight(_first_read(client, _Decoder(collect=False), _IN_FLIGHT))


def read_assignments(client: KazooClient, topics: Collection[str]) -> dict[str, TopicAssignment]:
    """Current replicas of the given topics; topics that do not exist are absent."""
    return {name: znode.partitions
            for name, znode in _assignments(client, sorted(set(topics)), _Decoder(collect=False))}


def read_states(client: KazooClient,
                partitions: Collection[TopicPartition]) -> dict[TopicPartition, PartitionState]:
    """Leader and ISR of the given partitions; partitions without a state znode are absent."""
    return dict(_states(client, sorted(set(partitions)), _Decoder(collect=False)))
