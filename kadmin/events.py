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


@dataclass(frozen=True)
class BatchSubmitted:
    batch: int
    batches: int
    size: int


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


@dataclass(frozen=True)
class BatchDone:
    batch: int
    batches: int
    done: int
    total: int


@dataclass(frozen=True)
class TimedOut:
    remaining: int


@dataclass(frozen=True)
class Finished:
    operation: str
    ok: bool
    failed: int


Event = ExecutionPlanned | BatchSubmitted | BatchResumed | Waiting | BatchDone | TimedOut | Finished


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
