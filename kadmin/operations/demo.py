"""``kadmin demo``: the main job end to end on the embedded default, as an operator lives it.

A cluster that just got a new broker, started as a sandbox (a real ZooKeeper and kadmin's
simulated controller); a retired topic deleted; a rebalance plan with the fewest moves that
leaves every topic even, written to the plan folder; its validation against the live cluster;
its execution in batches ending in a preferred replica election (``reassign --elect``); and the
status showing the new broker carrying its share.

The story is a sequence of steps, each a heading and the result value an operator would see
(the same values the separate commands return); the caller shows them as they come and renders
the executions' progress events. Nothing here prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from kadmin import executor, files, plans
from kadmin.events import Event
from kadmin.model import DeletionPlan, PlanKind
from kadmin.operations import status as statuses
from kadmin.operations.planfiles import write_plan
from kadmin.operations.rebalance import Rebalanced, rebalanced_plan
from kadmin.operations.sandbox import SyntheticCluster
from kadmin.plans import ValidationReport
from kadmin.requests import RebalanceRequest
from kadmin.sandbox import Sandbox
from kadmin.zk import reader, session


@dataclass(frozen=True)
class DemoRequest:
    synthetic: SyntheticCluster = dataclasses.field(default_factory=SyntheticCluster)
    """The cluster after the new broker joined (its last broker is the new one)."""
    latency: float = 0.15
    """Simulated seconds for one partition to catch up."""
    parallelism: int = 25
    batch_size: int = 60
    out_dir: Path = Path("plans")
    force: bool = False
    """Replace the demo's plan and rollback files if they exist (the file rules of every plan)."""


@dataclass(frozen=True)
class Started:
    """The sandbox is up: where, and which broker just joined."""

    connect_string: str
    new_broker: int
    zookeeper_pid: int | None = None


@dataclass(frozen=True)
class Executed:
    """One execution's end: what ran and whether it succeeded."""

    what: str
    ok: bool


@dataclass(frozen=True)
class Validated:
    report: ValidationReport
    path: Path


StepResult = Started | statuses.Status | Executed | Rebalanced | Validated
Step = tuple[str | None, StepResult]
"""(the step's heading, None to go on under the last one; what it produced)."""
Progress = Callable[[], AbstractContextManager[Callable[[Event], None]]]
"""Opens a progress display for one execution and gives its event sink."""


def run_demo(request: DemoRequest, progress: Progress) -> Iterator[Step]:
    """The story, step by step. Its executions report to ``progress``; the caller learns from
    the :class:`Executed` steps whether each succeeded."""
    plan_path = request.out_dir / "demo-reassign.json"
    for path in (plan_path, files.sibling(plan_path, ".rollback.json")):
        files.check_place(path, request.force)  # before anything starts, not at step 3
    snapshot = request.synthetic.snapshot(empty=1)  # a broker that just joined
    new = max(snapshot.brokers)
    with Sandbox(snapshot, port=0, latency=request.latency,
                 parallelism=request.parallelism) as box:
        yield (f"1. sandbox cluster: broker {new} just joined",
               Started(box.connect_string, new,
                       None if box.server is None else box.server.pid))
        with session.session(session.ZkSettings(connect=box.connect_string)) as client:
            yield None, statuses.of(reader.read_cluster(client))
            settings = executor.ExecutionSettings(batch_size=request.batch_size, timeout=600)

            victim = sorted(snapshot.topics)[-1]
            with progress() as emit:
                deleted = executor.execute_deletion(client, DeletionPlan((victim,)), settings,
                                                    emit)
            yield "2. topics delete (a retired topic)", Executed(f"deleted {victim}", deleted.ok)

            live = reader.read_cluster(client).snapshot
            plan, rollback, figures = rebalanced_plan(live, sorted(live.topics),
                                                      RebalanceRequest(topic_spread=1))
            path = write_plan(plan, PlanKind.REASSIGN, plan_path, request.force, rollback)
            assert path is not None  # a file, not stdout
            yield ("3. plan rebalance --topic-spread 1 (every topic even, fewest moves)",
                   dataclasses.replace(figures, written=path))

            yield ("4. plan validate (against the live cluster)",
                   Validated(plans.validate(plans.plan_document(plan), None, live), path))

            plan_files = executor.PlanFiles(path)
            plan_files.journal.unlink(missing_ok=True)
            with progress() as emit:
                outcome = executor.execute_reassignment(
                    client, plan, plan_files, dataclasses.replace(settings, elect=True), emit)
            yield ("5. reassign --elect (the new preferred leaders take over at the end)",
                   Executed("reassignment and election", outcome.ok))

            yield (f"6. status: broker {new} carries its share, every topic even",
                   statuses.of(reader.read_cluster(client)))
