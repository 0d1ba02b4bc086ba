"""Composed schedules against the real ZooKeeper and the simulated controller: the
dry run's prediction is the model of the batches the run then submits; a SIGKILLed run's rerun
continues the same schedule and submits nothing twice; ``reassign --elect``."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest

from kadmin import schedule, synthetic
from kadmin.events import BatchSubmitted, ThrottleCleared, ThrottleSet
from kadmin.executor.journal import plan_fingerprint
from kadmin.executor.runner import BatchRunner
from kadmin.executor.transfers import transfers
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    PartitionMove,
    PartitionState,
    ReassignmentPlan,
    TopicPartition,
)
from kadmin.sandbox import read_events
from kadmin.zk import codec, config, paths
from tests.helpers import kill_when_submitted, write_plan

pytestmark = pytest.mark.zk


def sized_cluster(seed: int = 5) -> ClusterSnapshot:
    """8 brokers, 120 partitions with long-tailed sizes of a few kilobytes (copied in
    milliseconds at the throttles below)."""
    cluster = synthetic.synthetic_cluster(brokers=8, topics=12, partitions=10,
                                          replication_factor=3, seed=seed)
    rng = random.Random(seed)
    sizes = {t: {p: int(2000 * rng.lognormvariate(0, 1.2)) + 1 for p in parts}
             for t, parts in cluster.topics.items()}
    return dataclasses.replace(cluster, sizes=sizes)


def write_sizes(path: Path, cluster: ClusterSnapshot) -> Path:
    """The sizes as ``kafka-log-dirs.sh --describe`` prints them (one log dir of broker 0)."""
    path.write_text(json.dumps({"version": 1, "brokers": [{"broker": 0, "logDirs": [{
        "logDir": "/data", "error": None, "partitions": [
            {"partition": f"{t}-{p}", "size": s, "offsetLag": 0, "isFuture": False}
            for t, parts in cluster.sizes.items() for p, s in parts.items()]}]}]}))
    return path


def submitted_batches(tmp_path: Path) -> list[list[TopicPartition]]:
    return [[TopicPartition(p["topic"], p["partition"]) for p in e.detail["partitions"]]
            for e in read_events(tmp_path / "controller.jsonl") if e.kind == "reassign_submitted"]


def first_json(text: str) -> dict:
    return json.JSONDecoder().raw_decode(text)[0]


@pytest.mark.parametrize(("options", "needs", "line"), [
    (["--throttle", "1MB"], ["--sizes"],
     "no predicted duration: it needs --sizes FILE (the partitions' sizes)"),
    (["--sizes", "sizes.json"], ["--throttle"], "no predicted duration: it needs --throttle RATE"),
    ([], ["--sizes", "--throttle"], "no predicted duration: it needs --sizes FILE (the "
                                    "partitions' sizes) and --throttle RATE"),
])
def test_a_dry_run_without_a_prediction_says_what_it_needs(kadmin, start_sandbox, tmp_path,
                                                           options, needs, line):
    cluster, moves = synthetic.synthetic_moves(sized_cluster(), "random", 20, seed=1)
    box = start_sandbox(cluster, latency=0.0)
    write_plan(tmp_path / "p.json", moves)
    write_sizes(tmp_path / "sizes.json", cluster)
    common = ["reassign", "--plan", "p.json", "-z", box.connect_string, "--dry-run", *options]
    text = kadmin(*common)
    assert text.code == 0, text.err
    plan_line = next(x for x in text.out.splitlines() if x.startswith("plan: "))
    assert plan_line.endswith("; " + line)
    dry = first_json(kadmin(*common, "--json").out)
    assert dry["predicted_seconds"] is None
    assert dry["prediction_needs"] == needs


def test_dry_run_prediction_is_the_model_of_the_batches_submitted(kadmin, start_sandbox,
                                                                  tmp_path):
    cluster, moves = synthetic.synthetic_moves(sized_cluster(), "random", 60, seed=1)
    box = start_sandbox(cluster, latency=0.0)
    write_plan(tmp_path / "p.json", moves)
    write_sizes(tmp_path / "sizes.json", cluster)
    options = ["--plan", "p.json", "-z", box.connect_string, "--sizes", "sizes.json",
               "--throttle", "1MB", "--batch-size", "12", "--max-moves-per-broker", "3"]
    dry = kadmin("reassign", *options, "--dry-run", "--json")
    assert dry.code == 0, dry.err
    predicted = first_json(dry.out)
    assert not (tmp_path / "p.journal.json").exists(), "a dry run writes nothing"
    assert predicted["lower_bound_seconds"] <= predicted["predicted_seconds"]
    text = kadmin("reassign", *options, "--dry-run")
    assert f"{len(predicted['batches'])} batch(es)" in text.out
    assert "at 1 MB/s (lower bound " in text.out and "busiest" in text.out
    assert f"plan: {len(moves)} partition(s) in {len(predicted['batches'])} batch(es)" in text.out
    assert predicted["partitions"] == len(moves)

    run = kadmin("reassign", *options, "--timeout", "120")
    assert run.code == 0, run.err
    batches = submitted_batches(tmp_path)
    by_tp = {m.tp: m for m in moves}
    model = [transfers([by_tp[tp] for tp in batch], cluster, {
        TopicPartition(t, p): s for t, parts in cluster.sizes.items() for p, s in parts.items()})
        for batch in batches]
    assert [b["partitions"] for b in predicted["batches"]] == [len(b) for b in batches]
    assert [b["first"] for b in predicted["batches"]] == [str(min(b)) for b in batches]
    assert [b["predicted_seconds"] for b in predicted["batches"]] == [
        schedule.load_of(ts)[0] / 1e6 for ts in model]
    assert predicted["predicted_seconds"] == sum(schedule.load_of(ts)[0] for ts in model) / 1e6
    flat = [t for ts in model for t in ts]
    assert predicted["lower_bound_seconds"] == schedule.lower_bound(flat) / 1e6
    # per-broker cap held in every batch submitted
    for ts in model:
        received = [r for t in ts for r in t.receivers]
        sent = [t.sender for t in ts if t.receivers]
        assert max(received.count(b) for b in set(received)) <= 3
        assert max(sent.count(b) for b in set(sent)) <= 3


def test_sigkill_mid_run_rerun_continues_the_same_schedule(start_sandbox, kadmin_process,
                                                            tmp_path):
    cluster, moves = synthetic.synthetic_moves(sized_cluster(seed=6), "skew", 80, seed=2)
    box = start_sandbox(cluster, latency=0.05, parallelism=100)
    write_plan(tmp_path / "p.json", moves)
    write_sizes(tmp_path / "sizes.json", cluster)
    env = {"KADMIN_DEBUG": "1"}
    reassign = ["reassign", "--plan", str(tmp_path / "p.json"),
                "-z", box.connect_string, "--sizes", str(tmp_path / "sizes.json"),
                "--batch-size", "10", "--json", "--timeout", "300"]
    kill_when_submitted(kadmin_process(*reassign, env=env, stderr=None), batch=3)
    schedule_before = json.loads((tmp_path / "p.journal.json").read_text())["batches"]

    second = kadmin_process.run(*reassign, env=env, timeout=300)
    assert second.returncode == 0, second.stderr
    events = [json.loads(line) for line in second.stdout.splitlines()]
    assert events[0]["event"] == "execution_planned" and events[0]["resumed"] is True
    # the accounting partitions the plan exactly
    planned = events[0]
    assert planned["unchanged"] + planned["already_done"] <= planned["total"] == len(moves)
    journal = json.loads((tmp_path / "p.journal.json").read_text())
    assert journal["batches"] == schedule_before, "the rerun composed another schedule"
    assert journal["batches_submitted"] == len(schedule_before)
    assert journal["partitions_done"] == len(moves)
    # every batch went out once, in the schedule's order and composition
    expected = [sorted(moves[i].tp for i in batch) for batch in schedule_before]
    assert [sorted(b) for b in submitted_batches(tmp_path)] == expected
    for m in moves:
        assert codec.decode_topic(box.client.get(paths.topic(m.topic))[0])[m.partition] \
            == m.replicas
    # a third run: every partition was submitted by an earlier run, none merely "needs nothing"
    third = kadmin_process.run(*reassign, env=env, timeout=300)
    assert third.returncode == 0, third.stderr
    planned = json.loads(third.stdout.splitlines()[0])
    assert (planned["total"], planned["unchanged"], planned["already_done"],
            planned["batches"]) == (len(moves), 0, len(moves), 0)


def test_reassign_elect_makes_the_new_first_replicas_lead(kadmin, start_sandbox, tmp_path):
    brokers = {b: Broker(b, f"h{b}", 9092) for b in range(4)}
    topics = {"t": {0: (0, 1, 2), 1: (1, 2, 3), 2: (2, 3, 0), 3: (3, 0, 1)}}
    states = {"t": {0: PartitionState(0, (0, 1, 2)), 1: PartitionState(1, (1, 2, 3)),
                    2: PartitionState(2, (2, 3, 0)),
                    3: PartitionState(0, (0, 1))}}  # preferred 3 out of the ISR
    cluster = ClusterSnapshot(brokers, topics, states, controller=0, controller_epoch=1)
    box = start_sandbox(cluster, latency=0.01)
    moves = (PartitionMove("t", 0, (1, 0, 2)),   # reorder: 1 should lead once elected
             PartitionMove("t", 1, (3, 1, 2)),   # reorder: 3 first
             PartitionMove("t", 2, (2, 3, 1)),   # first replica unchanged
             PartitionMove("t", 3, (3, 0, 1)))   # already at target, leader 0, 3 not in ISR
    write_plan(tmp_path / "p.json", moves)
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--elect",
                 "--timeout", "120")
    assert run.code == 1, run.err
    assert "t-3: leader is 0, not preferred replica 3: preferred replica 3 is not in the ISR" \
        in run.err
    leaders = {p: codec.decode_state(box.client.get(paths.partition_state("t", p))[0]).leader
               for p in range(4)}
    assert leaders[0] == 1 and leaders[1] == 3 and leaders[2] == 2
    elected = [e for e in read_events(tmp_path / "controller.jsonl")
               if e.kind == "election_submitted"]
    assert elected, "no election was submitted"
    assert not box.client.exists(paths.PREFERRED_REPLICA_ELECTION)
    without = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "60")
    assert without.code == 0, without.err


def test_batch_runner_alone_throttles_submits_waits_and_clears(start_sandbox):
    cluster = synthetic.synthetic_cluster(brokers=4, topics=1, partitions=4, replication_factor=2,
                                          seed=1)
    box = start_sandbox(cluster, latency=0.01)
    topic = next(iter(cluster.topics))
    batch = [PartitionMove(topic, p, tuple((b + 1) % 4 for b in r))
             for p, r in sorted(cluster.topics[topic].items())]
    events: list[object] = []
    heard: list[object] = []
    runner = BatchRunner(box.client, events.append, throttle=5_000_000, gate=None,
                         deadline=float("inf"), owner="reassign-test")
    runner.submit(1, 1, batch, None, heard.append)
    assert heard and heard[0].rate == 5_000_000 and config.recorded_entities(box.client)
    assert [type(e) for e in events] == [ThrottleSet, BatchSubmitted]
    assert runner.wait(lambda update: None, None) == ()
    runner.clear(1)
    assert not config.recorded_entities(box.client)
    assert isinstance(events[-1], ThrottleCleared)
    for move in batch:
        assert codec.decode_topic(box.client.get(paths.topic(topic))[0])[move.partition] \
            == move.replicas


def test_elect_timing_out_counts_the_same_partitions_everywhere(kadmin, start_sandbox):
    cluster = synthetic.synthetic_cluster(brokers=3, topics=1, partitions=12,
                                          replication_factor=3, seed=2)
    topic = next(iter(cluster.topics))
    states = {topic: {p: PartitionState(r[1], r) for p, r in cluster.topics[topic].items()}}
    box = start_sandbox(dataclasses.replace(cluster, states=states), latency=0.01)
    box.controller.resign()  # nobody processes the election: it times out
    run = kadmin("elect", "--all-topics", "-z", box.connect_string, "--timeout", "1", "--json")
    assert run.code == 1
    timed_out = [json.loads(line) for line in run.out.splitlines()
                 if json.loads(line)["event"] == "timed_out"]
    assert timed_out == [{"event": "timed_out", "remaining": 12}]
    assert "elect: timed out after 1s (--timeout); 12 still in flight" in run.err


def test_an_old_journal_is_refused_before_anything_is_written(kadmin, start_sandbox, tmp_path):
    cluster, moves = synthetic.synthetic_moves(sized_cluster(), "random", 10, seed=3)
    box = start_sandbox(cluster, latency=0.01)
    write_plan(tmp_path / "p.json", moves)
    (tmp_path / "p.journal.json").write_text(json.dumps({
        "version": 1, "plan": "p.json", "plan_sha256": plan_fingerprint(ReassignmentPlan(moves)),
        "submitted_through": {"topic": moves[3].topic, "partition": moves[3].partition}}))
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "60")
    assert run.code == 2, run.err
    assert ("p.journal.json: a journal of an older kadmin (version 1, which knew no composed "
            "schedules); move it away and run again") in run.err
    assert not (tmp_path / "p.rollback.json").exists()
    assert not box.client.exists(paths.REASSIGN_PARTITIONS)
