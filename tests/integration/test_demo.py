"""The demo's story as values (operations.demo): every step yields what the separate command
would, on a real embedded ZooKeeper with the simulated controller, and the story holds."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kadmin.events import Event, Finished
from kadmin.operations import status as statuses
from kadmin.operations.demo import DemoRequest, Executed, Started, Validated, run_demo
from kadmin.operations.rebalance import Rebalanced
from kadmin.operations.sandbox import SyntheticCluster

pytestmark = pytest.mark.zk


def test_the_demo_grows_evens_every_topic_and_hands_leadership_over(tmp_path: Path) -> None:
    events: list[Event] = []

    @contextmanager
    def progress() -> Iterator[Callable[[Event], None]]:
        yield events.append

    request = DemoRequest(SyntheticCluster(brokers=5, racks=0, topics=6, partitions=10),
                          latency=0.001, out_dir=tmp_path)
    steps = list(run_demo(request, progress))
    headings = [h for h, _ in steps if h is not None]
    assert [h.split(".")[0] for h in headings] == ["1", "2", "3", "4", "5", "6"]
    results = [r for _, r in steps]

    started = results[0]
    assert isinstance(started, Started) and started.new_broker == 4
    before = results[1]
    assert isinstance(before, statuses.Status)
    assert {b.broker: b.replicas for b in before.shares.brokers}[4] == 0  # it just joined

    executed = [r for r in results if isinstance(r, Executed)]
    assert [(e.what, e.ok) for e in executed] == [("deleted topic-000005", True),
                                                 ("reassignment and election", True)]
    rebalanced = next(r for r in results if isinstance(r, Rebalanced))
    assert rebalanced.written == tmp_path / "demo-reassign.json" and rebalanced.written.is_file()
    validated = next(r for r in results if isinstance(r, Validated))
    assert validated.report.ok and validated.path == rebalanced.written
    assert [e.operation for e in events if isinstance(e, Finished)] == [
        "delete", "reassign", "elect"]

    after = results[-1]
    assert isinstance(after, statuses.Status)
    assert after.health.topics == 5  # the retired topic is gone
    assert after.shares.replica_spread <= 1 and after.shares.worst_topic_spread <= 1
    assert after.shares.leader_spread <= 1  # led as the plan prefers: the election ran
    assert not after.health.under_replicated and not after.health.offline


@pytest.mark.parametrize("existing", ["demo-reassign.json", "demo-reassign.rollback.json"])
def test_the_demo_replaces_its_plan_files_only_with_force(kadmin, tmp_path: Path,
                                                          existing: str) -> None:
    """The file rules hold for the demo too: an earlier demo's plan (or rollback) is refused by
    name before anything starts, and replaced with --force."""
    plans = tmp_path / "plans"
    plans.mkdir()
    (plans / existing).write_text("an operator's file\n")
    run = kadmin("demo", "--topic-count", "4", "--partitions", "4", "--latency", "0.001")
    assert run.code == 2
    assert run.err == (f"kadmin: error: plans/{existing} already exists (use --force to "
                       "overwrite)\n")
    assert "1. sandbox cluster" not in run.out  # refused before the story starts
    assert [p.name for p in plans.iterdir()] == [existing]
    assert (plans / existing).read_text() == "an operator's file\n"

    run = kadmin("demo", "--topic-count", "4", "--partitions", "4", "--latency", "0.001",
                 "--force")
    assert run.code == 0, run.err
    assert json.loads((plans / "demo-reassign.json").read_text())["version"] == 1


def test_the_demo_with_json_prints_one_line_and_no_story(kadmin, tmp_path: Path) -> None:
    run = kadmin("demo", "--topic-count", "4", "--partitions", "4", "--latency", "0.001",
                 "--json")
    assert run.code == 0, run.err
    (line,) = run.out.splitlines()
    doc = json.loads(line)
    assert doc["connect_string"].startswith("127.0.0.1:")
    assert set(doc["pids"]) == {"kadmin", "zookeeper"} and doc["pids"]["zookeeper"] > 0
    assert doc["stop"].startswith("kill -TERM ")
    assert (tmp_path / "plans" / "demo-reassign.json").is_file()  # the story ran all the same
