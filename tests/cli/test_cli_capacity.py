"""Brokers of different sizes seen by an operator: ``kadmin status --capacity``
and ``plan stats --capacity`` show each broker's use of its capacity (with ``--sizes``), the
brokers above it are named in one capped line, and ``plan rebalance`` counts every topic's bytes
when it says a broker ends above its capacity or refuses bytes beyond it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_cli_rebalance import cluster, log_dirs, write

from kadmin.model import LIST_LIMIT, Broker, ClusterSnapshot

GB = 10**9
TOPICS = {"t": [[0, 1], [1, 2], [2, 0]]}
"""Six replicas of 1 GB partitions on brokers 0-2; broker 3 holds nothing."""
CAPACITY = {"-1": 4 * GB, "0": GB // 2}
"""Broker 0 half a GB (it holds 2 GB: 400%), every other 4 GB."""


@pytest.mark.zk
def test_status_shows_each_brokers_capacity_share_and_use(kadmin, start_sandbox, tmp_path):
    box = start_sandbox(ClusterSnapshot(
        {b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
        {"t": {p: tuple(r) for p, r in enumerate(TOPICS["t"])}}))
    (tmp_path / "sizes.txt").write_text(log_dirs({("t", p): GB for p in range(3)}))
    write(tmp_path, CAPACITY, "capacity.json")
    run = kadmin("status", "-z", box.connect_string, "--sizes", "sizes.txt", "--capacity",
                 "capacity.json", "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    brokers = {b["id"]: b for b in doc["brokers"]}
    assert {b: (v["bytes"], v["capacity"], v["used"]) for b, v in brokers.items()} == {
        0: (2 * GB, GB // 2, 4.0), 1: (2 * GB, 4 * GB, 0.5), 2: (2 * GB, 4 * GB, 0.5),
        3: (0, 4 * GB, 0.0)}
    # 6 replicas over capacities 0.5 : 4 : 4 : 4 (docs/balancing.md)
    assert [brokers[b]["replica_share"] for b in range(4)] == [0.24, 1.92, 1.92, 1.92]
    assert doc["over_capacity"] == [{"broker": 0, "bytes": 2 * GB, "capacity": GB // 2}]
    text = kadmin("status", "-z", box.connect_string, "--sizes", "sizes.txt", "--capacity",
                  "capacity.json")
    assert text.code == 0, text.err
    assert "kadmin: warning: above capacity: broker 0 2 GB of 500 MB (400%)" in text.err
    assert "2 broker(s) off their replica share: 0, 3" in text.out
    assert "400%" in text.out and "replica share" in text.out
    plain = kadmin("status", "-z", box.connect_string, "--json")
    assert plain.code == 0 and json.loads(plain.out)["brokers"][0]["capacity"] is None
    write(tmp_path, {"0": GB, "1": GB}, "capacity.json")
    missing = kadmin("status", "-z", box.connect_string, "--capacity", "capacity.json")
    assert (missing.code, missing.out, missing.err) == (2, "", "kadmin: error: capacity.json: "
                                                        "no capacity for broker(s) 2, 3 and no "
                                                        "default (brokerId -1)\n")
    write(tmp_path, {"-1": GB, "16": GB}, "capacity.json")  # 16: a typo, or a fleet's file
    stranger = kadmin("status", "-z", box.connect_string, "--capacity", "capacity.json")
    assert stranger.code == 0, stranger.err
    assert stranger.err == ("kadmin: warning: capacity.json: broker(s) 16 are not in the "
                            "cluster; their capacities are not used\n")


@pytest.mark.zk
def test_status_with_capacity_alone_shows_shares_and_no_use(kadmin, start_sandbox, tmp_path):
    box = start_sandbox(ClusterSnapshot(
        {b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
        {"t": {p: (p % 3, 3) for p in range(9)}}))
    write(tmp_path, {"-1": GB, "3": 3 * GB}, "capacity.json")
    run = kadmin("status", "-z", box.connect_string, "--capacity", "capacity.json", "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert [(b["replica_share"], b["used"], b["bytes"]) for b in doc["brokers"]] == [
        (3.0, None, None), (3.0, None, None), (3.0, None, None), (9.0, None, None)]
    assert doc["over_capacity"] == []
    text = kadmin("status", "-z", box.connect_string, "--capacity", "capacity.json")
    assert "every broker at its replica share" in text.out and "evens them out" not in text.out


def test_status_refuses_a_malformed_capacity_file_before_connecting(kadmin, tmp_path):
    """The file is read first: a mistake in it is exit 2 with its JSON path, whatever the
    ZooKeeper (here none listens)."""
    write(tmp_path, {"brokerCapacities": [{"brokerId": "x", "capacity": {"DISK": "1"}}]},
          "capacity.json")
    run = kadmin("status", "-z", "127.0.0.1:1", "--connect-timeout", "0.5", "--capacity",
                 "capacity.json")
    assert run.code == 2
    assert run.err.strip().splitlines() == [
        "kadmin: error: capacity.json: $.brokerCapacities[0].brokerId: expected a broker id "
        "(the decimal of an integer from 0 to 2147483647, without leading zeros, or -1 for the "
        "default), got 'x'"]


def test_plan_stats_shows_use_before_and_after_and_names_the_full_brokers(kadmin, tmp_path):
    doc = cluster([0, 1, 2, 3], TOPICS)
    (tmp_path / "sizes.txt").write_text(log_dirs({("t", p): GB for p in range(3)}))
    write(tmp_path, CAPACITY, "capacity.json")
    write(tmp_path, {"version": 1, "partitions": [{"topic": "t", "partition": 1,
                                                   "replicas": [3, 2]}]}, "p.json")
    run = kadmin("plan", "stats", "--plan", "p.json", "--cluster", str(write(tmp_path, doc)),
                 "--sizes", "sizes.txt", "--capacity", "capacity.json", "--json")
    assert run.code == 0, run.err
    stats = json.loads(run.out)
    assert stats["over_capacity"] == [{"broker": 0, "bytes": 2 * GB, "capacity": GB // 2}]
    loads = {b["broker"]: b for b in stats["brokers"]}
    assert (loads[1]["bytes_before"], loads[1]["bytes_after"], loads[1]["capacity"]) == (
        2 * GB, GB, 4 * GB)
    text = kadmin("plan", "stats", "--plan", "p.json", "--cluster", "cluster.json", "--sizes",
                  "sizes.txt", "--capacity", "capacity.json")
    # broker 1: 2 GB then 1 GB of 4 GB; broker 3: nothing, then 1 GB
    assert re.search(r"│\s+1 │.*│\s+2 GB │\s+1 GB │\s+4 GB │\s+50% │\s+25% │", text.out)
    assert re.search(r"│\s+3 │.*│\s+0 B │\s+1 GB │\s+4 GB │\s+0% │\s+25% │", text.out)
    assert ("warning: above capacity after the plan: broker 0 2 GB of 500 MB (400%)"
            in text.out)


def test_the_list_of_brokers_above_capacity_is_capped_with_a_count(kadmin, tmp_path):
    """Every one of LIST_LIMIT + 20 brokers above its capacity: the warning names the first
    LIST_LIMIT and counts the rest."""
    n = LIST_LIMIT + 20
    doc = cluster(list(range(n)), {"t": [[b] for b in range(n)]})
    (tmp_path / "sizes.txt").write_text(log_dirs({("t", p): GB for p in range(n)}))
    write(tmp_path, {"-1": GB // 2}, "capacity.json")
    write(tmp_path, {"version": 1, "partitions": [{"topic": "t", "partition": 0,
                                                   "replicas": [0]}]}, "p.json")
    run = kadmin("plan", "stats", "--plan", "p.json", "--cluster", str(write(tmp_path, doc)),
                 "--sizes", "sizes.txt", "--capacity", "capacity.json")
    assert run.code == 0, run.err
    line = next(x for x in run.out.splitlines() if x.startswith("warning: above capacity"))
    assert line.count("broker ") == LIST_LIMIT and line.endswith("(and 20 more)")


def test_rebalance_counts_the_topics_not_selected_against_capacity(kadmin, tmp_path):
    """Capacity is a broker's whole disk: ``--topics a`` leaves b's bytes where they are, and
    they count both when a broker ends above its capacity and when bytes cannot fit at all."""
    doc = cluster([0, 1, 2], {"a": [[0], [1], [2]], "b": [[0], [0], [0]]})
    (tmp_path / "sizes.txt").write_text(log_dirs({**{("a", p): GB for p in range(3)},
                                                  **{("b", p): GB for p in range(3)}}))
    write(tmp_path, {"-1": 2 * GB}, "capacity.json")
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, doc)), "--topics", "a",
                 "--sizes", "sizes.txt", "--capacity", "capacity.json", "--out", "p.json",
                 "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out)["over_capacity"] == [{"broker": 0, "bytes": 4 * GB,
                                                     "capacity": 2 * GB}]
    write(tmp_path, {"-1": 2 * GB, "0": GB}, "capacity.json")  # 5 GB of room for 6 GB
    run = kadmin("plan", "rebalance", "--cluster", "cluster.json", "--topics", "a", "--sizes",
                 "sizes.txt", "--capacity", "capacity.json", "--balance", "bytes", "--out",
                 "q.json")
    assert run.code == 2
    assert run.err.strip().splitlines() == [
        "kadmin: error: the selected topics hold 3 GB and the other topics 3 GB on the target "
        "brokers, more than the 5 GB capacity of the 3 target broker(s): no plan fits them; "
        "add brokers or capacity"]
    assert not Path(tmp_path / "q.json").exists()


@pytest.mark.zk
def test_the_status_hint_holds_where_racks_keep_brokers_uneven(kadmin, start_sandbox):
    """Rack b's one broker must hold a replica of every partition: the spread stays 4 and
    plan rebalance moves nothing. The hint says as much, not that rebalance evens them out."""
    lists = [(0, 2), (0, 2), (0, 2), (2, 0), (1, 2), (1, 2), (1, 2), (2, 1)]
    box = start_sandbox(ClusterSnapshot(
        {b: Broker(b, f"kafka-{b}", 9092, rack) for b, rack in ((0, "a"), (1, "a"), (2, "b"))},
        {"t": dict(enumerate(lists))}))
    status = kadmin("status", "-z", box.connect_string)
    assert status.code == 0, status.err
    words = " ".join(re.sub(r"[│┌┐└┘├┤┬┴┼─]", " ", status.out).split())  # the table's cells
    assert ("replicas 4, preferred leaders 1, leaders 1, worst topic 4 (t) (kadmin plan "
            "rebalance evens them out as far as racks allow, or says why nothing can move)"
            ) in words
    planned = kadmin("plan", "rebalance", "-z", box.connect_string, "--out", "-")
    assert planned.code == 0, planned.err
    assert planned.err.startswith("nothing to move: ") or planned.out.startswith("nothing to move: ")
