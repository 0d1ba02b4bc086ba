"""`kadmin plan ...` end to end through the console entry point: files, exit codes, messages."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

CLUSTER = {
    "version": 1,
    "brokers": {str(b): {"host": f"h{b}", "port": 9092, "rack": f"r{b % 3}"} for b in range(6)},
    "topics": {
        "orders": {str(p): [0, 1, 2] for p in range(8)},
        "payments": {str(p): [1, 2, 0] for p in range(5)},
        "__consumer_offsets": {str(p): [0, 1, 2] for p in range(3)},
    },
    "states": {"orders": {"0": {"leader": 1, "isr": [1, 2], "leader_epoch": 3,
                                "controller_epoch": 1}}},
    "controller": {"brokerid": 0},
    "controller_epoch": 1,
}


@pytest.fixture
def cluster_file(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(CLUSTER))
    return path


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def test_generate_roundrobin_writes_balanced_plan_and_rollback(kadmin, cluster_file, tmp_path):
    run = kadmin("plan", "generate", "--cluster", str(cluster_file), "--topics", "orders,payments",
                 "--out", "p.json")
    assert run.code == 0, run.err
    plan = read(tmp_path / "p.json")
    entries = plan["partitions"]
    assert [(e["topic"], e["partition"]) for e in entries] == sorted(
        (e["topic"], e["partition"]) for e in entries)
    targets = {(e["topic"], e["partition"]): e["replicas"] for e in entries}
    # global counter over orders (8 partitions) then payments: payments-0 has counter 8
    assert ("orders", 0) not in targets  # already [0, 1, 2]: left out and counted
    assert targets[("orders", 1)] == [1, 2, 3]
    assert targets[("payments", 0)] == [2, 3, 4]
    leaders = Counter(r[0] for r in targets.values())
    leaders.update({0: 2})
    assert max(leaders.values()) - min(leaders.values()) <= 1
    assert "11 partition(s) to move, 2 already in place" in run.out
    rollback = read(tmp_path / "p.rollback.json")
    assert {(e["topic"], e["partition"]): e["replicas"] for e in rollback["partitions"]} == {
        key: CLUSTER["topics"][key[0]][str(key[1])] for key in targets}


def test_generate_json_names_the_plan_its_rollback_and_the_counts(kadmin, cluster_file,
                                                                   tmp_path):
    run = kadmin("plan", "generate", "--cluster", str(cluster_file), "--topics", "orders,payments",
                 "--out", "p.json", "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out) == {"plan": "p.json", "rollback": "p.rollback.json", "topics": 2,
                                   "partitions": 11, "unchanged": 2, "rf_changes": 0}
    assert (tmp_path / "p.rollback.json").is_file()


def test_a_plan_generated_from_an_odd_cluster_passes_validate(kadmin, tmp_path):
    """Mixed replication factors, a 255-character name (Kafka 0.8 allowed it), a topic without
    partitions: kadmin accepts the plan it wrote, against the snapshot it was made from."""
    odd = {"version": 1, "brokers": {str(b): {} for b in range(4)},
           "topics": {"mixed": {"0": [0], "1": [1, 2, 3], "2": [2, 3]},
                      "t" * 255: {"0": [3, 2, 1]}, "empty": {}}}
    (tmp_path / "odd.json").write_text(json.dumps(odd))
    run = kadmin("plan", "generate", "--cluster", "odd.json", "--all-topics", "--out", "p.json")
    assert run.code == 0, run.err
    moves = {(e["topic"], e["partition"]): e["replicas"] for e in read(tmp_path / "p.json")[
        "partitions"]}
    assert all(len(r) == len(odd["topics"][t][str(p)]) for (t, p), r in moves.items())
    for plan in ("p.json", "p.rollback.json"):
        check = kadmin("plan", "validate", plan, "--cluster", "odd.json", "--strict")
        assert check.code == 0, (check.out, check.err)
    # an explicit replication factor changes some; the summary says what that asks of the operator
    run = kadmin("plan", "generate", "--cluster", "odd.json", "--all-topics", "--out", "q.json",
                 "--replication-factor", "2")
    assert run.code == 0, run.err
    assert ("; 3 partition(s) change their replication factor (plan validate and reassign need "
            "--allow-rf-change)") in " ".join(run.out.split())
    check = kadmin("plan", "validate", "q.json", "--cluster", "odd.json", "--allow-rf-change")
    assert check.code == 0, (check.out, check.err)


def test_generate_kafka_with_start_index_equals_kafka(kadmin, tmp_path):
    cluster = {"version": 1, "brokers": {str(b): {"host": "h", "port": 1} for b in range(5)},
               "topics": {"t": {str(p): [4, 3] for p in range(10)}}}
    (tmp_path / "c.json").write_text(json.dumps(cluster))
    run = kadmin("plan", "generate", "--cluster", "c.json", "--all-topics", "--strategy", "kafka",
                 "--start-index", "0", "--replication-factor", "3", "--out", "k.json")
    assert run.code == 0, run.err
    got = {e["partition"]: e["replicas"] for e in read(tmp_path / "k.json")["partitions"]}
    assert got == {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
                   5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}


def test_generate_to_stdout(kadmin, cluster_file, tmp_path):
    run = kadmin("plan", "generate", "--cluster", str(cluster_file), "--topics", "payments",
                 "--out", "-")
    assert run.code == 0
    doc = json.loads(run.out)
    assert {e["topic"] for e in doc["partitions"]} == {"payments"}
    assert not (tmp_path / "plans").exists()


def test_generate_default_path_under_plans(kadmin, cluster_file, tmp_path):
    run = kadmin("plan", "generate", "--cluster", str(cluster_file), "--all-topics")
    assert run.code == 0, run.err
    written = sorted(p.name for p in (tmp_path / "plans").iterdir())
    assert len(written) == 2
    assert written[0].startswith("reassign-") and written[0].endswith(".json")
    assert any(name.endswith(".rollback.json") for name in written)


@pytest.mark.parametrize(("args", "message"), [
    (["--topics", "nope"], "nope"),
    (["--topics", "orders", "--all-topics"], "exactly one"),
    (["--topics", "orders", "--brokers", "0,9"], "9"),
    (["--topics", "orders", "--replication-factor", "7"], "exceeds"),
    (["--topics", "orders", "--replication-factor", "0"], "'0' is less than the minimum 1"),
])
def test_generate_bad_input_exits_2_and_writes_nothing(kadmin, cluster_file, tmp_path, args,
                                                       message):
    run = kadmin("plan", "generate", "--cluster", str(cluster_file), *args, "--out", "p.json")
    assert run.code == 2
    assert message in run.err
    assert len(run.err.strip().splitlines()) >= 1 and "Traceback" not in run.err
    assert not (tmp_path / "p.json").exists()


def test_generate_refuses_to_overwrite_without_force(kadmin, cluster_file, tmp_path):
    assert kadmin("plan", "generate", "--cluster", str(cluster_file), "--topics", "orders",
                  "--out", "p.json").code == 0
    before = (tmp_path / "p.json").read_bytes()
    run = kadmin("plan", "generate", "--cluster", str(cluster_file), "--topics", "payments",
                 "--out", "p.json")
    assert run.code == 2 and "already exists" in run.err
    assert (tmp_path / "p.json").read_bytes() == before
    assert kadmin("plan", "generate", "--cluster", str(cluster_file), "--topics", "payments",
                  "--out", "p.json", "--force").code == 0
    assert {e["topic"] for e in read(tmp_path / "p.json")["partitions"]} == {"payments"}


def test_generate_with_nothing_to_move_writes_no_plan(kadmin, tmp_path):
    cluster = {"version": 1, "brokers": {"0": {}, "1": {}}, "topics": {"t": {"0": [0, 1]}}}
    (tmp_path / "c.json").write_text(json.dumps(cluster))
    run = kadmin("plan", "generate", "--cluster", "c.json", "--all-topics", "--out", "p.json")
    assert run.code == 0, run.err
    assert run.out.strip() == ("nothing to move: all 1 partition(s) of 1 topic(s) are already in "
                               "place; no plan written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]
    as_json = kadmin("plan", "generate", "--cluster", "c.json", "--all-topics", "--json")
    assert as_json.code == 0 and json.loads(as_json.out)["plan"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]


def test_validate_ten_thousand_identical_entries_shows_a_hundred(kadmin, tmp_path):
    entry = '{"topic":"orders","partition":0,"replicas":[0,1,2]}'
    (tmp_path / "dup.json").write_text('{"version":1,"partitions":[' + ",".join([entry] * 10_000)
                                       + "]}")
    run = kadmin("plan", "validate", "dup.json")
    assert run.code == 2
    lines = run.err.splitlines()
    assert len(lines) == 101, lines[-3:]
    assert lines[0] == "dup.json: error: $.partitions[1] (orders-0): listed twice: also at " \
                       "$.partitions[0]"
    assert lines[-1] == "dup.json: error: (and 9,899 more) error(s) not shown"
    assert run.out.splitlines()[-1] == "dup.json: reassign plan INVALID (9,999 error(s), 0 " \
                                       "warning(s))"
    report = json.loads(kadmin("plan", "validate", "dup.json", "--json").out)
    assert len(report["errors"]) == 100 and report["error_count"] == 9_999


def test_an_error_with_many_details_shows_a_hundred_and_counts_the_rest(kadmin, cluster_file,
                                                                        tmp_path):
    (tmp_path / "p.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": p, "replicas": [0, 1, 2]} for p in range(100, 400)]}))
    run = kadmin("plan", "stats", "--plan", "p.json", "--cluster", str(cluster_file))
    assert run.code == 2
    lines = run.err.splitlines()
    assert lines[0] == "kadmin: error: p.json: invalid plan (300 errors)"
    assert lines[1] == "  orders-100: unknown partition: topic orders has 8 partition(s)"
    assert lines[101:] == ["  (and 200 more)"]


def test_validate_kafka_tool_file_is_valid(kadmin, cluster_file, tmp_path):
    (tmp_path / "k.json").write_text(json.dumps({"partitions": [
        {"topic": "orders", "partition": 0, "replicas": [3, 4, 5], "log_dirs": ["any"] * 3}]}))
    run = kadmin("plan", "validate", "k.json", "--cluster", str(cluster_file))
    assert run.code == 0, run.out + run.err
    assert "valid" in run.out


def test_validate_reports_every_problem_as_json(kadmin, cluster_file, tmp_path):
    (tmp_path / "bad.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 1]},
        {"topic": "orders", "partition": 0, "replicas": [1, 2]},
        {"topic": "orders", "partition": 2, "replicas": [-1, 2]},
    ]}))
    run = kadmin("plan", "validate", "bad.json", "--json")
    assert run.code == 2
    report = json.loads(run.out)
    assert report["valid"] is False
    paths = [e["path"] for e in report["errors"]]
    assert "$.partitions[0].replicas" in paths and "$.partitions[1]" in paths
    assert any(p.startswith("$.partitions[2]") for p in paths)
    assert "listed twice" in json.dumps(report["errors"])


def test_validate_reports_every_cluster_problem(kadmin, cluster_file, tmp_path):
    (tmp_path / "bad.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "ghost", "partition": 0, "replicas": [1, 2, 3]},
        {"topic": "orders", "partition": 1, "replicas": [1, 2, 99]},
        {"topic": "orders", "partition": 42, "replicas": [1, 2, 3]},
        {"topic": "payments", "partition": 1, "replicas": [1, 2]},
    ]}))
    run = kadmin("plan", "validate", "bad.json", "--cluster", str(cluster_file))
    assert run.code == 2
    assert "ghost" in run.err and "99" in run.err and "orders-42" in run.err
    assert "payments-1" in run.err  # replication factor change
    assert kadmin("plan", "validate", "bad.json", "--cluster", str(cluster_file),
                  "--allow-rf-change").err.count("payments-1") == 0


def test_validate_election_warning_and_strict(kadmin, cluster_file, tmp_path):
    (tmp_path / "e.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0}]}))
    # orders-0: replicas [0,1,2], ISR [1,2]: the preferred replica 0 is not in the ISR
    run = kadmin("plan", "validate", "e.json", "--cluster", str(cluster_file))
    assert run.code == 0
    assert "warning" in run.out and "orders-0" in run.out
    assert kadmin("plan", "validate", "e.json", "--cluster", str(cluster_file),
                  "--strict").code == 2


def test_validate_internal_topic_deletion(kadmin, cluster_file, tmp_path):
    (tmp_path / "d.json").write_text(json.dumps({"version": 1, "topics": ["__consumer_offsets"]}))
    run = kadmin("plan", "validate", "d.json", "--cluster", str(cluster_file))
    assert run.code == 2 and "__consumer_offsets" in run.err
    assert kadmin("plan", "validate", "d.json", "--cluster", str(cluster_file),
                  "--allow-internal").code == 0


@pytest.mark.parametrize(("content", "message"), [
    (b"{not json", "line 1"),
    (b"\xff\xfe{}", "UTF-8"),
    (b'{"version":1,"partitions":[{"topic":"a b","partition":0,"replicas":[1]}]}', "a b"),
])
def test_validate_malformed_files(kadmin, tmp_path, content, message):
    (tmp_path / "x.json").write_bytes(content)
    run = kadmin("plan", "validate", "x.json")
    assert run.code == 2
    assert message in run.err + run.out
    assert "Traceback" not in run.err


def test_validate_missing_file(kadmin):
    run = kadmin("plan", "validate", "missing.json")
    assert run.code == 2 and "missing.json" in run.err


def test_stats_table_and_json(kadmin, cluster_file, tmp_path):
    (tmp_path / "p.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "payments", "partition": 0, "replicas": [3, 4, 5]}]}))
    run = kadmin("plan", "stats", "--plan", "p.json", "--cluster", str(cluster_file), "--json")
    assert run.code == 0, run.err
    stats = json.loads(run.out)
    loads = {b["broker"]: b for b in stats["brokers"]}
    assert loads[3]["replicas_after"] == loads[3]["replicas_before"] + 1
    assert loads[1]["leaders_after"] == loads[1]["leaders_before"] - 1
    assert stats["replica_moves"] == 3 and stats["leader_changes"] == 1
    table = kadmin("plan", "stats", "p.json", "--cluster", str(cluster_file))
    assert table.code == 0 and "replicas before" in table.out


def test_election_and_deletion_plans(kadmin, cluster_file, tmp_path):
    run = kadmin("plan", "election", "--cluster", str(cluster_file), "--topics", "payments",
                 "--out", "e.json")
    assert run.code == 0, run.err
    assert read(tmp_path / "e.json")["partitions"] == [
        {"topic": "payments", "partition": p} for p in range(5)]
    run = kadmin("plan", "deletion", "--topics", "orders", "--cluster", str(cluster_file),
                 "--out", "d.json")
    assert run.code == 0, run.err
    assert read(tmp_path / "d.json") == {"version": 1, "topics": ["orders"]}
    run = kadmin("plan", "deletion", "--topics", "__consumer_offsets", "--cluster",
                 str(cluster_file), "--out", "d2.json")
    assert run.code == 2 and not (tmp_path / "d2.json").exists()


def test_python_dash_m_entry_point(tmp_path, cluster_file, kadmin_process):
    result = kadmin_process.run("plan", "validate", str(tmp_path / "none.json"))
    assert result.returncode == 2
    assert "none.json" in result.stderr and "Traceback" not in result.stderr


def log_dirs_output(sizes: dict[str, int]) -> str:
    """What kafka-log-dirs.sh --describe prints for one broker holding ``sizes``."""
    doc = {"version": 1, "brokers": [{"broker": 0, "logDirs": [{
        "logDir": "/data", "error": None, "partitions": [
            {"partition": name, "size": size, "offsetLag": 0, "isFuture": False}
            for name, size in sizes.items()]}]}]}
    return ("Querying brokers for log directories information\n"
            "Received log directory information from brokers 0\n" + json.dumps(doc) + "\n")


def test_stats_with_sizes_and_a_snapshot_carrying_them(kadmin, cluster_file, tmp_path):
    sizes = {f"orders-{p}": 1000 * (p + 1) for p in range(8)}
    sizes.update({f"payments-{p}": 500 for p in range(5)})  # __consumer_offsets unknown
    (tmp_path / "sizes.txt").write_text(log_dirs_output(sizes))
    (tmp_path / "plan.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 7, "replicas": [3, 4, 5]}]}))

    run = kadmin("plan", "stats", "--plan", "plan.json", "--cluster", str(cluster_file), "--sizes",
                 "sizes.txt", "--json")
    assert run.code == 0, run.err
    stats = json.loads(run.out)
    assert stats["bytes_moved"] == 3 * 8000
    broker3 = next(b for b in stats["brokers"] if b["broker"] == 3)
    assert (broker3["bytes_before"], broker3["bytes_after"]) == (0, 8000)
    assert ("no size for 3 partition(s), counted as the median 2000 bytes: "
            "__consumer_offsets-0, __consumer_offsets-1, __consumer_offsets-2") in run.err

    snap = kadmin("cluster", "snapshot", "--cluster", str(cluster_file), "--sizes", "sizes.txt",
                  "--out", "sized.json")
    assert snap.code == 0, snap.err
    assert read(tmp_path / "sized.json")["sizes"]["orders"]["7"] == 8000
    again = kadmin("plan", "stats", "--plan", "plan.json", "--cluster", "sized.json", "--json")
    assert json.loads(again.out)["bytes_moved"] == 3 * 8000


def test_a_bad_sizes_file_exits_2_with_one_line(kadmin, cluster_file, tmp_path):
    (tmp_path / "plan.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 7, "replicas": [3, 4, 5]}]}))
    (tmp_path / "sizes.txt").write_text('{"version":1,"brokers":[{"broker":0,"logDirs":'
                                        '[{"partitions":[{"partition":"orders-x","size":1}]}]}]}')
    run = kadmin("plan", "stats", "plan.json", "--cluster", str(cluster_file), "--sizes",
                 "sizes.txt")
    assert run.code == 2
    assert run.err == ("kadmin: error: sizes.txt: $.brokers[0].logDirs[0].partitions[0]"
                       ".partition: 'orders-x' is not \"<topic>-<partition id>\"\n")


def test_snapshot_to_stdout_writes_no_file_named_dash(kadmin, cluster_file, tmp_path):
    run = kadmin("cluster", "snapshot", "--cluster", str(cluster_file), "--out", "-")
    assert run.code == 0, run.err
    assert set(json.loads(run.out)["topics"]) == set(CLUSTER["topics"])
    assert run.err.startswith("6 broker(s), 3 topic(s), 16 partition(s) -> -")
    folder = kadmin("cluster", "snapshot", "--cluster", str(cluster_file), "--out", "-",
                    "--format", "dir")
    assert folder.code == 2 and "a snapshot folder cannot go to stdout" in folder.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster.json"]


def test_a_reader_that_goes_away_ends_kadmin_quietly(tmp_path, kadmin_process):
    """`kadmin ... | head -c 100`: exit 141 as for a tool killed by SIGPIPE (a cut output is no
    success), nothing on stderr: no traceback, no internal error."""
    from kadmin.snapshots import write_snapshot
    from kadmin.synthetic import synthetic_cluster

    write_snapshot(synthetic_cluster(brokers=6, topics=100, partitions=100, replication_factor=3,
                                     seed=1), tmp_path / "big.json")
    run = kadmin_process("plan", "generate", "--cluster", str(tmp_path / "big.json"),
                         "--all-topics", "--out", "-")
    assert run.stdout is not None and run.stderr is not None
    assert run.stdout.read(100).startswith('{"version":1,"partitions":[')
    run.stdout.close()  # the plan is far larger than a pipe's buffer: kadmin is still writing
    assert run.wait(timeout=120) == 141
    assert run.stderr.read() == ""


def test_a_disk_full_at_the_rollback_leaves_no_plan_without_it(tmp_path, kadmin_process):
    """The plan and its rollback are written as one: a write that fails at the second (here
    the rollback, the larger file, past a file-size limit) leaves neither."""
    import resource

    cluster = {"version": 1, "brokers": {str(b): {} for b in range(3)},
               "topics": {"t": {str(p): [0, 1, 2] for p in range(100)}}}
    (tmp_path / "c.json").write_text(json.dumps(cluster))
    command = ["plan", "generate", "--cluster", "c.json", "--all-topics",
               "--replication-factor", "1"]  # the rollback keeps 3 replicas
    sized = kadmin_process.run(*command, "--out", "sizes/p.json", cwd=tmp_path)
    assert sized.returncode == 0, sized.stderr
    plan_size = (tmp_path / "sizes" / "p.json").stat().st_size
    rollback_size = (tmp_path / "sizes" / "p.rollback.json").stat().st_size
    assert plan_size < rollback_size
    limit = (plan_size + rollback_size) // 2

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    run = kadmin_process.run(*command, "--out", "out/p.json", cwd=tmp_path, preexec_fn=limited)
    assert run.returncode == 1, run.stderr
    assert run.stderr.startswith("kadmin: error: cannot write out/p.rollback.json: File too "
                                 "large"), run.stderr
    assert list((tmp_path / "out").iterdir()) == []


def test_a_list_inside_one_message_names_ten_and_counts_the_rest(kadmin, cluster_file):
    names = ",".join(f"ghost-{i:02d}" for i in range(30))
    run = kadmin("plan", "generate", "--cluster", str(cluster_file), "--topics", names)
    assert run.code == 2
    assert run.err == ("kadmin: error: unknown topic(s) not in the cluster: "
                       + ", ".join(f"ghost-{i:02d}" for i in range(10)) + " (and 20 more)\n")
