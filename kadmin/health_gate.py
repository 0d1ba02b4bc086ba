"""The health gate: before each batch, wait while partitions outside the plan are
under-replicated or offline (Cruise Control postpones moves then; a move started on a cluster
already short of replicas makes the shortage worse).

Knowing every partition's health takes the state znode of every partition. Reading that before
each of a plan's thousand batches would put on ZooKeeper the load kadmin promises never to put
on it. So the gate reads the cluster before the first batch and again at most once per
``interval``; before the batches in between it reads only the live brokers, and a broker gone or
back since the last full read forces a full read at once: a broker lost is what makes partitions
under-replicated or offline in bulk. An unhealthy partition found by a full read is then watched
alone (a ZooKeeper watch on its state and on the live brokers) until it is healthy again.

Cost per batch, in ZooKeeper requests (multiRead, :mod:`kadmin.zk.multiread`; servers before
3.6 take one request per znode instead):

- between full reads: 1 (the getChildren of /brokers/ids);
- a full read: 3-4 small requests (/brokers/ids, /brokers/topics, the admin znodes), plus the
  topic znodes (about T/250 requests for T topics: fewer when they are large), plus the state
  znodes of the partitions *outside the plan* only (P/250 requests for P such partitions): the
  plan's own partitions are expected to lag and are never read, nor are broker registrations
  (the ids are enough). A million partitions in 100,000 topics: about 4,400 requests, a few
  seconds (bench/RESULTS.md);
- while waiting for unhealthy partitions: two reads per watched partition per change.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

from kazoo.client import KazooClient

from kadmin import health
from kadmin.events import Event, HealthWait
from kadmin.model import OperationFailed, TopicPartition, sample_of
from kadmin.zk import admin, codec, paths, reader, session

FULL_READ_INTERVAL = 60.0
"""Seconds between two full reads of the partition states, by default."""


@dataclass
class HealthGate:
    """One run's gate; remembers when it last read every partition and which brokers were live."""

    client: KazooClient
    outside: Callable[[TopicPartition], bool]
    """Whether a partition is outside the plan (the plan's own partitions are expected to lag)."""
    interval: float = FULL_READ_INTERVAL
    clock: Callable[[], float] = time.monotonic
    _read_at: float | None = field(default=None, init=False)
    _live: frozenset[str] | None = field(default=None, init=False)

    def wait(self, number: int, deadline: float, emit: Callable[[Event], None]) -> None:
        """Return once the cluster outside the plan is healthy; OperationFailed at the deadline."""
        live = self._live_brokers()
        if (self._read_at is not None and live == self._live
                and self.clock() - self._read_at < self.interval):
            return
        while not self._healthy(live, number, deadline, emit):
            live = self._live_brokers()

    def _live_brokers(self) -> frozenset[str]:
        client = self.client
        return frozenset(session.bounded(client, lambda: client.get_children_async(
            paths.BROKER_IDS)))

    def _healthy(self, live: frozenset[str], number: int, deadline: float,
                 emit: Callable[[Event], None]) -> bool:
        """A full read (``live``: the brokers registered just before it); True when healthy,
        else wait until the unhealthy partitions it found are healthy (False: read everything
        again, others may have fallen behind meanwhile)."""
        read = reader.read_cluster(self.client, states=self.outside, registrations=False)
        snapshot = read.snapshot
        found = health.cluster_health(snapshot)
        # a state znode that cannot be decoded, or none at all, hides whether the partition has
        # a leader: it holds the gate like an offline one (never counted healthy unseen), named
        # as such
        unknown = [tp for path, _ in read.unreadable
                   if (tp := paths.state_partition(path)) is not None and self.outside(tp)]
        unseen = set(unknown)
        offline = [tp for tp in found.offline if self.outside(tp) and tp not in unseen]
        under = [tp for tp in found.under_replicated if self.outside(tp) and tp not in offline]
        if not offline and not under and not unknown:
            self._read_at, self._live = self.clock(), live
            return True
        watched = offline + under + unknown
        emit(HealthWait(number, len(under), len(offline),
                        tuple(map(str, sample_of(watched).items)), len(unknown)))
        # the replication factor: while a partition moves, its original replicas (those being
        # added do not count until they join, as in health.cluster_health)
        replica_count = {tp: len(snapshot.settled_replicas(tp) or ()) for tp in watched}
        left = admin.wait_until(self.client, partial(_unhealthy, replica_count),
                                lambda n: n == 0, lambda n: n, what="partition states",
                                deadline=deadline)
        if left:
            raise OperationFailed(
                f"reassign: timed out before batch {number} while {left} partition(s) outside "
                "the plan stayed under-replicated, offline or unreadable; batch not submitted "
                "(rerun to resume, or --no-health-gate)", details=map(str, watched))
        return False


def _unhealthy(replica_count: Mapping[TopicPartition, int], calls: admin.ZkCalls) -> int:
    """How many of the watched partitions (-> replica count) are still offline or
    under-replicated; each read arms a watch, so a change wakes the wait."""
    alive = {broker for name in calls.children(paths.BROKER_IDS)
             if (broker := _broker_id(name)) is not None}
    count = 0
    for tp, replicas in replica_count.items():
        data = calls.data(paths.partition_state(*tp))
        if data is None:
            # no state: offline while its topic exists; deleted meanwhile, no one's concern
            count += calls.exist([paths.topic(tp.topic)])[0]
            continue
        try:
            state = codec.decode_state(data)
        except codec.DecodeError:
            count += 1
            continue
        count += state.leader not in alive or len(set(state.isr)) < replicas
    return count


def _broker_id(name: str) -> int | None:
    """The broker a /brokers/ids child registers; None for a name that is not an id Kafka
    writes ("007" is not broker 7: the full read reports it)."""
    try:
        return codec.decimal_id(name, "broker id")
    except codec.DecodeError:
        return None
