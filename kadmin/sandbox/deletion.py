"""/admin/delete_topics/<t> as Kafka's controller serves it (docs/controller.md): a marker for an
unknown topic (or with deletion disabled) is just removed; an existing topic is deleted with
its config once no partition of it is being reassigned and every replica's broker is alive."""

from __future__ import annotations

import contextlib
from collections.abc import Collection

from kazoo.exceptions import NoNodeError

from kadmin.sandbox.cluster import ClusterView
from kadmin.sandbox.model import Kind
from kadmin.sandbox.zkio import delete_tree
from kadmin.zk import paths


class Deletions:
    """The deletion markers this controller has seen, and when; a topic is deleted
    ``latency`` after its marker appeared."""

    def __init__(self, cluster: ClusterView, *, latency: float) -> None:
        self._cluster = cluster
        self._latency = latency
        self._seen: dict[str, float] = {}
        """Deletion markers -> when this controller first saw them."""
        self.next_due: float | None = None

    def reset(self) -> None:
        self._seen.clear()

    def on_markers(self, reassigning: Collection[str]) -> None:
        """Each marker: removed at once when deletion is disabled (0.10.2+) or the topic is
        unknown; otherwise the topic is deleted ``latency`` after the marker appeared, once it
        is eligible - no partition of it being reassigned (``reassigning``) and every
        replica's broker alive."""
        cluster = self._cluster
        try:
            markers = cluster.client.get_children(paths.DELETE_TOPICS,
                                                  watch=cluster.watchers[Kind.DELETION])
        except NoNodeError:
            markers = []
        now = cluster.clock.now()
        self._seen = {t: self._seen.get(t, now) for t in markers}
        waiting = [seen + self._latency for seen in self._seen.values()
                   if seen + self._latency > now]
        self.next_due = min(waiting, default=None)
        if not markers:
            return
        topics = cluster.topics(markers)
        for topic in markers:
            if not cluster.delete_topic_enable or topic not in topics:
                self._delete_marker(topic)
                cluster.record("deletion_marker_removed", topic=topic, reason=(
                    "delete.topic.enable=false" if not cluster.delete_topic_enable
                    else "unknown topic"))
                continue
            replicas = {r for rs in topics[topic][0]["partitions"].values() for r in rs}
            if (topic in reassigning or not all(map(cluster.alive, replicas))
                    or self._seen[topic] + self._latency > now):
                continue
            delete_tree(cluster.client, paths.topic(topic))
            with contextlib.suppress(NoNodeError):
                cluster.client.delete(paths.topic_config(topic))
            self._delete_marker(topic)
            cluster.record("topic_deleted", topic=topic)

    def _delete_marker(self, topic: str) -> None:
        self._seen.pop(topic, None)
        with contextlib.suppress(NoNodeError):
            self._cluster.client.delete(paths.delete_topic(topic))
