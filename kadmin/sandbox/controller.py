"""The simulated controller: Kafka's controller as far as the admin znodes go, and the worker
thread that runs it.

Threading: kazoo's watch and connection callbacks only *poke* a single worker thread, which does
all the controller's ZooKeeper I/O; public methods that act as the controller (``resign``,
``elect``, ``fail_over``) run as commands on that thread, so its state needs no locks. What it
does with each admin znode lives in its own module (:mod:`.reassignment`, :mod:`.election`,
:mod:`.deletion`); this one elects the controller, keeps brokers registered and runs the loop.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import threading
import time
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError
from kazoo.protocol.states import KazooState, WatchedEvent

from kadmin import files
from kadmin.kafka_version import DEFAULT_SANDBOX, KafkaVersion
from kadmin.model import Broker, OperationFailed, PartitionMove, TopicPartition
from kadmin.sandbox import election
from kadmin.sandbox.clock import ScaledClock
from kadmin.sandbox.cluster import ClusterView, log
from kadmin.sandbox.configs import Configs
from kadmin.sandbox.deletion import Deletions
from kadmin.sandbox.loading import PERSISTENT_PATHS
from kadmin.sandbox.model import WATCHED, ControllerEvent, Kind
from kadmin.sandbox.reassignment import DEFAULT_BANDWIDTH, TICK, Reassignments
from kadmin.sandbox.zkio import CONNECTION_ERRORS, REPLY_TIMEOUT, expect, pipelined
from kadmin.zk import codec, paths

T = TypeVar("T")

_ERROR_BACKOFF = 1.0


class SimulatedController:
    """Kafka's controller, as far as the admin znodes go.

    ``latency`` is how long a new replica takes to join the ISR once its broker is alive;
    ``parallelism`` bounds the partitions moving at once (in znode order); replicas on
    ``stuck_brokers`` never join the ISR. ``record_path`` gets one JSON line per event.

    With ``sizes`` (bytes per partition) a new replica first copies its partition's bytes, at
    ``bandwidth`` bytes/s per broker and direction or at the throttle the brokers read from
    their config znodes. All of this runs on ``clock`` (real time by default; a
    :class:`~kadmin.sandbox.clock.ScaledClock` rehearses hours in seconds).

    A broker is alive while /brokers/ids/<id> exists. The brokers registered when the
    controller starts, and those :meth:`start_broker` registers, are kept registered by this
    controller: after a session expiry it re-creates their ephemeral znodes (as real brokers
    re-register) and re-elects itself, which bumps /controller_epoch.

    ``kafka_version`` is the release whose controller it plays (2.8 by default): how moves in
    flight look in the topic znodes, what a controller move recovers, and what a request for a
    partition already moving does (see :mod:`.reassignment`).
    """

    def __init__(self, client: KazooClient, *, controller_id: int, latency: float = 0.05,
                 parallelism: int = 100, stuck_brokers: Collection[int] = (),
                 delete_topic_enable: bool = True, record_path: Path | None = None,
                 sizes: Mapping[TopicPartition, int] | None = None,
                 bandwidth: float = DEFAULT_BANDWIDTH, clock: ScaledClock | None = None,
                 kafka_version: KafkaVersion = DEFAULT_SANDBOX) -> None:
        if parallelism < 1:
            raise ValueError("parallelism must be at least 1")
        self._client = client
        self._clock = clock or ScaledClock()
        self._controller_id = controller_id
        self.kafka_version = kafka_version
        self._record_path = record_path

        # shared with other threads, under _lock
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pokes: set[Kind] = set()
        self._commands: list[tuple[Callable[[], Any], Future[Any]]] = []
        self._after_step: list[Future[None]] = []
        """Callers of :meth:`catch_up`, told when the next step is done."""
        self._events: list[ControllerEvent] = []
        self._keep: dict[int, bytes] = {}
        self._record: IO[str] | None = None
        self.record_failure: str | None = None
        """Why recording stopped (a full disk, a write error), once it has: the controller
        goes on acting, and the record holds every event up to the failed one, whole."""
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        watchers = {kind: partial(self._on_watch, kind) for kind in WATCHED}

        # the worker thread's own
        self._active = False
        self._resigned = False
        self._handled: dict[Kind, int] = {}
        """Admin znode kind -> czxid of the request this controller has fully handled."""
        self._cluster = ClusterView(client, delete_topic_enable=delete_topic_enable,
                                    record=self._record_event, watchers=watchers,
                                    clock=self._clock)
        self._configs = Configs(self._cluster)
        self._reassignments = Reassignments(self._cluster, self._configs, latency=latency,
                                            parallelism=parallelism, stuck=stuck_brokers,
                                            sizes=sizes, bandwidth=bandwidth,
                                            kafka_version=kafka_version)
        self._deletions = Deletions(self._cluster, latency=latency)

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

    def copies(self) -> dict[Hashable, tuple[float, float, float]]:
        """(bytes copied, size, bytes/s) of every replica copy in flight, keyed by
        (topic-partition, new replica), as of the end of the step in progress."""
        return self._call(self._reassignments.copies)

    def catch_up(self) -> None:
        """Return once the controller has looked at ZooKeeper and its clock as they are now: it
        re-reads every path it watches (as after a reconnect: admin znodes, brokers, configs,
        /controller) and acts on them at the clock's current time; this returns when that step
        is done. A test that asserts the controller did *not* act (a rewrite ignored, a move
        held by a dead broker, nothing done without a controller) waits on this, not on a
        sleep that a slow machine outlasts."""
        future: Future[None] = Future()

        def look() -> None:
            self._client.sync("/")  # our session sees every write made before the call
            self._stopping.wait(self._reassignments.tick_left())  # the step may write
            with self._lock:
                self._after_step.append(future)
            self._poke(*WATCHED)

        self._call(look)
        future.result(timeout=2 * REPLY_TIMEOUT)

    def start(self) -> SimulatedController:
        """Become the controller (adopting /controller if it names ``controller_id``, else
        taking it over with a new epoch) and start acting on the admin znodes."""
        if self._thread is not None:
            return self
        if self._record_path is not None:
            # the rule of every file kadmin writes: a regular file, never a pipe, device, link
            self._record = io.TextIOWrapper(files.open_append(self._record_path), encoding="utf-8")
        for path in PERSISTENT_PATHS:
            self._client.ensure_path(path)
        ids = [int(n) for n in self._client.get_children(paths.BROKER_IDS)
               if n.isascii() and n.isdigit()]
        registrations = pipelined(self._client, (
            partial(self._client.get_async, paths.broker(b)) for b in ids))
        with self._lock:
            self._keep.update((b, reply[0]) for b, reply in zip(ids, registrations, strict=True)
                              if not isinstance(reply, Exception))
        self._client.add_listener(self._on_state)
        self._clock.on_advance(self._wake.set)
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
        thread.join(timeout=REPLY_TIMEOUT)
        self._client.remove_listener(self._on_state)
        with self._lock:
            record, self._record = self._record, None
            abandoned, self._after_step = self._after_step, []
        if record is not None:
            record.close()
        for future in abandoned:
            future.set_exception(RuntimeError("the simulated controller stopped"))

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

    def leave_stale(self, moves: Sequence[PartitionMove]) -> None:
        """A stale /admin/reassign_partitions (KAFKA-9478): the znode holds ``moves`` (written
        over any there) and this controller never acts on it - it missed the request. Before
        2.4 the moves also stay in its memory, so it writes them back into every admin znode it
        writes. A controller move ends it: the new controller reads the znode afresh."""
        def leave() -> None:
            data = codec.encode_reassignment(moves)
            try:
                czxid = self._client.set(paths.REASSIGN_PARTITIONS, data).czxid
            except NoNodeError:
                czxid = self._client.create(paths.REASSIGN_PARTITIONS, data,
                                            include_data=True)[1].czxid
            self._handled[Kind.REASSIGN] = czxid
            self._cluster.own_request("reassign_submitted", czxid)
            self._reassignments.leave_stale(moves)

        self._call(leave)

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

    def _poke(self, *kinds: Kind) -> None:
        with self._lock:
            self._pokes.update(kinds)
        self._wake.set()

    def _on_watch(self, kind: Kind, _event: WatchedEvent) -> None:
        self._poke(kind)

    def _on_state(self, state: str) -> None:
        """Kazoo's connection listener (its own thread: must not block). kazoo drops every
        watch when the connection drops, so a reconnect means: read everything again."""
        if state == KazooState.LOST:
            self._poke(Kind.SESSION)
        elif state == KazooState.CONNECTED:
            self._poke(*WATCHED)

    def _call(self, command: Callable[[], T]) -> T:
        if self._thread is None:
            raise RuntimeError("the simulated controller is not running: call start() first")
        future: Future[T] = Future()
        with self._lock:
            self._commands.append((command, future))
        self._wake.set()
        return future.result(timeout=2 * REPLY_TIMEOUT)

    def _record_event(self, kind: str, **detail: Any) -> None:
        event = ControllerEvent(kind, detail, time.time())
        with self._lock:
            self._events.append(event)
            if self._record is not None:
                self._append(json.dumps(dataclasses.asdict(event), separators=(",", ":")) + "\n")

    def _append(self, line: str) -> None:
        """One line of the record (the lock held). A write that fails (ENOSPC, EFBIG, EIO)
        stops the recording, once: the part of the line that reached the file is cut off
        again, so the record ends with a whole line, and ``record_failure`` says why."""
        record = self._record
        assert record is not None
        try:
            start: int | None = os.fstat(record.fileno()).st_size  # every line is flushed
        except OSError:
            start = None
        try:
            record.write(line)
            record.flush()
        except OSError as exc:
            self._record = None
            self.record_failure = (f"recording stopped: cannot append to {self._record_path}: "
                                   f"{exc.strerror or exc}; the record holds every action up "
                                   "to this one")
            log.info("sandbox controller: %s", self.record_failure)  # the CLI says it once
            with contextlib.suppress(OSError, ValueError):
                record.close()  # its flush fails again: what it holds is dropped
            if start is not None and self._record_path is not None:
                with contextlib.suppress(OSError):
                    os.truncate(self._record_path, start)

    # --- the worker -------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping.is_set():
            # while kazoo reconnects nothing can be done: sleep until its listener pokes
            connected = self._client.connected
            self._wake.wait(self._sleep_time() if connected else None)
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
                waiting, self._after_step = self._after_step, []
            try:
                self._step(pokes)
            except CONNECTION_ERRORS as exc:
                log.info("sandbox controller: %s, retrying after reconnect", type(exc).__name__)
                self._poke(*pokes)
                self._wait_again(waiting)
                self._stopping.wait(TICK)
            except Exception:
                log.exception("sandbox controller: unexpected error, retrying")
                self._poke(*pokes, *WATCHED)
                self._wait_again(waiting)
                self._stopping.wait(_ERROR_BACKOFF)
            else:
                for future in waiting:
                    future.set_result(None)

    def _wait_again(self, waiting: list[Future[None]]) -> None:
        """A step cut off: its :meth:`catch_up` callers wait for the next one."""
        with self._lock:
            self._after_step[:0] = waiting

    def _sleep_time(self) -> float | None:
        """Real seconds until the next partition or deletion falls due (None: until poked, or
        until a manual clock moves)."""
        if not self._active:
            return None
        now = self._clock.now()
        due = self._reassignments.due(now)
        if self._deletions.next_due is not None:
            due.append(self._deletions.next_due)
        if not due:
            return None
        wait = self._clock.real_seconds(min(due) - now)
        return None if wait is None else max(wait, self._reassignments.tick_left())

    def _step(self, pokes: set[Kind]) -> None:
        if Kind.SESSION in pokes:
            self._reregister_brokers()
        if Kind.BROKERS in pokes:
            self._cluster.refresh_brokers()
        if Kind.CONTROLLER in pokes or Kind.SESSION in pokes:
            self._check_controller()
        if not self._active:
            return
        if Kind.CONFIG in pokes and self._configs.on_changes():
            self._reassignments.retune()  # first: a batch submitted after it sees the throttle
        if Kind.REASSIGN in pokes:
            self._on_admin_znode(paths.REASSIGN_PARTITIONS, Kind.REASSIGN,
                                 self._reassignments.on_request)
        if Kind.ELECTION in pokes:
            self._on_admin_znode(paths.PREFERRED_REPLICA_ELECTION, Kind.ELECTION,
                                 partial(election.on_request, self._cluster))
        now = self._clock.now()
        finished = self._reassignments.advance(now)
        next_deletion = self._deletions.next_due
        if (pokes & {Kind.DELETION, Kind.BROKERS} or finished
                or (next_deletion is not None and next_deletion <= now)):
            self._deletions.on_markers(self._reassignments.topics())

    def _on_admin_znode(self, path: str, kind: Kind, handle: Callable[[bytes, int], None]
                        ) -> None:
        """Kafka 2.4+ acts when an admin znode is *created*: ``handle(data, czxid)`` runs once
        per created znode, and a rewrite by anyone else is ignored (its new entries wait for
        the next controller), as in KafkaController.

        The znode counts as handled only once ``handle`` has returned. A handling step cut off
        half-way (the connection lost under it, any error) raises out of here, the worker pokes
        ``kind`` again and the re-read runs ``handle`` once more; marking the czxid seen before
        handling would skip it then, and the request would stay in its znode forever."""
        znode = self._cluster.read_watched(path, kind)
        if znode is None or znode[1].czxid == self._handled.get(kind):
            return
        data, stat = znode
        # Kafka's controller has handled every broker change before a request made after it
        # (one event queue, fed in ZooKeeper's order). A step can read the brokers, then a
        # request created after a broker died: read the brokers again, after the request.
        self._cluster.refresh_brokers()
        handle(data, stat.czxid)
        self._handled[kind] = stat.czxid

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
            self._cluster.epoch = codec.decode_controller_epoch(
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
        self._cluster.epoch = epoch
        self._controller_id = controller_id
        self._record_event("failover", controller=controller_id, epoch=epoch)
        self._become_active()

    def _become_active(self) -> None:
        """Start from what ZooKeeper says, as Kafka's onControllerFailover does: whatever was
        in flight is re-read from the admin znodes and resumes."""
        self._active = True
        self._resigned = False
        self._reassignments.reset()
        self._deletions.reset()
        self._handled.clear()
        self._client.exists(paths.CONTROLLER, watch=self._cluster.watchers[Kind.CONTROLLER])
        self._cluster.refresh_brokers()
        self._configs.load_all()
        self._reassignments.resume_from_topics()  # 2.4+ only; the admin znode, read next, wins
        self._poke(Kind.REASSIGN, Kind.ELECTION, Kind.DELETION)

    def _resign(self) -> None:
        self._active = False
        self._resigned = True
        self._reassignments.reset()
        self._deletions.reset()
        with contextlib.suppress(NoNodeError):
            self._client.delete(paths.CONTROLLER)
        self._record_event("failover", controller=None, epoch=self._cluster.epoch)

    def _check_controller(self) -> None:
        """/controller vanished (an operator's ``rmr /controller``, or our session expired):
        Kafka's brokers race to re-create it, so this controller elects itself again. If it
        names another broker now, this controller is no longer active."""
        watch = self._cluster.watchers[Kind.CONTROLLER]
        try:
            data = self._client.get(paths.CONTROLLER, watch=watch)[0]
        except NoNodeError:
            if self._client.exists(paths.CONTROLLER, watch=watch):
                self._poke(Kind.CONTROLLER)
            elif not self._resigned and self._thread is not None:
                self._elect(self._controller_id)
            return
        try:
            holder: int | None = codec.decode_controller(data)
        except codec.DecodeError:
            holder = None
        if holder != self._controller_id and self._active:
            self._active = False
            self._record_event("failover", controller=holder, epoch=self._cluster.epoch)

    def _reregister_brokers(self) -> None:
        with self._lock:
            keep = dict(self._keep)
        expect(pipelined(self._client, (
            partial(self._client.create_async, paths.broker(b), data, ephemeral=True)
            for b, data in keep.items())), [paths.broker(b) for b in keep], ok=(NodeExistsError,))
