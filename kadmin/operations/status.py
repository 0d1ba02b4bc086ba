"""``kadmin status``: the controller, live brokers, partition health, the admin work in progress
and the replication throttles in force, read live."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kadmin import health
from kadmin.health import ClusterHealth, Shares
from kadmin.operations.source import Connection, connected
from kadmin.zk import config, reader


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


def of(live: reader.LiveCluster, throttles: config.Throttles | None = None) -> Status:
    """The status of a cluster as read; the config znodes and throttle records that cannot be
    decoded join the cluster's unreadable znodes."""
    snap = live.snapshot
    throttles = throttles or config.Throttles([])
    return Status(health.cluster_health(snap), live.in_flight, snap.controller,
                  snap.controller_epoch, health.broker_shares(snap),
                  (*live.unreadable, *throttles.unreadable), throttles.in_force)


def status(connection: Connection) -> Status:
    with connected(connection) as client:
        live = reader.read_cluster(client)
        throttled = config.read_throttles(client)
    return of(live, throttled)
