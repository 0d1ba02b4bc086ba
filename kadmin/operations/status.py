"""``kadmin status``: the controller, live brokers, partition health, the admin work in progress
and the replication throttles in force, read live; with a capacity file, each broker against
its capacity (and with partition sizes, the part of it in use)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kadmin import health, sizes
from kadmin.balance.capacity import BrokerUse, broker_use, over_capacity
from kadmin.balance.replicas import replica_counts
from kadmin.balance.weighted import topic_bytes_per_broker
from kadmin.health import ClusterHealth, Shares
from kadmin.model import ClusterSnapshot, TopicPartition
from kadmin.operations import stuck as stuck_reads
from kadmin.operations.capacity import read_capacities, warn_strangers
from kadmin.operations.source import Connection, Warn, connected, no_warnings
from kadmin.stuck import DEFAULT_STUCK_AFTER, Stuck, diagnose
from kadmin.zk import codec, config, reader


@dataclass(frozen=True)
class Status:
    health: ClusterHealth
    in_flight: reader.InFlight
    controller: int | None
    epoch: int | None
    shares: Shares
    unreadable: Sequence[tuple[str, str]]
    """Znodes that exist but cannot be decoded, as (path, reason)."""
    throttles: Sequence[config.EntityThrottle] = ()
    held: Mapping[int, int] | None = None
    """With ``--sizes``: bytes on each registered broker."""
    use: tuple[BrokerUse, ...] = ()
    """With ``--capacity``: every registered broker against its capacity (empty without)."""
    stuck: tuple[Stuck, ...] = ()
    """Reassignments that cannot finish, each with its cause and repair."""

    @property
    def over_capacity(self) -> list[tuple[int, int, int]]:
        """``(broker, bytes, capacity)`` of the brokers holding more bytes than their capacity
        (with sizes), in broker order: :func:`kadmin.balance.capacity.over_capacity`'s rule."""
        return over_capacity({u.broker: u.held for u in self.use if u.held is not None},
                             {u.broker: u.capacity for u in self.use})


def of(live: reader.LiveCluster, throttles: config.Throttles | None = None,
       held: Mapping[int, int] | None = None, use: tuple[BrokerUse, ...] = ()) -> Status:
    """The status of a cluster as read; the config znodes and throttle records that cannot be
    decoded join the cluster's unreadable znodes."""
    snap = live.snapshot
    throttles = throttles or config.Throttles([])
    return Status(health.cluster_health(snap), live.in_flight, snap.controller,
                  snap.controller_epoch, health.broker_shares(snap),
                  (*live.unreadable, *throttles.unreadable), throttles.in_force, held, use)


@dataclass(frozen=True)
class StatusRequest:
    connection: Connection
    sizes: Path | None = None
    """``kafka-log-dirs.sh --describe`` output: adds the bytes on each broker."""
    capacity: Path | None = None
    """A capacity file: adds each broker's capacity, its share of the replicas, and with sizes
    the part of its capacity in use."""
    stuck_after: float = DEFAULT_STUCK_AFTER
    """Seconds a target replica may lag, while others of its request finish, before it counts
    as stuck."""


def status(request: StatusRequest, warn: Warn = no_warnings) -> Status:
    """The cluster read live, with the request's sizes (their gaps going to ``warn`` a line
    each) and capacities (the file read before connecting)."""
    sizes_path, capacity = request.sizes, request.capacity
    capacities = None if capacity is None else read_capacities(capacity)
    with connected(request.connection) as client:
        try:
            stuck_request = stuck_reads.read_request(client)[0]  # before the cluster
        except codec.DecodeError:
            stuck_request = None  # reported as unreadable by the read that follows
        live = reader.read_cluster(client)
        throttled = config.read_throttles(client)
    snapshot = live.snapshot
    found = None if sizes_path is None else sizes.read_sizes(sizes_path, snapshot)
    for line in () if found is None else sizes.warnings(found):
        warn(line)
    held = None if found is None else held_bytes(snapshot, found)
    warn_strangers(capacities, snapshot, warn)
    use = () if capacities is None else broker_use(
        replica_counts([r for t in snapshot.topics.values() for r in t.values()]),
        capacities.weights(sorted(snapshot.brokers)), held)
    return dataclasses.replace(of(live, throttled, held, use), stuck=tuple(
        diagnose(snapshot, stuck_request, request.stuck_after)))


def held_bytes(snapshot: ClusterSnapshot, found: Mapping[TopicPartition, int]
               ) -> dict[int, int]:
    """Bytes on each registered broker (0 for one that holds nothing), over every partition."""
    held = topic_bytes_per_broker(snapshot.topics, found)
    return {b: held.get(b, 0) for b in sorted(snapshot.brokers)}
