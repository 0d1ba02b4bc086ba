"""``kadmin sandbox``: a rehearsal cluster (an embedded ZooKeeper loaded with a cluster, and
kadmin's simulated controller) started from a snapshot or a synthetic cluster, with partition
sizes; the caller keeps it running as long as it likes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kadmin import synthetic
from kadmin.kafka_version import DEFAULT_SANDBOX, KafkaVersion
from kadmin.model import ClusterSnapshot, InvalidInput, PartitionMove, TopicPartition
from kadmin.operations.source import Warn, partition_sizes
from kadmin.sandbox import Sandbox, ScaledClock
from kadmin.snapshots import read_snapshot
from kadmin.units import parse_rate


@dataclass(frozen=True)
class SyntheticCluster:
    """The counts of a generated cluster (``--broker-count``, ``--rack-count``, ...), the same
    for ``sandbox`` and ``demo``; broker ``b`` is in rack ``r{b % racks}``."""

    brokers: int = 6
    racks: int = 3
    topics: int = 20
    partitions: int = 12
    replication_factor: int = 3

    def snapshot(self, *, empty: int = 0) -> ClusterSnapshot:
        """The cluster; its last ``empty`` brokers hold no replica (they just joined). Refused
        in the words of the options, with the counts as typed."""
        holding = self.brokers - empty
        problems = []
        if holding < 1:
            problems.append(f"--broker-count must be at least {empty + 1} ({empty} broker(s) "
                            f"join a cluster of at least one), got {self.brokers}")
        elif self.replication_factor > holding:
            joined = "" if not empty else f" less the {empty} that join{'s' if empty == 1 else ''}"
            problems.append(f"--replication-factor must be at most --broker-count{joined} "
                            f"({holding}), got {self.replication_factor}")
        if self.racks > self.brokers:
            problems.append(f"--rack-count must be at most --broker-count ({self.brokers}), "
                            f"got {self.racks}")
        if problems:
            raise InvalidInput("; ".join(problems))
        # fewer racks only while none of the joining brokers is placed: broker b < holding is in
        # rack b % racks either way, so the brokers holding replicas keep their racks when the
        # joining ones are added
        grown = synthetic.synthetic_cluster(
            brokers=holding, topics=self.topics, partitions=self.partitions,
            replication_factor=self.replication_factor, racks=min(self.racks, holding))
        return dataclasses.replace(
            grown, brokers=synthetic.synthetic_brokers(self.brokers, self.racks))


@dataclass(frozen=True)
class SandboxRequest:
    cluster: Path | None = None
    """A snapshot to load; None: a synthetic cluster of ``synthetic``'s counts."""
    synthetic: SyntheticCluster = dataclasses.field(default_factory=SyntheticCluster)
    port: int = 2181
    latency: float = 0.05
    """Simulated seconds for one partition to catch up."""
    parallelism: int = 100
    record: Path | None = None
    """Append every controller action to this JSON-lines file."""
    sizes: Path | None = None
    bandwidth: str = "100MB"
    """Bytes/s each broker sends and receives when not throttled, as typed."""
    time_scale: float = 1.0
    """Simulated seconds per real second."""
    kafka_version: KafkaVersion = DEFAULT_SANDBOX
    """The release whose controller it plays."""
    stuck_brokers: tuple[int, ...] = ()
    """Brokers whose new replicas never catch up."""
    stale_reassignment: bool = False
    """Start with a stale /admin/reassign_partitions (every partition of the first topic)."""


@dataclass(frozen=True)
class Prepared:
    """A sandbox's cluster, sizes and all, and its brokers' bandwidth (bytes/s), before it
    starts."""

    snapshot: ClusterSnapshot
    bandwidth: int

    @property
    def total_bytes(self) -> int:
        return sum(sum(p.values()) for p in self.snapshot.sizes.values())


def prepare(request: SandboxRequest, warn: Warn) -> Prepared:
    """Everything the sandbox of ``request`` needs read and checked before it starts."""
    bandwidth = parse_rate(request.bandwidth, "--broker-bandwidth")
    return Prepared(sized_cluster(request, warn), bandwidth)


@contextmanager
def running(request: SandboxRequest, prepared: Prepared) -> Iterator[Sandbox]:
    """The sandbox of ``request``, up for the block and stopped after it."""
    with Sandbox(prepared.snapshot, port=request.port, latency=request.latency,
                 parallelism=request.parallelism, record_path=request.record,
                 bandwidth=prepared.bandwidth, clock=ScaledClock(request.time_scale),
                 kafka_version=request.kafka_version,
                 stuck_brokers=request.stuck_brokers) as box:
        if request.stale_reassignment:
            box.controller.leave_stale(stale_moves(prepared.snapshot))
        yield box


def stale_moves(snapshot: ClusterSnapshot) -> list[PartitionMove]:
    """Every partition of the first topic at the replicas it has: a reassignment that is
    complete, in an admin znode the controller no longer acts on."""
    if not snapshot.topics:
        raise InvalidInput("--stale-reassignment: the cluster has no topic")
    topic = min(snapshot.topics)
    return [PartitionMove(topic, p, r) for p, r in sorted(snapshot.topics[topic].items())]


def sized_cluster(request: SandboxRequest, warn: Warn) -> ClusterSnapshot:
    """The snapshot with partition sizes: --sizes, else the snapshot's own, else (for a
    generated cluster) a synthetic long-tailed distribution."""
    if request.cluster is not None:
        snapshot = read_snapshot(request.cluster)
    else:
        snapshot = request.synthetic.snapshot()
        if request.sizes is None:
            return dataclasses.replace(snapshot, sizes=synthetic.synthetic_sizes(snapshot))
    found = partition_sizes(request.sizes, snapshot, warn)
    if found is None:
        return snapshot
    complete = {t: {p: found[TopicPartition(t, p)] for p in partitions}
                for t, partitions in snapshot.topics.items()}  # the median where unknown
    return dataclasses.replace(snapshot, sizes=complete)
