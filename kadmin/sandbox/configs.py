"""Topic and broker configs as the simulated brokers see them: every config znode read when
the controller becomes active, then one re-read per ``/config/changes`` notification - exactly
where and when a Kafka broker reads a throttle (its DynamicConfigManager). A throttle written
without a notification is not seen, as on a real cluster."""

from __future__ import annotations

import contextlib
from functools import partial

from kazoo.exceptions import NoNodeError

from kadmin import throttles
from kadmin.sandbox.cluster import ClusterView, log
from kadmin.sandbox.model import Kind
from kadmin.sandbox.zkio import pipelined
from kadmin.zk import codec, paths


class Configs:
    """The config maps the brokers act on, per entity (``topics/foo``, ``brokers/1``)."""

    def __init__(self, cluster: ClusterView) -> None:
        self._cluster = cluster
        self._configs: dict[str, dict[str, str]] = {}
        self._seen: set[str] = set()
        """Notifications already processed."""

    def load_all(self) -> None:
        """Every topic and broker config, as a broker reads them at start-up; notifications
        present now are taken as seen."""
        client = self._cluster.client
        entities = []
        for kind, parent in (("topics", paths.CONFIG_TOPICS), ("brokers", paths.CONFIG_BROKERS)):
            with contextlib.suppress(NoNodeError):
                entities += [f"{kind}/{name}" for name in client.get_children(parent)]
        self._seen = set(self._notifications(watch=True))
        self._configs = {}
        self._read(entities)

    def on_changes(self) -> bool:
        """Re-read the entities new notifications name; True when a throttle may have changed."""
        client = self._cluster.client
        new = [n for n in self._notifications(watch=True) if n not in self._seen]
        if not new:
            return False
        replies = pipelined(client, (partial(client.get_async, f"{paths.CONFIG_CHANGES}/{n}")
                                     for n in new))
        entities = []
        for name, reply in zip(new, replies, strict=True):
            self._seen.add(name)
            if isinstance(reply, Exception):
                continue
            try:
                entities.append(codec.decode_config_change(reply[0]))
            except codec.DecodeError as exc:
                log.warning("sandbox brokers: %s/%s: %s", paths.CONFIG_CHANGES, name, exc)
        self._read(entities)
        return bool(entities)

    def rate(self, broker: int, key: str) -> float | None:
        """A broker's throttle rate (``leader``/``follower`` key) in bytes/s, or None."""
        value = self._configs.get(throttles.broker_entity(broker), {}).get(key)
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None

    def throttled(self, topic: str, partition: int, broker: int, key: str) -> bool:
        """Whether ``partition:broker`` is listed (or ``*``) under ``key`` of the topic."""
        listed = throttles.entries(self._configs.get(throttles.topic_entity(topic), {}).get(key))
        return throttles.ALL_REPLICAS in listed or f"{partition}:{broker}" in listed

    def _notifications(self, *, watch: bool) -> list[str]:
        try:
            return self._cluster.client.get_children(
                paths.CONFIG_CHANGES, watch=self._cluster.watchers[Kind.CONFIG] if watch else None)
        except NoNodeError:
            return []

    def _read(self, entities: list[str]) -> None:
        client = self._cluster.client
        replies = pipelined(client, (partial(client.get_async, paths.config(e)) for e in entities))
        for entity, reply in zip(entities, replies, strict=True):
            if isinstance(reply, NoNodeError):
                self._configs.pop(entity, None)
                continue
            if isinstance(reply, Exception):
                continue
            try:
                self._configs[entity] = codec.decode_config(reply[0])[1]
            except codec.DecodeError as exc:
                log.warning("sandbox brokers: %s: %s", paths.config(entity), exc)
