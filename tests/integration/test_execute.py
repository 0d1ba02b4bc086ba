"""kadmin's main job against a real ZooKeeper and the simulated controller: `reassign`,
`verify`, `elect`, `topics delete`, `status`, `cluster snapshot`, through the console entry
point. Every test runs in its own chroot (the chroot is part of every connect string)."""

from __future__ import annotations

import io
import json
import signal
import time
from collections import Counter

import pytest
from kazoo.client import KazooClient

from kadmin.model import Broker, ClusterSnapshot, PartitionState
from kadmin.sandbox import Sandbox, read_events
from kadmin.synthetic import synthetic_cluster
from kadmin.zk import codec, paths
from tests.helpers import kill_when_submitted, write_plan

pytestmark = pytest.mark.zk


def topic_assignment(client: KazooClient, topic: str) -> dict[int, tuple[int, ...]]:
    data, _ = client.get(paths.topic(topic))
    return codec.decode_topic(data)


def small_cluster() -> ClusterSnapshot:
    return synthetic_cluster(brokers=6, topics=4, partitions=6, replication_factor=3, racks=3,
                             seed=3)


def test_reassign_small_plan_end_to_end(kadmin, start_sandbox, tmp_path):
    box = start_sandbox(small_cluster(), latency=0.01)
    zk = box.connect_string
    run = kadmin("plan", "generate", "-z", zk, "--all-topics", "--strategy", "kafka",
                 "--out", "plan.json")
    assert run.code == 0, run.err
    plan = json.loads((tmp_path / "plan.json").read_text())["partitions"]
    assert plan, "the synthetic cluster is unbalanced: the plan must move something"
    before = {t: topic_assignment(box.client, t) for t in box.snapshot.topics}

    run = kadmin("reassign", "--plan", "plan.json", "-z", zk, "--batch-size", "7",
                 "--timeout", "120")
    assert run.code == 0, run.err
    assert f"reassign: all {len(plan)} done" in run.out
    for entry in plan:
        assert topic_assignment(box.client, entry["topic"])[entry["partition"]] == tuple(
            entry["replicas"])
    assert not box.client.exists(paths.REASSIGN_PARTITIONS)
    # the rollback file holds the assignment from before the run, of the same partitions
    rollback = json.loads((tmp_path / "plan.rollback.json").read_text())["partitions"]
    assert {(e["topic"], e["partition"]) for e in rollback} == {
        (e["topic"], e["partition"]) for e in plan}
    assert all(tuple(e["replicas"]) == before[e["topic"]][e["partition"]] for e in rollback)
    journal = json.loads((tmp_path / "plan.journal.json").read_text())
    assert journal["partitions_done"] == len(plan) and journal["in_flight"] == 0
    # batches of at most 7 partitions reached the controller, one znode each
    submitted = [e for e in read_events(tmp_path / "controller.jsonl")
                 if e.kind == "reassign_submitted"]
    assert len(submitted) == -(-len(plan) // 7)

    verify = kadmin("verify", "--plan", "plan.json", "-z", zk, "--json")
    assert verify.code == 0
    assert len(json.loads(verify.out)["complete"]) == len(plan)
    # running the finished plan again is a no-op that succeeds
    again = kadmin("reassign", "--plan", "plan.json", "-z", zk)
    assert again.code == 0, again.err


def test_reassign_json_progress_events(kadmin, start_sandbox, tmp_path):
    box = start_sandbox(small_cluster(), latency=0.01)
    write_plan(tmp_path / "p.json", {("topic-000000", 0): [5, 4, 3], ("topic-000000", 1): [4, 5, 3]})
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--json",
                 "--batch-size", "1")
    assert run.code == 0, run.err
    events = [json.loads(line) for line in run.out.splitlines() if line.startswith("{")]
    names = [e["event"] for e in events]
    assert names[0] == "execution_planned" and names[-1] == "finished"
    assert names.count("batch_submitted") == 2 and names.count("batch_done") == 2
    assert events[-1]["ok"] is True


@pytest.mark.parametrize("interval", [60.0, 0.0])
def test_reassign_without_a_terminal_says_each_batch_on_stderr(kadmin, start_sandbox, tmp_path,
                                                               monkeypatch, interval):
    """Without a terminal (stderr captured here) the progress bar shows nothing until the end:
    a line per batch submitted and done, and while waiting one per interval (a minute; 0 here
    makes every wait event say so)."""
    monkeypatch.setattr("kadmin.cli.render.execution.PLAIN_INTERVAL", interval)
    box = start_sandbox(small_cluster(), latency=0.05)
    write_plan(tmp_path / "p.json", {("topic-000000", 0): [5, 4, 3], ("topic-000000", 1): [4, 5, 3]})
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--batch-size", "1",
                 "--timeout", "120")
    assert run.code == 0, run.err
    lines = run.err.splitlines()
    batch_lines = [x for x in lines if x.startswith("batch ") and ("submitted" in x or
                                                                    x.endswith("done"))]
    assert batch_lines == ["batch 1/2 submitted (1)", "batch 1/2 done",
                           "batch 2/2 submitted (1)", "batch 2/2 done"]
    waits = [x for x in lines if " left, waiting" in x]
    assert (len(waits) >= 2) if interval == 0 else (len(waits) <= 1)


def test_a_resumed_reassign_elect_elects_only_the_leaders_the_plan_changes(kadmin, start_sandbox,
                                                                          tmp_path):
    """A run that finds the plan already applied (an earlier run moved it) elects what a fresh
    run would: the partitions whose first replica the plan changes, known from the rollback
    file the first run wrote."""
    box = start_sandbox(small_cluster(), latency=0.01)
    first, second = (box.snapshot.topics["topic-000000"][p] for p in (0, 1))
    spare = next(b for b in box.snapshot.brokers if b not in second)
    changes_leader = [x for x in first[1:]] + [first[0]]  # the same replicas, another first
    keeps_leader = [second[0], second[1], spare]  # a new follower, the same first replica
    write_plan(tmp_path / "p.json", {("topic-000000", 0): changes_leader,
                                     ("topic-000000", 1): keeps_leader})
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "120")
    assert run.code == 0, run.err

    again = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--elect", "--json",
                   "--timeout", "120")
    assert again.code == 0, again.err
    events = [json.loads(line) for line in again.out.splitlines()]
    elections = [e for e in events if e["event"] == "execution_planned" and e["operation"] == "elect"]
    assert [e["total"] for e in elections] == [1]


def test_reassign_dry_run_writes_nothing(kadmin, start_sandbox, tmp_path):
    box = start_sandbox(small_cluster())
    write_plan(tmp_path / "p.json", {("topic-000001", 0): [0, 1, 2]})
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--dry-run")
    assert run.code == 0, run.err
    assert "batch" in run.out and "replicas before" in run.out
    assert not box.client.exists(paths.REASSIGN_PARTITIONS)
    assert {p.name for p in tmp_path.iterdir()} - {"controller.jsonl"} == {"p.json"}


def test_reassign_dry_run_lists_a_hundred_batches_and_counts_the_rest(kadmin, start_sandbox,
                                                                     tmp_path):
    snapshot = synthetic_cluster(brokers=6, topics=3, partitions=50, replication_factor=3, seed=4)
    box = start_sandbox(snapshot)
    write_plan(tmp_path / "p.json", {(t, p): [(r + 1) % 6 for r in replicas]
                                     for t, a in snapshot.topics.items()
                                     for p, replicas in a.items()})
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--dry-run",
                 "--batch-size", "1")
    assert run.code == 0, run.err
    assert "150 batch(es)" in run.out and "(and 50 more)" in run.out
    assert "│ 100 " in run.out and "│ 101 " not in run.out


def test_reassign_invalid_against_cluster_exits_2_and_writes_nothing(kadmin, start_sandbox,
                                                                     tmp_path):
    box = start_sandbox(small_cluster())
    write_plan(tmp_path / "p.json", {("topic-000001", 0): [0, 1, 77], ("nope", 0): [0, 1, 2]})
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string)
    assert run.code == 2
    assert "77" in run.err and "nope" in run.err
    assert not box.client.exists(paths.REASSIGN_PARTITIONS)
    assert not (tmp_path / "p.rollback.json").exists()


def test_reassign_conflict_exits_3_and_leaves_the_znode(kadmin, start_sandbox, tmp_path):
    box = start_sandbox(small_cluster())
    box.controller.stop()  # the other operation stays in flight
    foreign = b'{"version":1,"partitions":[{"topic":"topic-000002","partition":0,"replicas":[5,0,1]}]}'
    box.client.create(paths.REASSIGN_PARTITIONS, foreign)
    write_plan(tmp_path / "p.json", {("topic-000001", 0): [0, 1, 2]})
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string)
    assert run.code == 3
    assert "already in progress" in run.err and "topic-000002-0" in run.err
    assert box.client.get(paths.REASSIGN_PARTITIONS)[0] == foreign
    assert not (tmp_path / "p.rollback.json").exists()


def test_reassign_timeout_names_stuck_partitions(kadmin, start_sandbox, tmp_path):
    snapshot = small_cluster()
    box = start_sandbox(snapshot, stuck_brokers={5}, latency=0.01)
    current = snapshot.topics["topic-000003"][0]
    target = [*[b for b in current if b != 5][:2], 5]
    write_plan(tmp_path / "p.json", {("topic-000003", 0): target})
    started = time.monotonic()
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "3")
    assert run.code == 1
    assert time.monotonic() - started < 30
    assert "timed out" in run.err
    assert f"topic-000003-0: target {target}, not yet in ISR: [5]" in run.err
    assert box.client.exists(paths.REASSIGN_PARTITIONS), "kadmin must leave the znode alone"


def test_reassign_thirty_thousand_partitions_in_many_batches(kadmin, start_sandbox, tmp_path):
    snapshot = synthetic_cluster(brokers=12, topics=330, partitions=100, replication_factor=3,
                                 seed=5)
    box = start_sandbox(snapshot, latency=0.0, parallelism=5000)
    zk = box.connect_string
    assert kadmin("plan", "generate", "-z", zk, "--all-topics", "--out", "big.json").code == 0
    plan = json.loads((tmp_path / "big.json").read_text())["partitions"]
    assert len(plan) >= 30_000
    run = kadmin("reassign", "--plan", "big.json", "-z", zk, "--timeout", "900")
    assert run.code == 0, run.err[-2000:]
    submitted = [e for e in read_events(tmp_path / "controller.jsonl")
                 if e.kind == "reassign_submitted"]
    assert len(submitted) == -(-len(plan) // 1000)
    expected = {(e["topic"], e["partition"]): tuple(e["replicas"]) for e in plan}
    for topic in list(snapshot.topics)[::37]:
        live = topic_assignment(box.client, topic)
        for partition, replicas in live.items():
            assert expected.get((topic, partition), snapshot.topics[topic][partition]) == replicas
    leaders = Counter(r[0] for t in snapshot.topics
                      for r in topic_assignment(box.client, t).values())
    assert max(leaders.values()) - min(leaders.values()) <= 1


def test_reassign_resumes_after_sigkill_without_resubmitting(start_sandbox, tmp_path,
                                                             kadmin_process):
    snapshot = synthetic_cluster(brokers=6, topics=10, partitions=30, replication_factor=3, seed=7)
    box = start_sandbox(snapshot, latency=0.05, parallelism=10)
    zk = box.connect_string
    env = {"KADMIN_DEBUG": "1"}
    generated = kadmin_process.run("plan", "generate", "-z", zk, "--all-topics", "--out",
                                   str(tmp_path / "p.json"), env=env)
    assert generated.returncode == 0, generated.stderr
    plan = json.loads((tmp_path / "p.json").read_text())["partitions"]
    reassign = ["reassign", "--plan", str(tmp_path / "p.json"), "-z", zk,
                "--batch-size", "40", "--json", "--timeout", "300"]
    # killed in the middle of its third batch
    kill_when_submitted(kadmin_process(*reassign, env=env, stderr=None), batch=3)

    second = kadmin_process.run(*reassign, env=env, timeout=300)
    assert second.returncode == 0, second.stderr
    events = [json.loads(line) for line in second.stdout.splitlines()]
    assert events[0]["event"] == "execution_planned" and events[0]["resumed"] is True
    for entry in plan:
        assert topic_assignment(box.client, entry["topic"])[entry["partition"]] == tuple(
            entry["replicas"])
    submitted = [tuple((p["topic"], p["partition"]) for p in e.detail["partitions"])
                 for e in read_events(tmp_path / "controller.jsonl")
                 if e.kind == "reassign_submitted"]
    every = [tp for batch in submitted for tp in batch]
    assert len(every) == len(set(every)) == len(plan), "a partition was submitted twice"


def sigint_as_a_terminal_sends_it() -> None:
    """A child's SIGINT back to the default: a suite started in the background by a
    non-interactive shell (``bash -c 'pytest' &``, nohup) has SIGINT ignored, every child inherits
    that, and Python then installs no KeyboardInterrupt handler: the Ctrl-C would be lost."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_says_how_to_resume_and_the_rerun_does(start_sandbox, tmp_path, kadmin_process):
    snapshot = synthetic_cluster(brokers=6, topics=2, partitions=10, replication_factor=3, seed=3)
    box = start_sandbox(snapshot, latency=0.01, parallelism=100)
    # no controller until the interrupt has landed: the first batch stays in ZooKeeper however
    # late this test reads the event (a latency was only a head start, lost on a loaded machine)
    box.controller.resign()
    target = {(t, p): [(r + 1) % 6 for r in replicas]
              for t, a in snapshot.topics.items() for p, replicas in a.items()}
    reassign = ["reassign", "--plan", str(write_plan(tmp_path / "p.json", target)), "-z",
                box.connect_string, "--batch-size", "10", "--json", "--timeout", "120"]
    first = kadmin_process(*reassign, preexec_fn=sigint_as_a_terminal_sends_it)
    assert first.stdout is not None
    for line in first.stdout:
        if json.loads(line)["event"] == "batch_submitted":
            first.send_signal(signal.SIGINT)
            break
    out, err = first.communicate(timeout=60)

    assert first.returncode == 130, (out, err)
    assert err.splitlines() == ["kadmin: interrupted; run the same command again to resume"]
    assert box.client.exists(paths.REASSIGN_PARTITIONS), "the batch is left for the controller"
    box.controller.elect(box.controller_id)
    second = kadmin_process.run(*reassign, timeout=120)
    assert second.returncode == 0, second.stderr
    for (topic, partition), replicas in target.items():
        assert topic_assignment(box.client, topic)[partition] == tuple(replicas)
    submitted = [(p["topic"], p["partition"]) for e in read_events(tmp_path / "controller.jsonl")
                 if e.kind == "reassign_submitted" for p in e.detail["partitions"]]
    assert sorted(submitted) == sorted(target), "the rerun submitted a partition again"


def test_reassign_survives_zookeeper_restart(own_zk_server, tmp_path, kadmin_process):
    snapshot = synthetic_cluster(brokers=6, topics=5, partitions=20, replication_factor=3, seed=9)
    with Sandbox(snapshot, zookeeper=own_zk_server.connect_string, chroot="/kafka",
                 latency=0.2, parallelism=5) as box:
        zk = box.connect_string
        generated = kadmin_process.run("plan", "generate", "-z", zk, "--all-topics", "--out",
                                       str(tmp_path / "p.json"))
        assert generated.returncode == 0, generated.stderr
        plan = json.loads((tmp_path / "p.json").read_text())["partitions"]
        run = kadmin_process("reassign", "--plan", str(tmp_path / "p.json"), "-z", zk, "--json",
                             "--timeout", "300", "--batch-size", "30")
        assert run.stdout is not None
        for line in run.stdout:
            if json.loads(line)["event"] == "batch_submitted":
                break
        own_zk_server.restart(down_for=2.0)
        _out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        for entry in plan:
            assert topic_assignment(box.client, entry["topic"])[entry["partition"]] == tuple(
                entry["replicas"])


def test_verify_a_plan_never_submitted(kadmin, start_sandbox, tmp_path):
    """More cases in test_verify.py."""
    snapshot = small_cluster()
    box = start_sandbox(snapshot, stuck_brokers={5})
    current = snapshot.topics["topic-000000"][0]
    write_plan(tmp_path / "p.json", {("topic-000000", 0): list(current),
                                     ("topic-000000", 1): [0, 1, 2]})
    run = kadmin("verify", "--plan", "p.json", "-z", box.connect_string, "--json")
    assert run.code == 1, (run.out, run.err)  # unfinished, like failed, exits 1
    assert run.err.splitlines()[-1].startswith(
        "kadmin: error: the plan is not complete yet: 0 in progress, 1 not started")
    report = json.loads(run.out)
    assert report["complete"] == ["topic-000000-0"]
    assert report["not_started"] == ["topic-000000-1"] and report["failed"] == []


def test_elect_moves_leaders_and_explains_the_rest(kadmin, zk, zk_connect):
    brokers = {b: Broker(b, f"h{b}", 9092) for b in range(3)}
    topics = {"t": {0: (0, 1, 2), 1: (1, 2, 0), 2: (2, 0, 1)}}
    states = {"t": {0: PartitionState(1, (0, 1, 2)),       # preferred 0 in ISR: elected
                    1: PartitionState(2, (2, 0)),          # preferred 1 not in ISR: skipped
                    2: PartitionState(2, (2, 0, 1))}}      # already preferred
    snapshot = ClusterSnapshot(brokers, topics, states, controller=0, controller_epoch=1)
    hosts, chroot = zk_connect.split("/", 1)
    with Sandbox(snapshot, zookeeper=hosts, chroot="/" + chroot, latency=0.01) as box:
        run = kadmin("elect", "--all-topics", "-z", box.connect_string, "--timeout", "60")
        assert run.code == 1
        assert "t-1: leader is 2, not preferred replica 1" in run.err
        assert "not in the ISR" in run.err
        state0 = codec.decode_state(box.client.get(paths.partition_state("t", 0))[0])
        assert state0.leader == 0 and state0.leader_epoch == 1
        assert not box.client.exists(paths.PREFERRED_REPLICA_ELECTION)


def test_elect_conflict_exits_3(kadmin, start_sandbox):
    box = start_sandbox(small_cluster())
    box.controller.stop()
    box.client.create(paths.PREFERRED_REPLICA_ELECTION,
                      b'{"version":1,"partitions":[{"topic":"topic-000000","partition":0}]}')
    run = kadmin("elect", "--topics", "topic-000001", "-z", box.connect_string)
    assert run.code == 3 and "preferred_replica_election" in run.err


def test_topics_delete(kadmin, start_sandbox):
    box = start_sandbox(small_cluster())
    zk = box.connect_string
    run = kadmin("topics", "delete", "topic-000001", "-z", zk, "--yes", "--timeout", "60")
    assert run.code == 0, run.err
    assert not box.client.exists(paths.topic("topic-000001"))
    assert not box.client.exists(paths.delete_topic("topic-000001"))
    assert box.client.exists(paths.topic("topic-000002"))

    unknown = kadmin("topics", "delete", "ghost", "-z", zk, "--yes")
    assert unknown.code == 2 and "ghost" in unknown.err
    assert not box.client.exists(paths.delete_topic("ghost"))


def test_topics_delete_splits_the_markers_over_several_transactions(kadmin, start_sandbox):
    snapshot = synthetic_cluster(brokers=3, topics=40, partitions=1, replication_factor=1, seed=2)
    box = start_sandbox(snapshot)
    victims = sorted(snapshot.topics)[:30]  # ~15 markers per 2,000 bytes with the chroot

    run = kadmin("topics", "delete", *victims, "-z", box.connect_string, "--yes", "--json",
                 "--max-znode-bytes", "2000", "--timeout", "60")

    assert run.code == 0, run.err
    events = [json.loads(line) for line in run.out.splitlines()]
    submitted = [e for e in events if e["event"] == "batch_submitted"]
    assert len(submitted) > 1 and sum(e["size"] for e in submitted) == 30
    assert all(e["batches"] == len(submitted) for e in submitted)
    assert events[-1] == {"event": "finished", "operation": "delete", "ok": True, "failed": 0}
    left = sorted(box.client.get_children(paths.BROKER_TOPICS))
    assert left == sorted(snapshot.topics)[30:]
    assert box.client.get_children(paths.DELETE_TOPICS) == []


def test_topics_delete_without_confirmation_writes_nothing(kadmin, start_sandbox, monkeypatch):
    box = start_sandbox(small_cluster())
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    run = kadmin("topics", "delete", "topic-000002", "-z", box.connect_string)
    assert run.code != 0
    assert box.client.exists(paths.topic("topic-000002"))
    markers = box.client.get_children(paths.DELETE_TOPICS) if box.client.exists(
        paths.DELETE_TOPICS) else []
    assert markers == []


def test_status_and_snapshot(kadmin, start_sandbox, tmp_path):
    snapshot = small_cluster()
    box = start_sandbox(snapshot, stuck_brokers={5})
    box.client.create(paths.REASSIGN_PARTITIONS, codec.encode_reassignment([]))
    run = kadmin("status", "-z", box.connect_string, "--json")
    assert run.code == 0, run.err
    status = json.loads(run.out)
    assert status["controller"] == box.controller_id
    assert status["partitions"] == snapshot.partition_count
    assert sorted(b["id"] for b in status["brokers"]) == sorted(snapshot.brokers)
    assert status["reassignment_in_progress"] == []
    table = kadmin("status", "-z", box.connect_string)
    assert table.code == 0 and "controller" in table.out

    snap = kadmin("cluster", "snapshot", "-z", box.connect_string, "--out", "snap.json")
    assert snap.code == 0, snap.err
    doc = json.loads((tmp_path / "snap.json").read_text())
    assert set(doc["topics"]) == set(snapshot.topics)


def test_unreachable_zookeeper_exits_1_quickly(kadmin):
    started = time.monotonic()
    run = kadmin("status", "-z", "127.0.0.1:1", "--connect-timeout", "1")
    assert run.code == 1
    assert "cannot reach ZooKeeper" in run.err
    assert time.monotonic() - started < 15


def test_missing_zookeeper_option_is_invalid_input(kadmin):
    run = kadmin("status")
    assert run.code == 2 and "KADMIN_ZOOKEEPER" in run.err


def test_topics_delete_takes_topics_as_the_option_too_and_speaks_of_no_plan(kadmin, start_sandbox):
    """`--topics a,b` as every other command spells a list of topics; an unknown topic names
    the deletion, not a plan nobody gave."""
    box = start_sandbox(small_cluster())
    zk = box.connect_string
    unknown = kadmin("topics", "delete", "--topics", "topic-000001,ghost", "-z", zk, "--yes")
    assert unknown.code == 2
    assert unknown.err.splitlines() == [
        "kadmin: error: the deletion does not fit the live cluster (1 error(s)); nothing was "
        "written", "  ghost: unknown topic ghost (not in /brokers/topics)"]
    assert box.client.get_children(paths.DELETE_TOPICS) == []

    run = kadmin("topics", "delete", "--topics", "topic-000001,topic-000002", "-z", zk, "--yes",
                 "--timeout", "60")
    assert run.code == 0, run.err
    assert not box.client.exists(paths.topic("topic-000001"))
    assert not box.client.exists(paths.topic("topic-000002"))
    assert box.client.exists(paths.topic("topic-000000"))
