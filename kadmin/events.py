"""Progress events of an execution, as small values.

The executor only *emits* these; the CLI renders them as a rich progress bar or as JSON lines.
Keeping progress as data is what lets the executor run (and be tested) without a terminal.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ExecutionPlanned:
    """What this run will do, after validation against the live cluster."""

    operation: str
    total: int
    unchanged: int
    batches: int
    already_done: int = 0
    resumed: bool = False
    """An earlier run of the same plan got this far (journal or our batch found in ZooKeeper)."""
    bytes_total: int | None = None
    """Bytes the plan copies (with partition sizes), already done included."""
    bytes_done: int | None = None
    eta: float | None = None
    """Seconds the schedule's model gives the batches to run (with partition sizes and a
    throttle; None otherwise)."""
    contradicted: tuple[str, ...] = ()
    """Partitions the journal records submitted that are neither at their target nor moving
    (the first 100 of ``contradicted_count``): submitted again."""
    contradicted_count: int = 0


@dataclass(frozen=True)
class BatchSubmitted:
    batch: int
    batches: int
    size: int
    bytes: int | None = None
    """Bytes this batch copies (with partition sizes)."""


@dataclass(frozen=True)
class HealthWait:
    """Before a batch: partitions outside the plan are under-replicated or offline, so the
    batch waits (Cruise Control postpones moves then). ``sample`` names some of them."""

    batch: int
    under_replicated: int
    offline: int
    sample: tuple[str, ...]
    unreadable: int = 0
    """Partitions whose state znode could not be decoded: health unknown, so they hold too."""


@dataclass(frozen=True)
class ThrottleSet:
    """Replication throttles set for a batch: ``rate`` bytes/s on ``brokers`` brokers, throttled
    replica lists on ``topics`` topics."""

    batch: int
    rate: int
    topics: int
    brokers: int


@dataclass(frozen=True)
class ThrottleCleared:
    """The throttle entries kadmin added were removed from ``entities`` config znodes."""

    batch: int
    entities: int


@dataclass(frozen=True)
class BatchResumed:
    """A batch of ours was still in ZooKeeper from an interrupted run: it is waited on, not resubmitted."""

    batch: int
    batches: int
    size: int


@dataclass(frozen=True)
class Waiting:
    """Something changed while waiting: the znode shrank, the controller vanished or came back,
    or the ZooKeeper connection dropped."""

    batch: int
    remaining: int
    done: int
    total: int
    controller: int | None
    connected: bool
    bytes_done: int | None = None
    """With partition sizes: bytes copied (finished partitions) of ``bytes_total`` for the
    plan, and of ``batch_bytes_total`` for this batch; ``rate`` in bytes/s over this run and
    the ETAs in seconds (None until something finished)."""
    bytes_total: int | None = None
    batch_bytes_done: int | None = None
    batch_bytes_total: int | None = None
    rate: float | None = None
    eta: float | None = None
    batch_eta: float | None = None


@dataclass(frozen=True)
class BatchDone:
    batch: int
    batches: int
    done: int
    total: int
    bytes_done: int | None = None
    eta: float | None = None
    """Seconds the schedule's model gives the batches still to run (with partition sizes; at
    the throttle, else at the pace measured so far)."""


@dataclass(frozen=True)
class TimedOut:
    remaining: int


@dataclass(frozen=True)
class Finished:
    operation: str
    ok: bool
    failed: int


Event = (ExecutionPlanned | BatchSubmitted | BatchResumed | HealthWait | ThrottleSet
         | ThrottleCleared | Waiting | BatchDone | TimedOut | Finished)


def rate_and_eta(copied: int, elapsed: float, left: int) -> tuple[float | None, float | None]:
    """Bytes/s over ``elapsed`` seconds that copied ``copied`` bytes, and the seconds ``left``
    bytes take at that rate; None while nothing has been copied yet (no rate to go by)."""
    if copied <= 0 or elapsed <= 0:
        return None, None
    rate = copied / elapsed
    return rate, left / rate


def event_name(event: Event) -> str:
    """``BatchSubmitted`` -> ``batch_submitted``: the ``event`` field of a JSON progress line."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(event).__name__).lower()


def event_to_json(event: Event) -> dict[str, Any]:
    return {"event": event_name(event), **dataclasses.asdict(event)}


@dataclass(frozen=True)
class StageProgress:
    """A Spark job of a planner: its tasks done so far, of all it has (``finished`` at its end)."""

    stage: str
    done: int
    total: int
    finished: bool = False


@dataclass(frozen=True)
class PlannerNote:
    """One line of what a planner found or did (partitions read, moves planned)."""

    text: str


PlannerEvent = StageProgress | PlannerNote
