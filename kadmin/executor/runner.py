"""One batch of a reassignment against the live cluster: health gate, throttle, submit, wait,
clear. The journal and the progress accountant stay with the caller, told through callbacks."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kazoo.client import KazooClient

from kadmin import throttles
from kadmin.events import BatchSubmitted, ThrottleCleared, ThrottleSet
from kadmin.executor.common import Emit
from kadmin.executor.journal import Throttle
from kadmin.health_gate import HealthGate
from kadmin.model import Conflict, KadminError, NotAuthorized, PartitionMove
from kadmin.zk import admin, config, reader


@dataclass
class BatchRunner:
    client: KazooClient
    emit: Emit
    throttle: int | None
    gate: HealthGate | None
    deadline: float
    owner: str
    """Whose throttles this run's are (:func:`kadmin.throttles.run_owner`)."""
    submitted: bool = False
    """A batch reached ZooKeeper, or may have (a lost answer can hide a create that was
    applied): from then on the run's files must stay."""

    def submit(self, number: int, count: int, batch: Sequence[PartitionMove],
               batch_bytes: int | None, on_throttle: Callable[[Throttle], None]) -> None:
        """Wait for the gate, set the batch's throttles (``on_throttle`` hears of them before
        the submission) and create the znode; any refusal leaves no throttle of kadmin's."""
        if self.gate is not None:
            self.gate.wait(number, self.deadline, self.emit)
        if self.throttle is not None:
            on_throttle(set_throttles(self.client, batch, self.throttle, number, self.emit,
                                      self.owner))
        submitted_before, self.submitted = self.submitted, True
        try:
            admin.submit_reassignment(self.client, batch)
        except (Conflict, NotAuthorized):  # refused: nothing was written
            self.submitted = submitted_before
            with contextlib.suppress(KadminError):  # the refusal is the news, not the cleanup
                clear_own_throttles(self.client, number, self.emit, self.owner)
            raise
        self.emit(BatchSubmitted(number, count, len(batch), batch_bytes))

    def wait(self, on_update: Callable[[admin.WaitUpdate], None],
             weigh: Callable[[PartitionMove], int] | None) -> tuple[PartitionMove, ...]:
        """Until the controller deletes the znode (``()``) or the deadline (what is left)."""
        return admin.wait_reassignment(self.client, deadline=self.deadline, on_update=on_update,
                                       weigh=weigh)

    def clear(self, number: int) -> None:
        clear_own_throttles(self.client, number, self.emit, self.owner)


def set_throttles(client: KazooClient, batch: Sequence[PartitionMove], rate: int, number: int,
                  emit: Emit, owner: str) -> Throttle:
    """The throttles for the batch (docs/execution.md), merged into the config znodes (kadmin's own
    additions recorded in /kadmin/throttles as ``owner``'s); returns what the journal records."""
    current = reader.read_assignments(client, {m.topic for m in batch})
    need = throttles.batch_throttle(batch, {
        m.tp: current.get(m.topic, {}).get(m.partition, ()) for m in batch})
    value = str(rate)
    edits: dict[str, config.Edit] = {
        throttles.topic_entity(topic): throttles.add_for(owner, keys, {})
        for topic, keys in need.replicas.items()}
    edits.update({throttles.broker_entity(b): throttles.add_for(
        owner, {}, {throttles.LEADER_RATE: value, throttles.FOLLOWER_RATE: value})
        for b in need.brokers})
    config.update(client, edits)
    emit(ThrottleSet(number, rate, len(need.replicas), len(need.brokers)))
    return Throttle(rate, tuple(need.entities()))


def clear_own_throttles(client: KazooClient, number: int, emit: Emit, owner: str) -> None:
    """Take out exactly the throttle entries ``owner`` recorded adding (none: nothing to do);
    what other owners hold stays."""
    entities = config.recorded_entities(client)
    if entities:
        # the others first: one record kadmin cannot read stops the run, naming it
        config.update(client, dict.fromkeys(entities, throttles.remove_for(owner)),
                      skip_unreadable=True)
        emit(ThrottleCleared(number, len(entities)))
