"""Which cluster a connection reaches: what a journal records so that a run of a plan on one
cluster is never taken for a run on another.

``/cluster/id`` where Kafka wrote one (brokers since Kafka 0.10.1 do, at their first start): its
``id``. Otherwise what ZooKeeper itself offers: the creation of ``/brokers`` (its czxid and
ctime), which a cluster created anew, or loaded again into an emptied chroot, never repeats
(the creation of an undecodable ``/cluster/id`` first; without ``/brokers`` the creation of the
connection's root, the chroot's znode).
"""

from __future__ import annotations

import json
from functools import partial

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from kadmin.zk import paths, session


def cluster_identity(client: KazooClient) -> str:
    """``kafka:<id>`` from /cluster/id, else ``zookeeper:<path>@<czxid>:<ctime>``; each read
    bounded as every request is (a lost connection retried, the run's limit kept)."""
    try:
        data, _ = session.bounded(client, lambda: client.get_async(paths.CLUSTER_ID))
    except NoNodeError:
        data = None
    if data is not None:
        try:
            found = json.loads(data)
        except (UnicodeDecodeError, ValueError):
            found = None
        if isinstance(found, dict) and isinstance(found.get("id"), str) and found["id"]:
            return f"kafka:{found['id']}"
    # an undecodable /cluster/id still tells clusters apart by its own creation
    for path in (paths.CLUSTER_ID, "/brokers", "/"):
        stat = session.bounded(client, partial(client.exists_async, path))
        if stat is not None:
            return f"zookeeper:{path}@{stat.czxid}:{stat.ctime}"
    return "zookeeper:/@0:0"
