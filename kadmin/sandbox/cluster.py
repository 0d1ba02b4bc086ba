"""The simulated controller's view of the cluster: what every admin znode handler reads and
writes - the live brokers, topic and partition state znodes (pipelined, each write
conditional on the version it was decided from), and the controller's record of events.

Used from the controller's worker thread only, so nothing here needs a lock.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NoNodeError, RolledBackError, RuntimeInconsistency
from kazoo.interfaces import IAsyncResult
from kazoo.protocol.states import WatchedEvent, ZnodeStat

from kadmin.model import OperationFailed, PartitionState, Replicas, TopicPartition
from kadmin.sandbox.clock import ScaledClock
from kadmin.sandbox.model import Kind, Versioned
from kadmin.sandbox.zkio import TX_WINDOW, chunks, pipelined
from kadmin.zk import codec, paths

log = logging.getLogger("kadmin.sandbox")

Topics = dict[str, tuple[dict[str, Any], ZnodeStat]]
"""Topic znodes as decoded JSON documents, with the stat they were read at."""

Decide = Callable[[TopicPartition, PartitionState], "PartitionState | None"]
"""A partition's new leader and ISR given its current ones (None: leave it)."""


class ClusterView:
    """The session, epoch and live brokers of the active controller, and the reads and writes
    its handlers share. ``record(kind, **detail)`` records one controller event; ``watchers``
    poke the worker when a watched znode changes."""

    def __init__(self, client: KazooClient, *, delete_topic_enable: bool,
                 record: Callable[..., None],
                 watchers: Mapping[Kind, Callable[[WatchedEvent], None]],
                 clock: ScaledClock) -> None:
        self.client = client
        self.clock = clock
        self.delete_topic_enable = delete_topic_enable
        self.record = record
        self.watchers = watchers
        self.epoch = 0
        self.live: dict[int, float] = {}
        """Live broker id -> when this controller first saw it registered (``clock`` time)."""
        self._submitted: set[tuple[str, int]] = set()

    def record_submitted(self, kind: str, czxid: int, **detail: Any) -> None:
        """Record a request once per created znode, never again when it is re-read."""
        if (kind, czxid) not in self._submitted:
            self._submitted.add((kind, czxid))
            self.record(kind, czxid=czxid, **detail)

    def own_request(self, kind: str, czxid: int) -> None:
        """A znode the controller created itself: reading it back records no request."""
        self._submitted.add((kind, czxid))

    # --- brokers ------------------------------------------------------------------------------

    def refresh_brokers(self) -> None:
        try:
            names = self.client.get_children(paths.BROKER_IDS, watch=self.watchers[Kind.BROKERS])
        except NoNodeError:
            names = []
        alive = {int(n) for n in names if n.isascii() and n.isdigit()}
        now = self.clock.now()
        self.live = {b: self.live.get(b, now) for b in alive}

    def alive(self, broker: int) -> bool:
        return broker in self.live

    # --- reading ------------------------------------------------------------------------------

    def read_watched(self, path: str, kind: Kind) -> tuple[bytes, ZnodeStat] | None:
        """The znode, with a watch that fires on its next creation, change or deletion."""
        watch = self.watchers[kind]
        while True:
            try:
                return self.client.get(path, watch=watch)
            except NoNodeError:
                if self.client.exists(path, watch=watch) is None:
                    return None

    def topics(self, names: Iterable[str]) -> Topics:
        """Topic znodes as JSON documents (with their stat); unknown or corrupt ones left out."""
        names = list(dict.fromkeys(names))
        out = {}
        replies = pipelined(self.client, (partial(self.client.get_async, paths.topic(t))
                                          for t in names))
        for name, reply in zip(names, replies, strict=True):
            if isinstance(reply, Exception):
                continue
            data, stat = reply
            try:
                codec.decode_topic(data)
            except codec.DecodeError as exc:
                log.warning("sandbox controller: %s: %s", paths.topic(name), exc)
                continue
            out[name] = (json.loads(data), stat)
        return out

    def states(self, tps: Sequence[TopicPartition]) -> dict[TopicPartition, Versioned]:
        """Leader and ISR of each partition that has a readable state znode."""
        out = {}
        replies = pipelined(self.client, (
            partial(self.client.get_async, paths.partition_state(*tp)) for tp in tps))
        for tp, reply in zip(tps, replies, strict=True):
            if isinstance(reply, Exception):
                continue
            try:
                out[tp] = (codec.decode_state(reply[0]), reply[1].version)
            except codec.DecodeError as exc:
                log.warning("sandbox controller: %s: %s", paths.partition_state(*tp), exc)
        return out

    def queued_deletions(self) -> set[str]:
        if not self.delete_topic_enable:
            return set()
        try:
            return set(self.client.get_children(paths.DELETE_TOPICS))
        except NoNodeError:
            return set()

    @staticmethod
    def replicas(topics: Topics, tp: TopicPartition) -> Replicas | None:
        entry = topics.get(tp.topic)
        if entry is None:
            return None
        replicas = entry[0]["partitions"].get(str(tp.partition))
        return None if replicas is None else tuple(replicas)

    # --- writing leader and ISR ---------------------------------------------------------------

    def update_states(self, tps: Iterable[TopicPartition], decide: Decide,
                      known: Mapping[TopicPartition, Versioned] | None = None,
                      ) -> dict[TopicPartition, tuple[PartitionState, PartitionState | None]]:
        """Read, decide and write leader and ISR (old state -> new, None: leave it), each write
        conditional on the version decided from, in transactions of up to a thousand; a state
        someone changed in between is read and decided again. States that do not exist are
        left out of the result. ``known`` are states already read."""
        versions = dict(known or {})
        outcome: dict[TopicPartition, tuple[PartitionState, PartitionState | None]] = {}
        todo = list(tps)
        while todo:
            versions.update(self.states([tp for tp in todo if tp not in versions]))
            writes: list[tuple[TopicPartition, bytes, int]] = []
            for tp in todo:
                if tp not in versions:
                    outcome.pop(tp, None)
                    continue
                state, version = versions[tp]
                new = decide(tp, state)
                outcome[tp] = (state, new)
                if new is not None and new != state:
                    writes.append((tp, codec.encode_state(new), version))
            todo = self._write_states(writes)
            for tp in todo:
                versions.pop(tp, None)
        return outcome

    def _write_states(self, writes: Sequence[tuple[TopicPartition, bytes, int]]
                      ) -> list[TopicPartition]:
        """Commit the conditional writes; the partitions of a transaction that failed on a
        version (or a vanished znode) come back, to be read again."""
        groups = list(chunks(writes, lambda w: len(w[1]) + 60))

        def commit(chunk: list[tuple[TopicPartition, bytes, int]]) -> IAsyncResult:
            tx = self.client.transaction()
            for tp, data, version in chunk:
                tx.set_data(paths.partition_state(*tp), data, version)
            return tx.commit_async()

        retry: list[TopicPartition] = []
        results = pipelined(self.client, (partial(commit, c) for c in groups), window=TX_WINDOW)
        for chunk, result in zip(groups, results, strict=True):
            if isinstance(result, Exception):
                raise OperationFailed(f"writing partition states: {type(result).__name__}")
            errors = [r for r in result if isinstance(r, Exception)]
            unexpected = [e for e in errors if not isinstance(
                e, (BadVersionError, NoNodeError, RolledBackError, RuntimeInconsistency))]
            if unexpected:
                raise OperationFailed(f"writing partition states: {type(unexpected[0]).__name__}")
            if errors:
                retry.extend(tp for tp, _, _ in chunk)
        return retry
