"""Loading a cluster snapshot into ZooKeeper, as a running cluster would have it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, RolledBackError, RuntimeInconsistency
from kazoo.interfaces import IAsyncResult

from kadmin.model import ClusterSnapshot, InvalidInput, OperationFailed, PartitionState
from kadmin.sandbox.zkio import TX_WINDOW, chunks, pipelined
from kadmin.zk import codec, paths

PERSISTENT_PATHS = (paths.BROKER_IDS, paths.BROKER_TOPICS, paths.DELETE_TOPICS,
                    paths.CONFIG_TOPICS, paths.CONFIG_BROKERS, paths.CONFIG_CHANGES)
"""What every Kafka broker creates at start-up (``ZkData.PersistentZkPaths``, the part kadmin
reads), so a freshly loaded sandbox looks like a cluster that has run."""

_EMPTY_TOPIC_CONFIG = codec.dumps({"version": 1, "config": {}})


def controller_of(snapshot: ClusterSnapshot) -> int:
    """The snapshot's controller if it names a broker of the snapshot, else the lowest id."""
    if not snapshot.brokers:
        raise InvalidInput("the snapshot has no brokers: a sandbox needs one to be controller")
    if snapshot.controller is not None and snapshot.controller in snapshot.brokers:
        return snapshot.controller
    return min(snapshot.brokers)


@dataclass(frozen=True)
class _Create:
    path: str
    data: bytes
    ephemeral: bool = False


def _snapshot_znodes(snapshot: ClusterSnapshot, broker_version: int, topic_version: int,
                     epoch: int) -> Iterator[_Create]:
    """Every znode of the snapshot, parents before children. A partition the snapshot shows in
    flight (``snapshot.reassigning``) keeps its markers in the topic znode (``adding_replicas`` /
    ``removing_replicas``, from topic znode version 2) and, without a state of its own, is led by
    its first original replica with the original replicas in sync: the replicas being added have
    not joined yet."""
    for broker in sorted(snapshot.brokers.values(), key=lambda b: b.id):
        yield _Create(paths.broker(broker.id), codec.encode_broker(broker, broker_version), True)
    yield _Create(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(epoch))
    yield _Create(paths.CONTROLLER, codec.encode_controller(controller_of(snapshot)), True)
    encoded: dict[PartitionState, bytes] = {}  # few distinct states: encode each once
    for topic in sorted(snapshot.topics):
        assignment = snapshot.topics[topic]
        states = snapshot.states.get(topic, {})
        moving = snapshot.reassigning.get(topic, {})
        yield _Create(paths.topic(topic), codec.encode_topic(assignment, topic_version,
                                                             reassigning=moving))
        yield _Create(paths.partitions(topic), b"")
        for partition, replicas in sorted(assignment.items()):
            settled = moving[partition].original if partition in moving else replicas
            state = states.get(partition) or PartitionState(
                leader=settled[0] if settled else -1, isr=settled, controller_epoch=epoch)
            data = encoded.get(state)
            if data is None:
                data = encoded[state] = codec.encode_state(state)
            yield _Create(paths.partition(topic, partition), b"")
            yield _Create(paths.partition_state(topic, partition), data)
        yield _Create(paths.topic_config(topic), _EMPTY_TOPIC_CONFIG)


def load_cluster(client: KazooClient, snapshot: ClusterSnapshot, *, broker_version: int = 5,
                 topic_version: int = 2) -> None:
    """Write ``snapshot`` under the client's (empty) chroot as a running cluster would have it.

    Brokers and /controller are ephemeral, so they are alive exactly as long as this client's
    session. Partitions without a state in the snapshot get leader = preferred replica and
    ISR = all replicas. Creates go in transactions of up to a thousand znodes, several in
    flight, and ZooKeeper applies one session's requests in order, so parents always exist
    before their children.
    """
    epoch = snapshot.controller_epoch or 1
    controller_of(snapshot)  # fail before writing anything
    for path in PERSISTENT_PATHS:
        client.ensure_path(path)

    def commit(batch: list[_Create]) -> Callable[[], IAsyncResult]:
        tx = client.transaction()
        for create in batch:
            tx.create(create.path, create.data, ephemeral=create.ephemeral)
        return tx.commit_async

    batches: list[list[_Create]] = []

    def committed() -> Iterator[Callable[[], IAsyncResult]]:
        znodes = _snapshot_znodes(snapshot, broker_version, topic_version, epoch)
        for batch in chunks(znodes, lambda c: len(c.path) + len(c.data)):
            batches.append(batch)
            yield commit(batch)

    results = pipelined(client, committed(), window=TX_WINDOW)
    for batch, result in zip(batches, results, strict=True):
        if isinstance(result, Exception):
            raise OperationFailed(f"loading the snapshot failed: {type(result).__name__}")
        for create, outcome in zip(batch, result, strict=True):
            if isinstance(outcome, Exception) and not isinstance(
                    outcome, (RolledBackError, RuntimeInconsistency)):
                hint = (" (load into an empty chroot)" if isinstance(outcome, NodeExistsError)
                        else "")
                raise OperationFailed(
                    f"cannot load the snapshot: {create.path}: {type(outcome).__name__}{hint}")
