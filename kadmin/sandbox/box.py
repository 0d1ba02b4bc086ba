"""The whole sandbox: a ZooKeeper (embedded or existing), a snapshot loaded into it, and a
simulated controller acting as the snapshot's controller."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

from kazoo.client import KazooClient

from kadmin import files, synthetic
from kadmin.embedded import EmbeddedZooKeeper
from kadmin.kafka_version import DEFAULT_SANDBOX, KafkaVersion
from kadmin.model import ClusterSnapshot, InvalidInput, OperationFailed, TopicPartition
from kadmin.sandbox.clock import ScaledClock
from kadmin.sandbox.controller import SimulatedController
from kadmin.sandbox.loading import controller_of, load_cluster
from kadmin.sandbox.reassignment import DEFAULT_BANDWIDTH
from kadmin.sizes import snapshot_sizes
from kadmin.zk import session


@dataclass(frozen=True)
class SandboxSpec:
    """The shape of a synthetic sandbox cluster (``kadmin sandbox`` without ``--cluster``)."""

    brokers: int = 6
    racks: int = 3
    topics: int = 20
    partitions: int = 12
    replication_factor: int = 3

    def snapshot(self, seed: int = 0) -> ClusterSnapshot:
        return synthetic.synthetic_cluster(
            brokers=self.brokers, topics=self.topics, partitions=self.partitions,
            replication_factor=self.replication_factor, racks=self.racks, seed=seed)


def _heap_option(snapshot: ClusterSnapshot) -> str:
    """A JVM heap for the embedded server that holds the snapshot without thrashing: ZooKeeper
    keeps ~2.3 KB per partition (its partition and state znodes), and with a fixed 512 MB a
    200,000-partition load spends most of its time in full GCs."""
    return f"-Xmx{512 + 4 * snapshot.partition_count // 1024}m"


def _connect(connect_string: str) -> KazooClient:
    # the session must outlive a ZooKeeper restart: brokers and /controller are its ephemerals
    client = session.new_client(connect_string, 30)
    try:
        client.start(timeout=30)
    except client.handler.timeout_exception:
        client.close()
        raise OperationFailed(f"ZooKeeper unreachable at {connect_string}") from None
    return client


class Sandbox:
    """What ``kadmin sandbox`` runs: a ZooKeeper (embedded, or ``zookeeper`` = an existing
    "host:port" connect string), the snapshot loaded under ``chroot``, and a
    :class:`SimulatedController` acting as the snapshot's controller. ``connect_string``
    includes the chroot; give it to kadmin as ``-z``. Partitions have ``sizes`` (default: the
    snapshot's own, else none: moves then take only ``latency``) copied at ``bandwidth``
    bytes/s per broker or the throttles set, on ``clock`` (see :class:`SimulatedController`).
    The controller behaves as ``kafka_version``'s, whose topic znode version is the default
    ``topic_version``.
    """

    def __init__(self, snapshot: ClusterSnapshot, *, port: int = 0, latency: float = 0.05,
                 parallelism: int = 100, zookeeper: str | None = None, chroot: str = "/",
                 record_path: Path | None = None, stuck_brokers: Collection[int] = (),
                 delete_topic_enable: bool = True, data_dir: Path | None = None,
                 broker_version: int = 5, topic_version: int | None = None,
                 sizes: Mapping[TopicPartition, int] | None = None,
                 bandwidth: float = DEFAULT_BANDWIDTH, clock: ScaledClock | None = None,
                 kafka_version: KafkaVersion = DEFAULT_SANDBOX) -> None:
        if not chroot.startswith("/"):
            raise InvalidInput(f"chroot {chroot!r} must start with /")
        if record_path is not None:
            files.check_place(record_path, True)  # before anything starts (appended to later)
        self.snapshot = snapshot
        self.controller_id = controller_of(snapshot)
        self._chroot = chroot.rstrip("/")
        self._server: EmbeddedZooKeeper | None = None
        if zookeeper is None:
            self._server = EmbeddedZooKeeper(port=port, data_dir=data_dir,
                                             jvm_options=[_heap_option(snapshot)])
            zookeeper = self._server.connect_string
        self.hosts = zookeeper
        """The server's "host:port" list, without the chroot."""
        self._load = partial(load_cluster, snapshot=snapshot, broker_version=broker_version,
                             topic_version=kafka_version.topic_znode_version
                             if topic_version is None else topic_version)
        self._controller_options: dict[str, Any] = dict(
            latency=latency, parallelism=parallelism, stuck_brokers=stuck_brokers,
            delete_topic_enable=delete_topic_enable, record_path=record_path,
            sizes=sizes if sizes is not None else snapshot_sizes(snapshot), bandwidth=bandwidth,
            clock=clock, kafka_version=kafka_version)
        self._client: KazooClient | None = None
        self._controller: SimulatedController | None = None

    @property
    def server(self) -> EmbeddedZooKeeper | None:
        """The embedded server (None with an existing ``zookeeper``)."""
        return self._server

    @property
    def connect_string(self) -> str:
        return self.hosts + self._chroot

    @property
    def client(self) -> KazooClient:
        if self._client is None:
            raise RuntimeError("the sandbox is not running")
        return self._client

    @property
    def controller(self) -> SimulatedController:
        if self._controller is None:
            raise RuntimeError("the sandbox is not running")
        return self._controller

    def start(self) -> Sandbox:
        try:
            if self._server is not None:
                self._server.start()
            if self._chroot:
                root = _connect(self.hosts)
                try:
                    root.ensure_path(self._chroot)
                finally:
                    root.stop()
                    root.close()
            self._client = _connect(self.connect_string)
            self._load(self._client)
            self._controller = SimulatedController(
                self._client, controller_id=self.controller_id, **self._controller_options)
            self._controller.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the controller and close the session (its brokers and /controller go with it);
        an embedded server is stopped and its temporary data removed."""
        controller, self._controller = self._controller, None
        client, self._client = self._client, None
        if controller is not None:
            controller.stop()
        if client is not None:
            client.stop()
            client.close()
        if self._server is not None:
            self._server.close()

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
