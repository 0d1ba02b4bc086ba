"""/admin/reassign_partitions as Kafka's controller serves it, in the
behaviour of the release it models (:mod:`kadmin.kafka_version`).

A request's partitions wait in ``pending`` and move ``parallelism`` at a time. A move is done
when every target replica is in the ISR; the controller then writes the final leader and ISR,
the topic znode and the admin znode, in that order, once per tick.

Where the releases differ (KafkaController 2.3 and 2.4+):

- in flight, the topic znode holds the full replica set; from 2.4 also ``adding_replicas`` and
  ``removing_replicas``, and a new controller resumes every move recorded there
  (:meth:`Reassignments.resume_from_topics`), while before 2.4 it knows only the admin znode;
- once partitions are done, 2.4+ re-reads the admin znode and removes them (never
  re-creating it), while 2.3 writes what is left *in its memory* back, creating the znode if
  someone deleted it (``removePartitionsFromReassignedPartitions``);
- a new request for a partition already moving replaces its target: 2.4+ keeps the
  originals (the full set becomes target + originals), 2.3 takes the full set as the old
  replicas (the union grows).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Collection, Hashable, Mapping, Sequence
from functools import partial
from typing import Any

from kazoo.exceptions import BadVersionError, NoNodeError

from kadmin import throttles
from kadmin.kafka_version import DEFAULT_SANDBOX, KafkaVersion
from kadmin.model import PartitionMove, PartitionState, Replicas, TopicPartition
from kadmin.sandbox.cluster import ClusterView
from kadmin.sandbox.configs import Configs
from kadmin.sandbox.copying import Copy, Side, Transfers
from kadmin.sandbox.model import Move
from kadmin.sandbox.zkio import expect, pipelined
from kadmin.zk import codec, paths

TICK = 0.05
"""The controller completes due partitions at most once per tick (in real seconds, whatever the
clock), with one rewrite of the reassignment znode, so a 15,000-partition batch costs a few
hundred writes, not 15,000."""

DEFAULT_BANDWIDTH = 100e6
"""Bytes/s a simulated broker sends and receives when nothing throttles it (100 MB/s)."""

TopicChanges = Mapping[str, tuple[Mapping[int, tuple[Replicas, Replicas]], Mapping[int, Replicas]]]
"""Per topic: partitions started (target, origin) and partitions done (target)."""


def origin(doc: Mapping[str, Any], partition: int) -> Replicas:
    """The replicas before the reassignment: RS minus AR, as Kafka 2.4+ recovers them after a
    failover (older znodes have no AR, and then the full list is all there is)."""
    current = tuple(doc["partitions"].get(str(partition), ()))
    adding = set(doc.get("adding_replicas", {}).get(str(partition), ()))
    return tuple(r for r in current if r not in adding)


def in_flight(doc: Mapping[str, Any]) -> dict[int, Replicas]:
    """The partitions a 2.4+ topic znode records as moving, with their targets (the full set
    minus ``removing_replicas``)."""
    adding = doc.get("adding_replicas") or {}
    removing = doc.get("removing_replicas") or {}
    out = {}
    for key in {*adding, *removing}:
        full = doc["partitions"].get(key)
        if full is not None and key.isdigit():
            gone = set(removing.get(key, ()))
            out[int(key)] = tuple(r for r in full if r not in gone)
    return out


def rewrite_topic(doc: dict[str, Any], started: Mapping[int, tuple[Replicas, Replicas]],
                  done: Mapping[int, Replicas], *, kip455: bool = True) -> bytes:
    """The topic znode ``doc`` (a decoded payload, changed in place) with ``started`` partitions
    (target, origin) in flight and ``done`` ones final, every other field (version, topic_id,
    unknown keys) kept.

    In flight, Kafka writes RS = TRS + (ORS - TRS), and from version 2 AR = TRS - ORS and
    RR = ORS - TRS; once done, RS = TRS and the partition leaves AR and RR. A release before
    2.4 (``kip455`` false) writes no AR and RR.
    """
    tracked = kip455 and (int(doc.get("version", 1)) >= 2 or "adding_replicas" in doc)
    adding = doc.get("adding_replicas", {})
    removing = doc.get("removing_replicas", {})
    for partition, (target, before) in started.items():
        key = str(partition)
        doc["partitions"][key] = list(target) + [r for r in before if r not in target]
        if tracked:
            adding[key] = [r for r in target if r not in before]
            removing[key] = [r for r in before if r not in target]
    for partition, target in done.items():
        key = str(partition)
        doc["partitions"][key] = list(target)
        adding.pop(key, None)
        removing.pop(key, None)
    if tracked:
        doc["adding_replicas"] = {k: v for k, v in adding.items() if v}
        doc["removing_replicas"] = {k: v for k, v in removing.items() if v}
    return codec.dumps(doc)


class Reassignments:
    """The partitions the controller is reassigning: ``pending`` in znode order, then
    ``moving`` (at most ``parallelism``). ``latency`` is how long a new replica takes to join
    the ISR once its broker is alive; replicas on ``stuck`` brokers never join it.

    With ``sizes`` (bytes per partition) a new replica also joins only once the partition's
    bytes are copied from the leader (:mod:`.copying`), at ``bandwidth`` bytes/s per broker or
    the throttle rates the brokers read from their configs (``configs``).

    ``kafka_version`` picks the release's behaviour (see the module's docstring). ``stale``
    holds the entries a 2.3 controller keeps in memory without ever finishing them (its ISR
    change missed, see :meth:`leave_stale`): written back with the rest of its memory."""

    def __init__(self, cluster: ClusterView, configs: Configs, *, latency: float,
                 parallelism: int, stuck: Collection[int],
                 sizes: Mapping[TopicPartition, int] | None = None,
                 bandwidth: float = DEFAULT_BANDWIDTH,
                 kafka_version: KafkaVersion = DEFAULT_SANDBOX) -> None:
        self._cluster = cluster
        self.kip455 = kafka_version.records_moves_in_topic
        self.stale: dict[TopicPartition, Replicas] = {}
        self._configs = configs
        self._latency = latency
        self._parallelism = parallelism
        self._stuck = frozenset(stuck)
        self._sizes = sizes or {}
        self._bandwidth = bandwidth
        self.pending: dict[TopicPartition, Move] = {}
        self.moving: dict[TopicPartition, Move] = {}
        self.transfers = Transfers(bandwidth, self._limit)
        self._last_write = 0.0
        """Real (monotonic) time of the last batch of writes."""

    def reset(self) -> None:
        """Forget everything: a new controller re-reads the admin znode."""
        self.pending.clear()
        self.moving.clear()
        self.stale.clear()
        self.transfers = Transfers(self._bandwidth, self._limit)

    def tick_left(self) -> float:
        """Real seconds until the next batch of writes may go out."""
        return max(0.0, self._last_write + TICK - time.monotonic())

    def retune(self) -> None:
        """The brokers re-read their configs: every copy runs at its new throttle."""
        self.transfers.retune(self._cluster.clock.now(), self._throttled)

    def copies(self) -> dict[Hashable, tuple[float, float, float]]:
        """(bytes copied, size, bytes/s) of every copy in flight, now."""
        now = self._cluster.clock.now()
        out: dict[Hashable, tuple[float, float, float]] = {}
        for move in self.moving.values():
            for replica in move.target:
                progress = self.transfers.progress((move.tp, replica), now)
                if progress is not None:
                    out[(move.tp, replica)] = progress
        return out

    def _limit(self, side: Side) -> float | None:
        broker, direction = side
        key = throttles.LEADER_RATE if direction == "out" else throttles.FOLLOWER_RATE
        return self._configs.rate(broker, key)

    def _throttled(self, copy: Copy) -> tuple[bool, bool]:
        tp: TopicPartition = copy.key[0]  # type: ignore[index]
        follower = copy.follower
        return (self._configs.throttled(tp.topic, tp.partition, copy.leader,
                                        throttles.LEADER_REPLICAS),
                self._configs.throttled(tp.topic, tp.partition, follower,
                                        throttles.FOLLOWER_REPLICAS))

    def _start_copies(self, move: Move, now: float) -> None:
        """A copy from the leader for each target replica not in the ISR (none without a size
        or a leader to copy from)."""
        size = self._sizes.get(move.tp, 0)
        if size <= 0 or move.leader < 0:
            return
        copies = []
        for replica in move.target:
            if replica not in move.isr and (move.tp, replica) not in self.transfers:
                copy = Copy((move.tp, replica), size, move.leader, replica, False, False)
                copy.throttled_out, copy.throttled_in = self._throttled(copy)
                copies.append(copy)
        self.transfers.start(copies, now)

    def _cancel_copies(self, move: Move, now: float) -> None:
        for replica in {*move.target, *move.isr}:
            self.transfers.cancel((move.tp, replica), now)

    def topics(self) -> set[str]:
        """Topics with a partition being reassigned (their deletion waits)."""
        return {tp.topic for tp in itertools.chain(self.moving, self.pending)}

    def due(self, now: float) -> list[float]:
        """When the next moves finish, and ``now`` if a free slot can start one."""
        due = [t for t in map(self.ready_at, self.moving.values()) if t != float("inf")]
        if self.pending and len(self.moving) < self._parallelism:
            due.append(now)
        return due

    def resume_from_topics(self) -> None:
        """Kafka 2.4+'s ``initializePartitionReassignments``: every move a topic znode records
        in flight is queued again, as it stands there (a request read after this overrides)."""
        if not self.kip455:
            return
        client = self._cluster.client
        try:
            names = client.get_children(paths.BROKER_TOPICS)
        except NoNodeError:
            return
        for topic, (doc, _stat) in sorted(self._cluster.topics(sorted(names)).items()):
            for partition, target in sorted(in_flight(doc).items()):
                tp = TopicPartition(topic, partition)
                self.pending[tp] = Move(tp, target)

    def leave_stale(self, moves: Sequence[PartitionMove]) -> None:
        """A 2.3 controller that missed the ISR changes of ``moves``: they stay in its memory,
        and in every admin znode it writes, until the controller moves."""
        if not self.kip455:
            self.stale.update((m.tp, m.replicas) for m in moves)

    def on_request(self, data: bytes, czxid: int) -> None:
        """ZooKeeper first, then the controller's own state: cut off anywhere before the end,
        nothing of this request is in ``pending`` yet, so handling it again is clean."""
        cluster = self._cluster
        try:
            entries = codec.decode_reassignment(data)
        except codec.DecodeError as exc:
            # Kafka logs "Ignoring partition reassignment due to invalid json" and the znode
            # stays until someone deletes it
            cluster.record_submitted("reassign_submitted", czxid, error=str(exc))
            return
        cluster.record_submitted("reassign_submitted", czxid, partitions=[
            {"topic": m.topic, "partition": m.partition, "replicas": list(m.replicas)}
            for m in entries])
        targets = {m.tp: m.replicas for m in entries}  # a repeated partition: the last wins
        topics = cluster.topics(tp.topic for tp in targets)
        queued = cluster.queued_deletions()
        dropped: dict[TopicPartition, str] = {}
        for tp in targets:
            if cluster.replicas(topics, tp) is None:
                dropped[tp] = "unknown topic or partition"
            elif tp.topic in queued:
                dropped[tp] = "topic queued for deletion"
        self._remove_from_znode(dropped)
        for tp, reason in dropped.items():
            cluster.record("partition_dropped", topic=tp.topic, partition=tp.partition,
                           reason=reason)
        replaced = [(self.moving[tp], target, self._origin_after(self.moving[tp], target))
                    for tp, target in targets.items()
                    if tp not in dropped and tp in self.moving and self.moving[tp].target != target]
        by_topic: dict[str, tuple[dict[int, tuple[Replicas, Replicas]], dict[int, Replicas]]] = {}
        for move, target, before in replaced:
            by_topic.setdefault(move.tp.topic, ({}, {}))[0][move.tp.partition] = (target, before)
        self._update_topics(by_topic)
        now = self._cluster.clock.now()
        for move, target, before in replaced:
            self._replace(move, target, before, now)
            cluster.record("reassignment_replaced", topic=move.tp.topic,
                           partition=move.tp.partition, replicas=list(target))
        for tp, target in targets.items():
            if tp not in dropped and tp not in self.moving:
                self.pending[tp] = Move(tp, target)

    def _origin_after(self, move: Move, target: Replicas) -> Replicas:
        """The replicas counted as the partition's own once ``move`` is re-targeted: 2.4+
        keeps the originals (``reassignTo``: full set = target + origin); 2.3 takes the whole
        set the partition holds now (``newAndOldReplicas``), so the union only grows."""
        if self.kip455:
            return move.origin
        return tuple(move.target) + tuple(r for r in move.origin if r not in move.target)

    def _replace(self, move: Move, target: Replicas, before: Replicas, now: float) -> None:
        """The move follows its new target from now: copies for replicas no longer wanted
        stop (Kafka stops and deletes them), new ones start. A target of replicas already in
        the ISR (the originals: a cancel) completes at the next step."""
        full = set(move.target) | set(move.origin)
        self._cancel_copies(move, now)
        move.target = target
        move.origin = before
        move.reorder = set(target) == full
        self._start_copies(move, now)

    def ready_at(self, move: Move) -> float:
        """When every target replica is in the ISR (inf: never, or not until a broker starts).

        A replica already in the ISR when the move started is in at once; a new one joins
        ``latency`` after both the move and its broker started, and not before its copy of the
        partition's bytes is done. An empty or duplicate target never completes: Kafka's
        controller fails half-way on such an entry and it stays in /admin/reassign_partitions
        forever.
        """
        target = move.target
        if not target or len(set(target)) != len(target):
            return float("inf")
        if move.reorder:
            return move.started
        ready = move.started
        for replica in target:
            since = self._cluster.live.get(replica)
            if since is None:
                return float("inf")
            if replica not in move.isr:
                if replica in self._stuck:
                    return float("inf")
                copied = self.transfers.finish_time((move.tp, replica))
                ready = max(ready, since + self._latency, move.started + self._latency,
                            move.started if copied is None else copied)
        return ready

    def advance(self, now: float) -> bool:
        """Start moves in free slots and finish those whose replicas are all in the ISR; one
        batch of writes per tick. True when some partitions finished."""
        if self.tick_left() > 0:
            return False
        self.transfers.advance(now)
        done = [m for m in self.moving.values() if self.ready_at(m) <= now]
        for move in done:
            del self.moving[move.tp]
        started: list[tuple[Move, Replicas]] = []
        try:
            while self.pending and len(self.moving) < self._parallelism:
                batch = list(itertools.islice(self.pending.values(),
                                              self._parallelism - len(self.moving)))
                starting = self._start(batch, now)
                for move in batch:
                    del self.pending[move.tp]
                for move, before in starting:
                    if self.ready_at(move) <= now:
                        done.append(move)
                    else:
                        self.moving[move.tp] = move
                        started.append((move, before))
            if done or started:
                self._write_progress(started, done)
                self._last_write = time.monotonic()
        except BaseException:
            for move in done:  # not finished after all: due again next time
                self.moving[move.tp] = move
            raise
        for move in done:
            self._cancel_copies(move, now)
        return bool(done)

    def _start(self, batch: Sequence[Move], now: float) -> list[tuple[Move, Replicas]]:
        """The moves with the leader and ISR they start from, each with its replicas before
        the reassignment. A partition deleted meanwhile (only by hand: deletion waits for
        reassignments) is left out."""
        topics = self._cluster.topics(m.tp.topic for m in batch)
        states = self._cluster.states([m.tp for m in batch])
        out = []
        for move in batch:
            entry = topics.get(move.tp.topic)
            if entry is None or str(move.tp.partition) not in entry[0]["partitions"]:
                continue
            move.state = states.get(move.tp)
            move.isr = frozenset(move.state[0].isr) if move.state else frozenset()
            move.leader = move.state[0].leader if move.state else -1
            move.started = now
            before = origin(entry[0], move.tp.partition)
            move.origin = before
            move.reorder = set(before) == set(move.target)
            self._start_copies(move, now)
            out.append((move, before))
        return out

    def _final_state(self, move: Move, state: PartitionState) -> PartitionState:
        """Leader stays if it is a live target replica, else the first live target replica
        becomes leader; ISR = target (a reordering keeps the ISR it has: a replica on a broker
        that is down is in no ISR). The epoch moves only when leader or ISR change."""
        alive = self._cluster.alive
        leader = state.leader
        isr = state.isr if move.reorder else move.target
        if leader not in move.target or not alive(leader):
            leader = next((r for r in move.target if alive(r)), -1)
        if (leader, isr) == (state.leader, state.isr):
            return state
        return PartitionState(leader, isr, state.leader_epoch + 1, self._cluster.epoch)

    def _write_progress(self, started: Sequence[tuple[Move, Replicas]],
                        done: Sequence[Move]) -> None:
        """In Kafka's order: leader and ISR, then the topic znode, then the admin znode - so
        whoever sees a partition leave /admin/reassign_partitions finds it final elsewhere."""
        moves = {m.tp: m for m in done}
        outcome = self._cluster.update_states(
            moves, lambda tp, state: self._final_state(moves[tp], state),
            known={m.tp: m.state for m in done if m.state is not None})

        by_topic: dict[str, tuple[dict[int, tuple[Replicas, Replicas]], dict[int, Replicas]]] = {}
        for move, before in started:
            by_topic.setdefault(move.tp.topic, ({}, {}))[0][move.tp.partition] = (move.target,
                                                                                 before)
        for move in done:
            by_topic.setdefault(move.tp.topic, ({}, {}))[1][move.tp.partition] = move.target
        self._update_topics(by_topic)

        if self.kip455:
            self._remove_from_znode(moves)
        elif done:
            self._write_memory()
        for move in done:
            final = outcome.get(move.tp)
            self._cluster.record("partition_reassigned", topic=move.tp.topic,
                                 partition=move.tp.partition, replicas=list(move.target),
                                 leader=None if final is None else (final[1] or final[0]).leader,
                                 started=move.started, in_sync=self.ready_at(move))

    def _update_topics(self, by_topic: TopicChanges) -> None:
        """Read-modify-write of each topic znode, conditional on its version; a topic someone
        else changed in between is read and rewritten again."""
        client = self._cluster.client
        todo = dict(by_topic)
        while todo:
            topics = self._cluster.topics(todo)
            names = [t for t in todo if t in topics]
            replies = pipelined(client, (partial(
                client.set_async, paths.topic(t),
                rewrite_topic(topics[t][0], *todo[t], kip455=self.kip455),
                topics[t][1].version)
                for t in names))
            expect(replies, [paths.topic(t) for t in names], ok=(BadVersionError, NoNodeError))
            todo = {t: todo[t] for t, r in zip(names, replies, strict=True)
                    if isinstance(r, BadVersionError)}

    def _write_memory(self) -> None:
        """Kafka before 2.4: what is left in the controller's memory replaces the admin znode
        (created again if someone deleted it, ``setOrCreatePartitionReassignment``), and the
        znode is deleted once nothing is left."""
        left = {tp: m.target for tp, m in itertools.chain(self.moving.items(),
                                                           self.pending.items())}
        left.update((tp, r) for tp, r in self.stale.items() if tp not in left)
        client = self._cluster.client
        if not left:
            with contextlib.suppress(NoNodeError):
                client.delete(paths.REASSIGN_PARTITIONS)
            return
        data = codec.encode_reassignment([PartitionMove(tp.topic, tp.partition, r)
                                          for tp, r in left.items()])
        try:
            client.set(paths.REASSIGN_PARTITIONS, data)
        except NoNodeError:
            _, stat = client.create(paths.REASSIGN_PARTITIONS, data, include_data=True)
            # its own writing, not a request: when it reads the znode back it records nothing
            self._cluster.own_request("reassign_submitted", stat.czxid)
            self._cluster.record("reassignment_rewritten", czxid=stat.czxid,
                                 partitions=len(left))

    def _remove_from_znode(self, finished: Collection[TopicPartition]) -> None:
        """Rewrite /admin/reassign_partitions without ``finished`` (re-read first, as Kafka's
        maybeRemoveFromZkReassignment does), and delete it when nothing is left. Never
        re-creates it if someone deleted it meanwhile."""
        if not finished:
            return
        client = self._cluster.client
        while True:
            try:
                data, stat = client.get(paths.REASSIGN_PARTITIONS)
            except NoNodeError:
                return
            try:
                entries = codec.decode_reassignment(data)
            except codec.DecodeError:
                return
            left = [m for m in entries if m.tp not in finished]
            if len(left) == len(entries):
                return
            try:
                if left:
                    client.set(paths.REASSIGN_PARTITIONS, codec.encode_reassignment(left),
                               version=stat.version)
                else:
                    client.delete(paths.REASSIGN_PARTITIONS, version=stat.version)
                return
            except (BadVersionError, NoNodeError):
                continue
