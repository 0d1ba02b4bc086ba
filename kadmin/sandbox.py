"""A rehearsal cluster: a snapshot loaded into a real ZooKeeper, and a simulated Kafka controller.

Operators rehearse plans against it and kadmin's integration tests use it as the controller, so
the controller does to the three admin znodes exactly what Kafka's does (2.4-3.x, ZooKeeper
mode; spec section 2, and ``KafkaController.scala`` where the spec is silent) - including the
unkind parts: entries for unknown partitions are dropped, replicas on dead brokers wait, and an
empty or duplicate replica list leaves the reassignment znode behind forever.

Threading: kazoo's watch and connection callbacks only *poke* a single worker thread, which does
all the controller's ZooKeeper I/O; public methods that act as the controller (``resign``,
``elect``, ``fail_over``) run as commands on that thread, so its state needs no locks. Bulk I/O
is pipelined with kazoo's async API (one round trip's latency per window, not per znode), which
is what lets a 200,000-partition cluster load well within a minute.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from enum import Enum
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NodeExistsError,
    NoNodeError,
    OperationTimeoutError,
    RolledBackError,
    RuntimeInconsistency,
    SessionExpiredError,
)
from kazoo.interfaces import IAsyncResult
from kazoo.protocol.states import KazooState, WatchedEvent, ZnodeStat

from kadmin import synthetic
from kadmin.embedded import EmbeddedZooKeeper
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    InvalidInput,
    OperationFailed,
    PartitionState,
    Replicas,
    TopicPartition,
)
from kadmin.zk import codec, paths, session

log = logging.getLogger(__name__)

T = TypeVar("T")

_WINDOW = 2000
"""Requests in flight at once when pipelining: enough to hide the round trip, few enough to
keep kazoo's queues and the server's memory small."""

_TX_OPS = 1000
_TX_BYTES = 256 * 1024
"""Bounds of one transaction (ZooKeeper refuses requests over jute.maxbuffer, ~1 MB)."""

_TX_WINDOW = 8
"""Transactions in flight at once."""

_REPLY_TIMEOUT = 30.0
"""Longest wait for one reply; a server that is away longer counts as a connection loss."""

TICK = 0.05
"""The controller completes due partitions at most once per tick, with one rewrite of the
reassignment znode, so a 15,000-partition batch costs a few hundred writes, not 15,000."""

_ERROR_BACKOFF = 1.0

_PERSISTENT_PATHS = (paths.BROKER_IDS, paths.BROKER_TOPICS, paths.DELETE_TOPICS,
                     paths.CONFIG_TOPICS, paths.CONFIG_BROKERS, paths.CONFIG_CHANGES)
"""What every Kafka broker creates at start-up (``ZkData.PersistentZkPaths``, the part kadmin
reads), so a freshly loaded sandbox looks like a cluster that has run."""

_EMPTY_TOPIC_CONFIG = codec.dumps({"version": 1, "config": {}})

_CONNECTION_ERRORS = (ConnectionLoss, SessionExpiredError, ConnectionClosedError,
                      OperationTimeoutError)


# --- pipelined I/O -----------------------------------------------------------------------------


def _reply(pending: IAsyncResult) -> Any:
    """The reply, or the ZooKeeper error it carries (NoNode, BadVersion, ...) as a value;
    connection trouble raises, because then nothing that follows can succeed either."""
    try:
        return session.reply(pending, time.monotonic() + _REPLY_TIMEOUT)
    except _CONNECTION_ERRORS:
        raise
    except KazooException as exc:
        return exc


def _pipelined(client: KazooClient, requests: Iterable[Callable[[], IAsyncResult]],
               window: int = _WINDOW) -> list[Any]:
    """Send ``requests`` in windows of ``window``; replies (or errors) in request order.

    ZooKeeper answers one session's requests in order, so once the last of a window has its
    reply all of them have: one wake-up per window instead of one per request, which matters
    when kazoo's I/O thread and this one share the GIL."""
    out: list[Any] = []
    pending = iter(requests)
    while in_flight := [request() for request in itertools.islice(pending, window)]:
        in_flight[-1].wait(_REPLY_TIMEOUT)
        out.extend(_reply(result) for result in in_flight)
    return out


def _expect(results: Sequence[Any], what: Sequence[str], ok: tuple[type[Exception], ...] = ()
            ) -> None:
    """Raise the first unexpected error of a pipelined batch, naming its znode."""
    for path, result in zip(what, results, strict=True):
        if isinstance(result, Exception) and not isinstance(result, ok):
            raise OperationFailed(f"{path}: {type(result).__name__}") from result


def _delete_tree(client: KazooClient, root: str) -> None:
    """``rmr``, pipelined level by level: a topic with thousands of partitions goes in a few
    round trips (kazoo's ``delete(recursive=True)`` makes two per znode)."""
    levels = [[root]]
    while levels[-1]:
        children = _pipelined(client, (partial(client.get_children_async, p) for p in levels[-1]))
        levels.append([f"{parent}/{child}" for parent, kids in zip(levels[-1], children, strict=True)
                       if not isinstance(kids, Exception) for child in kids])
    for level in reversed(levels[:-1]):
        _expect(_pipelined(client, (partial(client.delete_async, p) for p in level)), level,
                ok=(NoNodeError,))


# --- loading a snapshot ------------------------------------------------------------------------


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
    """Every znode of the snapshot, parents before children."""
    for broker in sorted(snapshot.brokers.values(), key=lambda b: b.id):
        yield _Create(paths.broker(broker.id), codec.encode_broker(broker, broker_version), True)
    yield _Create(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(epoch))
    yield _Create(paths.CONTROLLER, codec.encode_controller(controller_of(snapshot)), True)
    encoded: dict[PartitionState, bytes] = {}  # few distinct states: encode each once
    for topic in sorted(snapshot.topics):
        assignment = snapshot.topics[topic]
        states = snapshot.states.get(topic, {})
        yield _Create(paths.topic(topic), codec.encode_topic(assignment, topic_version))
        yield _Create(paths.partitions(topic), b"")
        for partition, replicas in sorted(assignment.items()):
            state = states.get(partition) or PartitionState(
                leader=replicas[0] if replicas else -1, isr=replicas, controller_epoch=epoch)
            data = encoded.get(state)
            if data is None:
                data = encoded[state] = codec.encode_state(state)
            yield _Create(paths.partition(topic, partition), b"")
            yield _Create(paths.partition_state(topic, partition), data)
        yield _Create(paths.topic_config(topic), _EMPTY_TOPIC_CONFIG)


def _chunks(items: Iterable[T], size: Callable[[T], int]) -> Iterator[list[T]]:
    """Consecutive groups that each fit one transaction."""
    batch: list[T] = []
    total = 0
    for item in items:
        cost = size(item) + 64  # the op's header, roughly
        if batch and (len(batch) >= _TX_OPS or total + cost > _TX_BYTES):
            yield batch
            batch, total = [], 0
        batch.append(item)
        total += cost
    if batch:
        yield batch


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
    for path in _PERSISTENT_PATHS:
        client.ensure_path(path)

    def commit(batch: list[_Create]) -> Callable[[], IAsyncResult]:
        tx = client.transaction()
        for create in batch:
            tx.create(create.path, create.data, ephemeral=create.ephemeral)
        return tx.commit_async

    batches: list[list[_Create]] = []

    def committed() -> Iterator[Callable[[], IAsyncResult]]:
        znodes = _snapshot_znodes(snapshot, broker_version, topic_version, epoch)
        for batch in _chunks(znodes, lambda c: len(c.path) + len(c.data)):
            batches.append(batch)
            yield commit(batch)

    results = _pipelined(client, committed(), window=_TX_WINDOW)
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


# --- what the controller does -------------------------------------------------------------------


@dataclass(frozen=True)
class ControllerEvent:
    """One thing the controller did, for tests and for the ``--record`` file.

    ``kind`` is one of ``reassign_submitted``, ``partition_reassigned``, ``partition_dropped``,
    ``election_submitted``, ``leader_elected``, ``election_skipped``, ``topic_deleted``,
    ``deletion_marker_removed``, ``failover``. ``at`` is wall-clock time (seconds).
    A ``reassign_submitted``/``election_submitted`` event is recorded once per *created* znode
    (its ``czxid``), never again when a new controller re-reads it, so two events with the same
    partitions mean the same request was really submitted twice. Outcomes are recorded right
    after the ZooKeeper writes they describe (``SimulatedController.events`` waits for the step
    in progress; a ``--record`` file may trail the writes by that step).
    """

    kind: str
    detail: dict[str, Any]
    at: float


def read_events(record_path: Path) -> list[ControllerEvent]:
    """The events a controller (possibly of another process) recorded in ``record_path``."""
    with open(record_path, encoding="utf-8") as lines:
        return [ControllerEvent(**json.loads(line)) for line in lines if line.strip()]


_Versioned = tuple[PartitionState, int]
"""A partition's leader and ISR with the znode version it was read at."""


@dataclass
class _Move:
    """One partition being reassigned. ``state`` (None: the partition has no state znode),
    ``isr`` and ``started`` are set when the move starts."""

    tp: TopicPartition
    target: Replicas
    state: _Versioned | None = None
    isr: frozenset[int] = frozenset()
    started: float = 0.0


def _origin(doc: Mapping[str, Any], partition: int) -> Replicas:
    """The replicas before the reassignment: RS minus AR, as Kafka 2.4+ recovers them after a
    failover (older znodes have no AR, and then the full list is all there is)."""
    current = tuple(doc["partitions"].get(str(partition), ()))
    adding = set(doc.get("adding_replicas", {}).get(str(partition), ()))
    return tuple(r for r in current if r not in adding)


def _rewrite_topic(doc: dict[str, Any], started: Mapping[int, tuple[Replicas, Replicas]],
                   done: Mapping[int, Replicas]) -> bytes:
    """The topic znode ``doc`` (a decoded payload, changed in place) with ``started`` partitions
    (target, origin) in flight and ``done`` ones final, every other field (version, topic_id,
    unknown keys) kept.

    In flight, Kafka writes RS = TRS + (ORS - TRS), and from version 2 AR = TRS - ORS and
    RR = ORS - TRS; once done, RS = TRS and the partition leaves AR and RR.
    """
    tracked = int(doc.get("version", 1)) >= 2 or "adding_replicas" in doc
    adding = doc.get("adding_replicas", {})
    removing = doc.get("removing_replicas", {})
    for partition, (target, origin) in started.items():
        key = str(partition)
        doc["partitions"][key] = list(target) + [r for r in origin if r not in target]
        if tracked:
            adding[key] = [r for r in target if r not in origin]
            removing[key] = [r for r in origin if r not in target]
    for partition, target in done.items():
        key = str(partition)
        doc["partitions"][key] = list(target)
        adding.pop(key, None)
        removing.pop(key, None)
    if tracked:
        doc["adding_replicas"] = {k: v for k, v in adding.items() if v}
        doc["removing_replicas"] = {k: v for k, v in removing.items() if v}
    return codec.dumps(doc)


class _Kind(Enum):
    """What a poke asks the worker to look at again."""

    CONTROLLER = "controller"
    BROKERS = "brokers"
    SESSION = "session"
    """The session expired: its ephemeral znodes (brokers, /controller) are gone."""
    REASSIGN = "reassign"
    ELECTION = "election"
    DELETION = "deletion"


_WATCHED = (_Kind.CONTROLLER, _Kind.BROKERS, _Kind.REASSIGN, _Kind.ELECTION, _Kind.DELETION)
"""The kinds with a ZooKeeper watch, all re-read after a reconnect."""


class SimulatedController:
    """Kafka's controller, as far as the admin znodes go.

    ``latency`` is how long a new replica takes to join the ISR once its broker is alive;
    ``parallelism`` bounds the partitions moving at once (in znode order); replicas on
    ``stuck_brokers`` never join the ISR. ``record_path`` gets one JSON line per event.

    A broker is alive while /brokers/ids/<id> exists. The brokers registered when the
    controller starts, and those :meth:`start_broker` registers, are kept registered by this
    controller: after a session expiry it re-creates their ephemeral znodes (as real brokers
    re-register) and re-elects itself, which bumps /controller_epoch.
    """

    def __init__(self, client: KazooClient, *, controller_id: int, latency: float = 0.05,
                 parallelism: int = 100, stuck_brokers: Collection[int] = (),
                 delete_topic_enable: bool = True, record_path: Path | None = None) -> None:
        if parallelism < 1:
            raise ValueError("parallelism must be at least 1")
        self._client = client
        self._controller_id = controller_id
        self._latency = latency
        self._parallelism = parallelism
        self._stuck = frozenset(stuck_brokers)
        self._delete_topic_enable = delete_topic_enable
        self._record_path = record_path

        # shared with other threads, under _lock
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pokes: set[_Kind] = set()
        self._commands: list[tuple[Callable[[], Any], Future[Any]]] = []
        self._events: list[ControllerEvent] = []
        self._keep: dict[int, bytes] = {}
        self._record: IO[str] | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._watchers = {kind: partial(self._on_watch, kind) for kind in _WATCHED}

        # the worker thread's own
        self._active = False
        self._resigned = False
        self._epoch = 0
        self._live: dict[int, float] = {}
        self._pending: dict[TopicPartition, _Move] = {}
        self._moving: dict[TopicPartition, _Move] = {}
        self._handled: dict[_Kind, int] = {}
        """Admin znode kind -> czxid of the request this controller has fully handled."""
        self._submitted: set[tuple[str, int]] = set()
        self._deletions: dict[str, float] = {}
        """Deletion markers -> when this controller first saw them."""
        self._next_deletion: float | None = None
        self._last_batch = 0.0

    # --- public API -----------------------------------------------------------------------

    @property
    def controller_id(self) -> int:
        return self._controller_id

    @property
    def events(self) -> list[ControllerEvent]:
        """What the controller did, read once the step it is in has ended. A step records its
        events after the writes they describe, so a caller that has just seen such a write (a
        partition leave /admin/reassign_partitions) finds its event here, not a moment later."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            with contextlib.suppress(RuntimeError):  # stopped meanwhile: nothing runs any more
                self._call(lambda: None)  # commands run between steps
        with self._lock:
            return list(self._events)

    def start(self) -> SimulatedController:
        """Become the controller (adopting /controller if it names ``controller_id``, else
        taking it over with a new epoch) and start acting on the admin znodes."""
        if self._thread is not None:
            return self
        if self._record_path is not None:
            self._record = open(self._record_path, "a", encoding="utf-8")  # noqa: SIM115
        for path in _PERSISTENT_PATHS:
            self._client.ensure_path(path)
        ids = [int(n) for n in self._client.get_children(paths.BROKER_IDS)
               if n.isascii() and n.isdigit()]
        registrations = _pipelined(self._client, (
            partial(self._client.get_async, paths.broker(b)) for b in ids))
        with self._lock:
            self._keep.update((b, reply[0]) for b, reply in zip(ids, registrations, strict=True)
                              if not isinstance(reply, Exception))
        self._client.add_listener(self._on_state)
        self._thread = threading.Thread(target=self._run, name="sandbox-controller", daemon=True)
        self._thread.start()
        self._call(self._take_over)
        return self

    def stop(self) -> None:
        """Stop acting. ZooKeeper is left as it is (/controller lives as long as the session)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stopping.set()
        self._wake.set()
        thread.join(timeout=_REPLY_TIMEOUT)
        self._client.remove_listener(self._on_state)
        with self._lock:
            record, self._record = self._record, None
        if record is not None:
            record.close()

    def resign(self) -> None:
        """Delete /controller and stop acting until :meth:`elect` (fault tests)."""
        self._call(self._resign)

    def elect(self, controller_id: int) -> None:
        """Register ``controller_id`` in /controller, increment /controller_epoch and re-read the
        three admin paths, as a newly elected Kafka controller does."""
        self._call(partial(self._elect, controller_id))

    def fail_over(self, new_controller_id: int, *, gap: float = 0.2) -> None:
        """Controller failover: /controller is gone for ``gap`` seconds, then the new controller
        registers with the next epoch and resumes the work in progress."""
        self.resign()
        time.sleep(gap)
        self.elect(new_controller_id)

    def kill_broker(self, broker_id: int) -> None:
        """Delete the broker's registration: it is dead until :meth:`start_broker`."""
        with self._lock:
            self._keep.pop(broker_id, None)
        with contextlib.suppress(NoNodeError):
            self._client.delete(paths.broker(broker_id))

    def start_broker(self, broker: Broker, *, version: int = 5) -> None:
        """Register the broker (ephemeral, on this controller's session); no-op if registered."""
        data = codec.encode_broker(broker, version)
        with self._lock:
            self._keep[broker.id] = data
        with contextlib.suppress(NodeExistsError):
            self._client.create(paths.broker(broker.id), data, ephemeral=True)

    def __enter__(self) -> SimulatedController:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # --- plumbing between threads -----------------------------------------------------------

    def _poke(self, *kinds: _Kind) -> None:
        with self._lock:
            self._pokes.update(kinds)
        self._wake.set()

    def _on_watch(self, kind: _Kind, _event: WatchedEvent) -> None:
        self._poke(kind)

    def _on_state(self, state: str) -> None:
        """Kazoo's connection listener (its own thread: must not block). kazoo drops every
        watch when the connection drops, so a reconnect means: read everything again."""
        if state == KazooState.LOST:
            self._poke(_Kind.SESSION)
        elif state == KazooState.CONNECTED:
            self._poke(*_WATCHED)

    def _call(self, command: Callable[[], T]) -> T:
        if self._thread is None:
            raise RuntimeError("the simulated controller is not running: call start() first")
        future: Future[T] = Future()
        with self._lock:
            self._commands.append((command, future))
        self._wake.set()
        return future.result(timeout=2 * _REPLY_TIMEOUT)

    def _record_event(self, kind: str, **detail: Any) -> None:
        event = ControllerEvent(kind, detail, time.time())
        with self._lock:
            self._events.append(event)
            if self._record is not None:
                self._record.write(json.dumps(dataclasses.asdict(event), separators=(",", ":"))
                                   + "\n")
                self._record.flush()

    # --- the worker -------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping.is_set():
            # while kazoo reconnects nothing can be done: sleep until its listener pokes
            connected = self._client.connected
            self._wake.wait(self._sleep_time(time.monotonic()) if connected else None)
            self._wake.clear()
            if self._stopping.is_set():
                break
            with self._lock:
                commands, self._commands = self._commands, []
            for command, future in commands:
                try:
                    future.set_result(command())
                except Exception as exc:
                    future.set_exception(exc)
            if not self._client.connected:
                continue  # the CONNECTED listener pokes everything once kazoo is back
            with self._lock:
                pokes, self._pokes = self._pokes, set()
            try:
                self._step(pokes)
            except _CONNECTION_ERRORS as exc:
                log.info("sandbox controller: %s, retrying after reconnect", type(exc).__name__)
                self._poke(*pokes)
                self._stopping.wait(TICK)
            except Exception:
                log.exception("sandbox controller: unexpected error, retrying")
                self._poke(*pokes, *_WATCHED)
                self._stopping.wait(_ERROR_BACKOFF)

    def _sleep_time(self, now: float) -> float | None:
        """Until the next partition or deletion falls due (None: until poked)."""
        if not self._active:
            return None
        due = [t for t in map(self._ready_at, self._moving.values()) if t != float("inf")]
        if self._next_deletion is not None:
            due.append(self._next_deletion)
        if self._pending and len(self._moving) < self._parallelism:
            due.append(now)
        if not due:
            return None
        return max(min(due), self._last_batch + TICK) - now

    def _step(self, pokes: set[_Kind]) -> None:
        if _Kind.SESSION in pokes:
            self._reregister_brokers()
        if _Kind.BROKERS in pokes:
            self._refresh_brokers()
        if _Kind.CONTROLLER in pokes or _Kind.SESSION in pokes:
            self._check_controller()
        if not self._active:
            return
        if _Kind.REASSIGN in pokes:
            self._on_admin_znode(paths.REASSIGN_PARTITIONS, _Kind.REASSIGN, self._on_reassignment)
        if _Kind.ELECTION in pokes:
            self._on_admin_znode(paths.PREFERRED_REPLICA_ELECTION, _Kind.ELECTION,
                                 self._on_election)
        now = time.monotonic()
        finished = self._advance_moves(now)
        if (pokes & {_Kind.DELETION, _Kind.BROKERS} or finished
                or (self._next_deletion is not None and self._next_deletion <= now)):
            self._on_deletions()

    # --- controller election ------------------------------------------------------------------

    def _take_over(self) -> None:
        try:
            current: int | None = codec.decode_controller(
                self._client.get(paths.CONTROLLER)[0])
        except NoNodeError:
            current = None
        except codec.DecodeError:
            current = -1  # unreadable: not ours, replace it
        if current == self._controller_id:
            self._epoch = codec.decode_controller_epoch(
                self._client.get(paths.CONTROLLER_EPOCH)[0])
            self._become_active()
            return
        if current is not None:
            with contextlib.suppress(NoNodeError):
                self._client.delete(paths.CONTROLLER)
        self._elect(self._controller_id)

    def _elect(self, controller_id: int) -> None:
        """Register /controller and bump /controller_epoch in one transaction, as Kafka 2.x's
        registerControllerAndIncrementControllerEpoch does."""
        with contextlib.suppress(NodeExistsError):
            self._client.create(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(0))
        data, stat = self._client.get(paths.CONTROLLER_EPOCH)
        epoch = codec.decode_controller_epoch(data) + 1
        tx = self._client.transaction()
        tx.create(paths.CONTROLLER, codec.encode_controller(controller_id), ephemeral=True)
        tx.set_data(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(epoch), stat.version)
        results = tx.commit()
        if isinstance(results[0], NodeExistsError):
            raise OperationFailed(f"{paths.CONTROLLER} exists: another controller is active "
                                  "(resign first)")
        errors = [r for r in results if isinstance(r, Exception)]
        if errors:
            raise OperationFailed(f"cannot register controller {controller_id}: "
                                  f"{type(errors[0]).__name__}")
        self._epoch = epoch
        self._controller_id = controller_id
        self._record_event("failover", controller=controller_id, epoch=epoch)
        self._become_active()

    def _become_active(self) -> None:
        """Start from what ZooKeeper says, as Kafka's onControllerFailover does: whatever was
        in flight is re-read from the admin znodes and resumes."""
        self._active = True
        self._resigned = False
        self._pending.clear()
        self._moving.clear()
        self._deletions.clear()
        self._handled.clear()
        self._client.exists(paths.CONTROLLER, watch=self._watchers[_Kind.CONTROLLER])
        self._refresh_brokers()
        self._poke(_Kind.REASSIGN, _Kind.ELECTION, _Kind.DELETION)

    def _resign(self) -> None:
        self._active = False
        self._resigned = True
        self._pending.clear()
        self._moving.clear()
        self._deletions.clear()
        with contextlib.suppress(NoNodeError):
            self._client.delete(paths.CONTROLLER)
        self._record_event("failover", controller=None, epoch=self._epoch)

    def _check_controller(self) -> None:
        """/controller vanished (an operator's ``rmr /controller``, or our session expired):
        Kafka's brokers race to re-create it, so this controller elects itself again. If it
        names another broker now, this controller is no longer active."""
        try:
            data = self._client.get(paths.CONTROLLER,
                                    watch=self._watchers[_Kind.CONTROLLER])[0]
        except NoNodeError:
            if self._client.exists(paths.CONTROLLER, watch=self._watchers[_Kind.CONTROLLER]):
                self._poke(_Kind.CONTROLLER)
            elif not self._resigned and self._thread is not None:
                self._elect(self._controller_id)
            return
        try:
            holder: int | None = codec.decode_controller(data)
        except codec.DecodeError:
            holder = None
        if holder != self._controller_id and self._active:
            self._active = False
            self._record_event("failover", controller=holder, epoch=self._epoch)

    # --- brokers ------------------------------------------------------------------------------

    def _refresh_brokers(self) -> None:
        try:
            names = self._client.get_children(paths.BROKER_IDS,
                                              watch=self._watchers[_Kind.BROKERS])
        except NoNodeError:
            names = []
        alive = {int(n) for n in names if n.isascii() and n.isdigit()}
        now = time.monotonic()
        self._live = {b: self._live.get(b, now) for b in alive}

    def _reregister_brokers(self) -> None:
        with self._lock:
            keep = dict(self._keep)
        _expect(_pipelined(self._client, (
            partial(self._client.create_async, paths.broker(b), data, ephemeral=True)
            for b, data in keep.items())), [paths.broker(b) for b in keep], ok=(NodeExistsError,))

    def _alive(self, broker: int) -> bool:
        return broker in self._live

    # --- reading cluster state ----------------------------------------------------------------

    def _read_watched(self, path: str, kind: _Kind) -> tuple[bytes, ZnodeStat] | None:
        """The znode, with a watch that fires on its next creation, change or deletion."""
        watch = self._watchers[kind]
        while True:
            try:
                return self._client.get(path, watch=watch)
            except NoNodeError:
                if self._client.exists(path, watch=watch) is None:
                    return None

    def _topics(self, names: Iterable[str]) -> dict[str, tuple[dict[str, Any], ZnodeStat]]:
        """Topic znodes as JSON documents (with their stat); unknown or corrupt ones left out."""
        names = list(dict.fromkeys(names))
        out = {}
        replies = _pipelined(self._client, (partial(self._client.get_async, paths.topic(t))
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

    def _states(self, tps: Sequence[TopicPartition]) -> dict[TopicPartition, _Versioned]:
        """Leader and ISR of each partition that has a readable state znode."""
        out = {}
        replies = _pipelined(self._client, (
            partial(self._client.get_async, paths.partition_state(*tp)) for tp in tps))
        for tp, reply in zip(tps, replies, strict=True):
            if isinstance(reply, Exception):
                continue
            try:
                out[tp] = (codec.decode_state(reply[0]), reply[1].version)
            except codec.DecodeError as exc:
                log.warning("sandbox controller: %s: %s", paths.partition_state(*tp), exc)
        return out

    def _queued_deletions(self) -> set[str]:
        if not self._delete_topic_enable:
            return set()
        try:
            return set(self._client.get_children(paths.DELETE_TOPICS))
        except NoNodeError:
            return set()

    @staticmethod
    def _replicas(topics: Mapping[str, tuple[dict[str, Any], ZnodeStat]],
                  tp: TopicPartition) -> Replicas | None:
        entry = topics.get(tp.topic)
        if entry is None:
            return None
        replicas = entry[0]["partitions"].get(str(tp.partition))
        return None if replicas is None else tuple(replicas)

    # --- reassignment -------------------------------------------------------------------------

    def _on_admin_znode(self, path: str, kind: _Kind, handle: Callable[[bytes, int], None]
                        ) -> None:
        """Kafka 2.4+ acts when an admin znode is *created*: ``handle(data, czxid)`` runs once
        per created znode, and a rewrite by anyone else is ignored (its new entries wait for
        the next controller), as in KafkaController.

        The znode counts as handled only once ``handle`` has returned. A handling step cut off
        half-way (the connection lost under it, any error) raises out of here, the worker pokes
        ``kind`` again and the re-read runs ``handle`` once more; marking the czxid seen before
        handling would skip it then, and the request would stay in its znode forever."""
        znode = self._read_watched(path, kind)
        if znode is None or znode[1].czxid == self._handled.get(kind):
            return
        data, stat = znode
        # Kafka's controller has handled every broker change before a request made after it
        # (one event queue, fed in ZooKeeper's order). A step can read the brokers, then a
        # request created after a broker died: read the brokers again, after the request.
        self._refresh_brokers()
        handle(data, stat.czxid)
        self._handled[kind] = stat.czxid

    def _on_reassignment(self, data: bytes, czxid: int) -> None:
        """ZooKeeper first, then the controller's own state: cut off anywhere before the end,
        nothing of this request is in ``_pending`` yet, so handling it again is clean."""
        try:
            entries = codec.decode_reassignment(data)
        except codec.DecodeError as exc:
            # Kafka logs "Ignoring partition reassignment due to invalid json" and the znode
            # stays until someone deletes it
            self._record_submitted("reassign_submitted", czxid, error=str(exc))
            return
        self._record_submitted("reassign_submitted", czxid, partitions=[
            {"topic": m.topic, "partition": m.partition, "replicas": list(m.replicas)}
            for m in entries])
        targets = {m.tp: m.replicas for m in entries}  # a repeated partition: the last wins
        topics = self._topics(tp.topic for tp in targets)
        queued = self._queued_deletions()
        dropped: dict[TopicPartition, str] = {}
        for tp in targets:
            if self._replicas(topics, tp) is None:
                dropped[tp] = "unknown topic or partition"
            elif tp.topic in queued:
                dropped[tp] = "topic queued for deletion"
        self._remove_from_reassignment(dropped)
        for tp, reason in dropped.items():
            self._record_event("partition_dropped", topic=tp.topic, partition=tp.partition,
                               reason=reason)
        for tp, target in targets.items():
            if tp in dropped:
                continue
            if tp in self._moving:  # re-targeted while moving: Kafka 2.4+ follows the new one
                self._moving[tp].target = target
            else:
                self._pending[tp] = _Move(tp, target)

    def _record_submitted(self, kind: str, czxid: int, **detail: Any) -> None:
        if (kind, czxid) not in self._submitted:
            self._submitted.add((kind, czxid))
            self._record_event(kind, czxid=czxid, **detail)

    def _ready_at(self, move: _Move) -> float:
        """When every target replica is in the ISR (inf: never, or not until a broker starts).

        A replica already in the ISR when the move started is in at once; a new one joins
        ``latency`` after both the move and its broker started. An empty or duplicate target
        never completes: Kafka's controller fails half-way on such an entry and it stays in
        /admin/reassign_partitions forever.
        """
        target = move.target
        if not target or len(set(target)) != len(target):
            return float("inf")
        ready = move.started
        for replica in target:
            since = self._live.get(replica)
            if since is None:
                return float("inf")
            if replica not in move.isr:
                if replica in self._stuck:
                    return float("inf")
                ready = max(ready, since + self._latency, move.started + self._latency)
        return ready

    def _advance_moves(self, now: float) -> bool:
        """Start moves in free slots and finish those whose replicas are all in the ISR; one
        batch of writes per tick. True when some partitions finished."""
        if now < self._last_batch + TICK:
            return False
        done = [m for m in self._moving.values() if self._ready_at(m) <= now]
        for move in done:
            del self._moving[move.tp]
        started: list[tuple[_Move, Replicas]] = []
        try:
            while self._pending and len(self._moving) < self._parallelism:
                batch = list(itertools.islice(self._pending.values(),
                                              self._parallelism - len(self._moving)))
                starting = self._start_moves(batch, now)
                for move in batch:
                    del self._pending[move.tp]
                for move, origin in starting:
                    if self._ready_at(move) <= now:
                        done.append(move)
                    else:
                        self._moving[move.tp] = move
                        started.append((move, origin))
            if done or started:
                self._write_progress(started, done)
                self._last_batch = now
        except BaseException:
            for move in done:  # not finished after all: due again next time
                self._moving[move.tp] = move
            raise
        return bool(done)

    def _start_moves(self, batch: Sequence[_Move], now: float) -> list[tuple[_Move, Replicas]]:
        """The moves with the leader and ISR they start from, each with its replicas before
        the reassignment. A partition deleted meanwhile (only by hand: deletion waits for
        reassignments) is left out."""
        topics = self._topics(m.tp.topic for m in batch)
        states = self._states([m.tp for m in batch])
        out = []
        for move in batch:
            entry = topics.get(move.tp.topic)
            if entry is None or str(move.tp.partition) not in entry[0]["partitions"]:
                continue
            move.state = states.get(move.tp)
            move.isr = frozenset(move.state[0].isr) if move.state else frozenset()
            move.started = now
            out.append((move, _origin(entry[0], move.tp.partition)))
        return out

    def _final_state(self, move: _Move, state: PartitionState) -> PartitionState:
        """Leader stays if it is a live target replica, else the first live target replica
        becomes leader; ISR = target. The epoch moves only when leader or ISR change."""
        leader = state.leader
        if leader not in move.target or not self._alive(leader):
            leader = next(r for r in move.target if self._alive(r))
        if (leader, move.target) == (state.leader, state.isr):
            return state
        return PartitionState(leader, move.target, state.leader_epoch + 1, self._epoch)

    def _write_progress(self, started: Sequence[tuple[_Move, Replicas]],
                        done: Sequence[_Move]) -> None:
        """In Kafka's order: leader and ISR, then the topic znode, then the admin znode - so
        whoever sees a partition leave /admin/reassign_partitions finds it final elsewhere."""
        moves = {m.tp: m for m in done}
        outcome = self._update_states(
            moves, lambda tp, state: self._final_state(moves[tp], state),
            known={m.tp: m.state for m in done if m.state is not None})

        by_topic: dict[str, tuple[dict[int, tuple[Replicas, Replicas]], dict[int, Replicas]]] = {}
        for move, origin in started:
            by_topic.setdefault(move.tp.topic, ({}, {}))[0][move.tp.partition] = (move.target,
                                                                                 origin)
        for move in done:
            by_topic.setdefault(move.tp.topic, ({}, {}))[1][move.tp.partition] = move.target
        self._update_topics(by_topic)

        self._remove_from_reassignment(moves)
        for move in done:
            final = outcome.get(move.tp)
            self._record_event("partition_reassigned", topic=move.tp.topic,
                               partition=move.tp.partition, replicas=list(move.target),
                               leader=None if final is None else (final[1] or final[0]).leader)

    def _update_states(self, tps: Iterable[TopicPartition],
                       decide: Callable[[TopicPartition, PartitionState], PartitionState | None],
                       known: Mapping[TopicPartition, _Versioned] | None = None,
                       ) -> dict[TopicPartition, tuple[PartitionState, PartitionState | None]]:
        """Read, decide and write leader and ISR (old state -> new, None: leave it), each write
        conditional on the version decided from, in transactions of up to a thousand; a state
        someone changed in between is read and decided again. States that do not exist are
        left out of the result. ``known`` are states already read."""
        versions = dict(known or {})
        outcome: dict[TopicPartition, tuple[PartitionState, PartitionState | None]] = {}
        todo = list(tps)
        while todo:
            versions.update(self._states([tp for tp in todo if tp not in versions]))
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
        chunks = list(_chunks(writes, lambda w: len(w[1]) + 60))

        def commit(chunk: list[tuple[TopicPartition, bytes, int]]) -> IAsyncResult:
            tx = self._client.transaction()
            for tp, data, version in chunk:
                tx.set_data(paths.partition_state(*tp), data, version)
            return tx.commit_async()

        retry: list[TopicPartition] = []
        results = _pipelined(self._client, (partial(commit, c) for c in chunks),
                             window=_TX_WINDOW)
        for chunk, result in zip(chunks, results, strict=True):
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

    def _update_topics(self, by_topic: Mapping[str, tuple[Mapping[int, tuple[Replicas, Replicas]],
                                                          Mapping[int, Replicas]]]) -> None:
        """Read-modify-write of each topic znode, conditional on its version; a topic someone
        else changed in between is read and rewritten again."""
        todo = dict(by_topic)
        while todo:
            topics = self._topics(todo)
            names = [t for t in todo if t in topics]
            replies = _pipelined(self._client, (partial(
                self._client.set_async, paths.topic(t),
                _rewrite_topic(topics[t][0], *todo[t]), topics[t][1].version)
                for t in names))
            _expect(replies, [paths.topic(t) for t in names], ok=(BadVersionError, NoNodeError))
            todo = {t: todo[t] for t, r in zip(names, replies, strict=True)
                    if isinstance(r, BadVersionError)}

    def _remove_from_reassignment(self, finished: Collection[TopicPartition]) -> None:
        """Rewrite /admin/reassign_partitions without ``finished`` (re-read first, as Kafka's
        maybeRemoveFromZkReassignment does), and delete it when nothing is left. Never
        re-creates it if someone deleted it meanwhile."""
        if not finished:
            return
        while True:
            try:
                data, stat = self._client.get(paths.REASSIGN_PARTITIONS)
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
                    self._client.set(paths.REASSIGN_PARTITIONS, codec.encode_reassignment(left),
                                     version=stat.version)
                else:
                    self._client.delete(paths.REASSIGN_PARTITIONS, version=stat.version)
                return
            except (BadVersionError, NoNodeError):
                continue

    # --- preferred replica election -----------------------------------------------------------

    def _on_election(self, data: bytes, czxid: int) -> None:
        """Cut off half-way, the next run elects again from the states as they are then: a
        partition already moved counts as "preferred replica is already leader"."""
        try:
            partitions = codec.decode_election(data)
        except codec.DecodeError as exc:
            self._record_submitted("election_submitted", czxid, error=str(exc))
            return  # Kafka fails to parse it and leaves it
        self._record_submitted("election_submitted", czxid, partitions=[
            {"topic": tp.topic, "partition": tp.partition} for tp in partitions])
        unique = list(dict.fromkeys(partitions))
        topics = self._topics(tp.topic for tp in unique)
        queued = self._queued_deletions()
        preferred = {tp: replicas[0] for tp in unique
                     if (replicas := self._replicas(topics, tp)) and tp.topic not in queued}

        def elect(tp: TopicPartition, state: PartitionState) -> PartitionState | None:
            if self._not_electable(preferred[tp], state):
                return None
            return PartitionState(preferred[tp], state.isr, state.leader_epoch + 1, self._epoch)

        outcome = self._update_states(preferred, elect)
        for tp in unique:
            if tp not in preferred:
                reason = ("topic queued for deletion" if self._replicas(topics, tp)
                          else "unknown partition")
            elif tp not in outcome:
                reason = "no leader and ISR state"
            elif (new := outcome[tp][1]) is not None:
                self._record_event("leader_elected", topic=tp.topic, partition=tp.partition,
                                   leader=new.leader, leader_epoch=new.leader_epoch)
                continue
            else:
                reason = self._not_electable(preferred[tp], outcome[tp][0]) or ""
            self._record_event("election_skipped", topic=tp.topic, partition=tp.partition,
                               reason=reason)
        with contextlib.suppress(NoNodeError):
            self._client.delete(paths.PREFERRED_REPLICA_ELECTION)

    def _not_electable(self, preferred: int, state: PartitionState) -> str | None:
        """Why the preferred replica cannot (or need not) become leader; None if it can."""
        if state.leader == preferred:
            return "preferred replica is already leader"
        if not self._alive(preferred):
            return f"preferred replica {preferred} is not alive"
        if preferred not in state.isr:
            return f"preferred replica {preferred} is not in the ISR"
        return None

    # --- topic deletion -----------------------------------------------------------------------

    def _on_deletions(self) -> None:
        """Each marker: removed at once when deletion is disabled (0.10.2+) or the topic is
        unknown; otherwise the topic is deleted ``latency`` after the marker appeared, once it
        is eligible - no partition of it being reassigned and every replica's broker alive."""
        try:
            markers = self._client.get_children(paths.DELETE_TOPICS,
                                                watch=self._watchers[_Kind.DELETION])
        except NoNodeError:
            markers = []
        now = time.monotonic()
        self._deletions = {t: self._deletions.get(t, now) for t in markers}
        waiting = [seen + self._latency for seen in self._deletions.values()
                   if seen + self._latency > now]
        self._next_deletion = min(waiting, default=None)
        if not markers:
            return
        topics = self._topics(markers)
        reassigning = {tp.topic for tp in itertools.chain(self._moving, self._pending)}
        for topic in markers:
            if not self._delete_topic_enable or topic not in topics:
                self._delete_marker(topic)
                self._record_event("deletion_marker_removed", topic=topic, reason=(
                    "delete.topic.enable=false" if not self._delete_topic_enable
                    else "unknown topic"))
                continue
            replicas = {r for rs in topics[topic][0]["partitions"].values() for r in rs}
            if (topic in reassigning or not all(map(self._alive, replicas))
                    or self._deletions[topic] + self._latency > now):
                continue
            _delete_tree(self._client, paths.topic(topic))
            with contextlib.suppress(NoNodeError):
                self._client.delete(paths.topic_config(topic))
            self._delete_marker(topic)
            self._record_event("topic_deleted", topic=topic)

    def _delete_marker(self, topic: str) -> None:
        self._deletions.pop(topic, None)
        with contextlib.suppress(NoNodeError):
            self._client.delete(paths.delete_topic(topic))


# --- the whole sandbox ---------------------------------------------------------------------------


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
    includes the chroot; give it to kadmin as ``-z``.
    """

    def __init__(self, snapshot: ClusterSnapshot, *, port: int = 0, latency: float = 0.05,
                 parallelism: int = 100, zookeeper: str | None = None, chroot: str = "/",
                 record_path: Path | None = None, stuck_brokers: Collection[int] = (),
                 delete_topic_enable: bool = True, data_dir: Path | None = None,
                 broker_version: int = 5, topic_version: int = 2) -> None:
        if not chroot.startswith("/"):
            raise InvalidInput(f"chroot {chroot!r} must start with /")
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
                             topic_version=topic_version)
        self._controller_options: dict[str, Any] = dict(
            latency=latency, parallelism=parallelism, stuck_brokers=stuck_brokers,
            delete_topic_enable=delete_topic_enable, record_path=record_path)
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
