"""Every znode path kadmin reads or writes, in one place (docs/znodes.md).

Paths are relative to the connection's chroot: kazoo prefixes the chroot itself.
"""

from __future__ import annotations

from kadmin.model import TopicPartition

BROKER_IDS = "/brokers/ids"
BROKER_TOPICS = "/brokers/topics"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
ADMIN = "/admin"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION = "/admin/preferred_replica_election"
DELETE_TOPICS = "/admin/delete_topics"
CONFIG_TOPICS = "/config/topics"
CONFIG_BROKERS = "/config/brokers"
CONFIG_CHANGES = "/config/changes"
CONFIG_CHANGE_PREFIX = "/config/changes/config_change_"
CLUSTER_ID = "/cluster/id"


def broker(broker_id: int) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic(name: str) -> str:
    return f"{BROKER_TOPICS}/{name}"


def partitions(name: str) -> str:
    return f"{BROKER_TOPICS}/{name}/partitions"


def partition(name: str, partition_id: int) -> str:
    return f"{BROKER_TOPICS}/{name}/partitions/{partition_id}"


def partition_state(name: str, partition_id: int) -> str:
    return f"{BROKER_TOPICS}/{name}/partitions/{partition_id}/state"


def state_partition(path: str) -> TopicPartition | None:
    """The partition whose state znode ``path`` is (None: not a state znode)."""
    parts = path.split("/")
    if (len(parts) != 7 or "/".join(parts[:3]) != BROKER_TOPICS or parts[4] != "partitions"
            or parts[6] != "state" or not parts[5].isdigit()):
        return None
    return TopicPartition(parts[3], int(parts[5]))


def delete_topic(name: str) -> str:
    return f"{DELETE_TOPICS}/{name}"


def topic_config(name: str) -> str:
    return f"{CONFIG_TOPICS}/{name}"


def broker_config(broker_id: int) -> str:
    return f"{CONFIG_BROKERS}/{broker_id}"


def config(entity: str) -> str:
    """``topics/foo`` -> ``/config/topics/foo`` (entity paths as notifications name them)."""
    return f"/config/{entity}"


KADMIN_THROTTLES = "/kadmin/throttles"
"""kadmin's own record of the throttle entries it added, one znode per config entity
(``/kadmin/throttles/topics/foo``). Kafka never reads it; ``throttle clear`` does."""


def throttle_record(entity: str) -> str:
    return f"{KADMIN_THROTTLES}/{entity}"
