"""The executor's small parts alone: the typed journal and the progress accountant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kadmin.executor import journal
from kadmin.executor.progress import Accountant
from kadmin.model import InvalidInput, PartitionMove, ReassignmentPlan, TopicPartition

PLAN = ReassignmentPlan(tuple(PartitionMove("t", p, (p % 3, (p + 1) % 3)) for p in range(6)))


def test_journal_round_trip_and_submitted_partitions(tmp_path: Path) -> None:
    path = tmp_path / "p.journal.json"
    written = journal.new(tmp_path / "p.json", PLAN, "kafka:A", "opts", [[4, 1], [0, 2, 3], [5]])
    written.update(path, submitted=2, batches_done=1, in_flight=3,
                   throttle=journal.Throttle(50, ("topics/t", "brokers/0")))
    found = journal.read(path, PLAN)
    assert found is not None
    assert found.batches == ((4, 1), (0, 2, 3), (5,)) and found.submitted == 2
    assert found.throttle == journal.Throttle(50, ("topics/t", "brokers/0"))
    assert found.submitted_partitions(PLAN) == {TopicPartition("t", p) for p in (0, 1, 2, 3, 4)}
    assert journal.submitted(path, PLAN, "kafka:A") == found.submitted_partitions(PLAN)
    # the journal of a run on another cluster submitted nothing on this one
    assert journal.submitted(path, PLAN, "kafka:B") is None
    doc = json.loads(path.read_text())
    assert doc["cluster"] == "kafka:A" and doc["run"] == written.run
    assert doc["version"] == 3 and doc["in_flight"] == 3 and doc["batches_submitted"] == 2


def test_journal_of_another_plan_or_truncated_is_refused_and_a_missing_one_is_none(
        tmp_path: Path) -> None:
    path = tmp_path / "p.journal.json"
    assert journal.read(path, PLAN) is None
    other = ReassignmentPlan(PLAN.moves[:2])
    journal.new(tmp_path / "p.json", other, "kafka:A", "opts", [[0, 1]]).write(path)
    with pytest.raises(InvalidInput, match=r"p\.journal\.json: the journal of another plan.*"
                                           r"move it away and run again"):
        journal.read(path, PLAN)
    journal.new(tmp_path / "p.json", PLAN, "kafka:A", "opts", [[0, 1]]).write(path)
    path.write_bytes(path.read_bytes()[:40])  # cut short by a full disk or a crash
    with pytest.raises(InvalidInput, match=r"p\.journal\.json.*unreadable.*move it away"):
        journal.read(path, PLAN)
    path.write_text("[]")
    with pytest.raises(InvalidInput, match=r"p\.journal\.json: not a kadmin journal"):
        journal.read(path, PLAN)


def test_a_finished_run_is_never_continued_and_another_clusters_unfinished_one_is_refused(
        tmp_path: Path) -> None:
    path = tmp_path / "p.journal.json"
    started = journal.new(tmp_path / "p.json", PLAN, "kafka:A", "o", [[0, 1], [2, 3, 4, 5]])
    unfinished = started.update(path, submitted=1, batches_done=1)
    assert journal.of_run(path, unfinished, "kafka:A") == unfinished
    with pytest.raises(InvalidInput, match=r"p\.journal\.json: the journal of an unfinished run "
                                           r"of this plan on another cluster \(kafka:A; this one "
                                           r"is kafka:B\)"):
        journal.of_run(path, unfinished, "kafka:B")
    finished = unfinished.update(path, submitted=2, batches_done=2)
    assert finished.finished
    assert journal.of_run(path, finished, "kafka:A") is None
    assert journal.of_run(path, finished, "kafka:B") is None
    # a new run is another run: its id differs, a resumed one keeps it
    fresh = journal.new(tmp_path / "p.json", PLAN, "kafka:A", "o", [[0]])
    assert fresh.run != started.run
    assert journal.new(tmp_path / "p.json", PLAN, "kafka:A", "x", [[5]], kept=unfinished
                       ).run == started.run


def test_old_or_damaged_journal_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "p.journal.json"
    sha = journal.plan_fingerprint(PLAN)
    path.write_text(json.dumps({"version": 1, "plan_sha256": sha, "submitted_through": None}))
    with pytest.raises(InvalidInput, match=r"version 1.*move it away"):
        journal.read(path, PLAN)
    path.write_text(json.dumps({"version": 2, "plan_sha256": sha}))
    with pytest.raises(InvalidInput, match=r"version 2, which recorded no cluster.*move it away"):
        journal.read(path, PLAN)
    doc = journal.new(tmp_path / "p.json", PLAN, "kafka:A", "o", [[0, 9]]).to_json()  # 9: not in the plan
    path.write_text(json.dumps(doc))
    with pytest.raises(InvalidInput, match="batch entry 9 is not a partition of the plan"):
        journal.read(path, PLAN)


def test_a_new_schedule_keeps_the_batches_already_submitted(tmp_path: Path) -> None:
    old = journal.new(tmp_path / "p.json", PLAN, "kafka:A", "a", [[0, 1], [2, 3], [4, 5]])
    old = journal.Journal(**{**old.__dict__, "submitted": 1, "batches_done": 1})
    again = journal.new(tmp_path / "p.json", PLAN, "kafka:A", "b", [[3, 2, 4], [5]], kept=old)
    assert again.batches == ((0, 1), (3, 2, 4), (5,)) and again.submitted == 1


def test_accountant_eta_is_the_model_at_the_throttle() -> None:
    # two batches: loads 100 and 300 (bytes on their busiest broker), 400 and 900 bytes copied
    a = Accountant(total=10, done=2, loads=[100, 300], sizes=[400, 900], throttle=10,
                   started=0.0)
    a.begin(0)
    w = a.waiting(1, 4, remaining=2, bytes_left=100, controller=1, connected=True, now=5.0)
    assert (w.done, w.total, w.bytes_done, w.bytes_total) == (4, 10, 300, 1300)
    assert w.batch_eta == pytest.approx(100 * 100 / 400 / 10)  # a quarter of the batch's load
    assert w.eta == pytest.approx(2.5 + 300 / 10)
    assert w.rate == pytest.approx(300 / 5.0)
    a.finish(4)
    a.begin(1, skipped=1)
    assert a.done == 7
    w = a.waiting(2, 3, remaining=3, bytes_left=900, controller=1, connected=True, now=10.0)
    assert w.eta == pytest.approx(30.0) and w.bytes_done == 400


def test_accountant_without_throttle_uses_the_pace_measured_so_far() -> None:
    a = Accountant(total=4, done=0, loads=[100, 200], sizes=[100, 200], throttle=None,
                   started=0.0)
    a.begin(0)
    assert a.waiting(1, 2, 2, 100, 1, True, now=1.0).eta is None  # nothing finished yet
    a.finish(2)
    a.begin(1)
    w = a.waiting(2, 2, 2, 200, 1, True, now=20.0)  # 100 units took 20 s
    assert w.eta == pytest.approx(200 * 20 / 100)


def test_accountant_without_sizes_counts_partitions_only() -> None:
    a = Accountant(total=5, done=1, loads=[3], sizes=None, throttle=None, started=0.0)
    a.begin(0)
    w = a.waiting(1, 4, 1, None, None, False, now=1.0)
    assert (w.done, w.bytes_done, w.eta) == (4, None, None)
    a.finish(4)
    assert a.done == 5 and a.bytes_done is None
