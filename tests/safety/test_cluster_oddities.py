"""Znodes no Kafka writes, read by every command that reads a cluster: an id spelled otherwise
than Kafka spells it (a broker registered as ``/brokers/ids/007``, topic znode keys "0" and
"00"), a replica list naming a broker twice, a partition without a state znode, an admin znode
that cannot be decoded. Each is named by every reader, never read as something else or as
absent: ``status`` warns and counts (a partition without a state is offline), every other
command stops (exit 1) before writing anything."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kadmin import files, snapshots
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    OperationFailed,
    PartitionMove,
    PlanKind,
    ReassignmentPlan,
)
from kadmin.operations.planfiles import write_plan
from kadmin.sandbox import Sandbox
from kadmin.zk import codec, paths

pytestmark = pytest.mark.zk

SNAPSHOT = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
    topics={"alpha": {0: (0, 1), 1: (1, 2), 2: (2, 3)},
            "beta": {0: (3, 0), 1: (0, 1)}},
    controller=0, controller_epoch=7)

PLAN = {"version": 1, "partitions": [{"topic": "alpha", "partition": 0, "replicas": [1, 0]}]}
ELECTION_PLAN = {"version": 1, "partitions": [{"topic": "alpha", "partition": 0}]}

Damage = tuple[dict[str, bytes | None], tuple[str, ...]]
"""Znodes set (None: deleted), and the znode every reader must name."""

DAMAGE: dict[str, Damage] = {
    # registered with a name Kafka never writes: not broker 7 (no such znode), not absent
    "broker 007": ({paths.broker(1): None,
                    f"{paths.BROKER_IDS}/001": codec.encode_broker(Broker(1, "kafka-1", 9092))},
                   (f"{paths.BROKER_IDS}/001",)),
    "broker 03": ({f"{paths.BROKER_IDS}/03": codec.encode_broker(Broker(3, "kafka-3", 9092))},
                  (f"{paths.BROKER_IDS}/03",)),
    # "1" and "01": one of them would silently win
    "partition keys 1 and 01": ({paths.topic("alpha"):
                                 b'{"version":1,"partitions":{"0":[0,1],"1":[1,2],"2":[2,3],'
                                 b'"01":[3,0]}}'}, (paths.topic("alpha"),)),
    "partition key 00": ({paths.topic("alpha"): b'{"version":1,"partitions":{"00":[0,1],'
                                                b'"1":[1,2],"2":[2,3]}}'},
                         (paths.topic("alpha"),)),
    # a broker twice in one replica list: no snapshot, plan or rollback can be made from it
    "replicas [0,1,0]": ({paths.topic("alpha"): b'{"version":1,"partitions":{"0":[0,1,0],'
                                                b'"1":[1,2],"2":[2,3]}}'},
                         (paths.topic("alpha"),)),
    # no state: offline, leader unknown; never counted nowhere
    "no state znode": ({paths.partition_state("alpha", 1): None},
                       (paths.partition_state("alpha", 1),)),
}

ADMIN_DAMAGE: dict[str, Damage] = {
    "reassignment": ({paths.REASSIGN_PARTITIONS: b'{"version":1,"partitions":[{"topic":'},
                     (paths.REASSIGN_PARTITIONS,)),
}


@pytest.fixture
def damaged(zk_connect: str, request: pytest.FixtureRequest) -> Iterator[tuple[str, Damage]]:
    """SNAPSHOT in this test's chroot, damaged as the test's parameter says (controller
    stopped: what it would make of the damage is not the point); yields the connect string."""
    damage = {**DAMAGE, **ADMIN_DAMAGE}[request.param]
    hosts, chroot = zk_connect.split("/", 1)
    box = Sandbox(SNAPSHOT, zookeeper=hosts, chroot="/" + chroot).start()
    try:
        box.controller.stop()
        for path, data in damage[0].items():
            if data is None:
                box.client.delete(path, recursive=True)
            elif box.client.exists(path):
                box.client.set(path, data)
            else:
                box.client.create(path, data, makepath=True)
        yield box.connect_string, damage
    finally:
        box.stop()


def _files(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    (tmp_path / "elect.json").write_text(json.dumps(ELECTION_PLAN))


# every command that reads the cluster from ZooKeeper and must stop on what it cannot read
STOPPING = [
    ["cluster", "snapshot", "--out", "snap.json"],
    ["cluster", "snapshot", "--out", "snap", "--format", "dir"],
    ["plan", "validate", "plan.json"],
    ["plan", "election", "--all-topics", "--out", "out.json"],
    # (--timeout: were one to go through, the stopped controller would never answer)
    ["reassign", "--plan", "plan.json", "--no-health-gate", "--timeout", "30"],
    ["reassign", "--plan", "plan.json", "--dry-run"],
    ["verify", "--plan", "plan.json"],
    ["elect", "--topics", "alpha,beta", "--timeout", "30"],
    ["elect", "--topics", "alpha,beta", "--dry-run"],
    ["topics", "delete", "alpha", "beta", "--yes", "--timeout", "30"],
    ["topics", "delete", "alpha", "beta", "--dry-run"],
]
"""Commands that read what each damage breaks (state znodes are read by the snapshot, plan
validate/election and elect; ``plan generate`` does not read them)."""

_READS_STATES = ("snapshot", "validate", "election", "elect")


def _applies(damage: str, command: list[str]) -> bool:
    """A missing state znode concerns the commands that read states; the rest, every one."""
    return damage != "no state znode" or any(word in command for word in _READS_STATES)


CASES = [pytest.param(damage, command, id=f"{damage}: {' '.join(command)}")
         for damage in sorted(DAMAGE) for command in STOPPING if _applies(damage, command)]


@pytest.mark.parametrize(("damaged", "command"), CASES, indirect=["damaged"])
def test_every_reader_names_what_it_cannot_read_and_writes_nothing(
        kadmin: Callable[..., Any], damaged: tuple[str, Damage], command: list[str],
        tmp_path: Path) -> None:
    connect, (_, named) = damaged
    _files(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    run = kadmin(*command, "-z", connect)
    assert run.code == 1, (run.code, run.out, run.err)
    assert all(path in run.err for path in named), run.err
    assert "Traceback" not in run.err and "internal error" not in run.err
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing is written"


@pytest.mark.parametrize("damaged", sorted(DAMAGE), indirect=True)
def test_status_names_the_znode_and_counts_a_partition_without_state_offline(
        kadmin: Callable[..., Any], damaged: tuple[str, Damage]) -> None:
    connect, (_, named) = damaged
    run = kadmin("status", "-z", connect, "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert {e["path"] for e in doc["unreadable"]} >= set(named)
    assert "Traceback" not in run.err
    if paths.partition_state("alpha", 1) in named:
        assert "alpha-1" in doc["offline"]
    if any(p.startswith(paths.BROKER_IDS) for p in named):
        # the registered broker is not taken for another one, nor for broker 7 or 1
        assert all(b["id"] in (0, 1, 2, 3) for b in doc["brokers"])


@pytest.mark.parametrize("damaged", ["no state znode"], indirect=True)
def test_status_table_counts_a_partition_without_state_offline(
        kadmin: Callable[..., Any], damaged: tuple[str, Damage]) -> None:
    run = kadmin("status", "-z", damaged[0])
    assert run.code == 0, run.err
    assert "offline" in run.out and "alpha-1" in run.out, run.out
    assert paths.partition_state("alpha", 1) in run.err


@pytest.mark.parametrize("damaged", sorted(ADMIN_DAMAGE), indirect=True)
@pytest.mark.parametrize("command", [c for c in STOPPING if c[0] in ("reassign", "verify", "elect",
                                                                      "topics")], ids=" ".join)
def test_an_unreadable_admin_znode_stops_every_command_that_must_know_what_moves(
        kadmin: Callable[..., Any], damaged: tuple[str, Damage], command: list[str],
        tmp_path: Path) -> None:
    """The real run and its dry run alike: exit 1, the znode named; never taken for absent
    (``topics delete`` queued the deletion) nor for a conflict."""
    connect, (_, named) = damaged
    _files(tmp_path)
    run = kadmin(*command, "-z", connect)
    assert run.code == 1, (run.code, run.out, run.err)
    assert named[0] in run.err, run.err
    assert "Traceback" not in run.err


@pytest.fixture
def unreadable_election(zk_connect: str) -> Iterator[str]:
    hosts, chroot = zk_connect.split("/", 1)
    box = Sandbox(SNAPSHOT, zookeeper=hosts, chroot="/" + chroot).start()
    try:
        box.controller.stop()
        box.client.create(paths.PREFERRED_REPLICA_ELECTION, b"{\"version\":1,\"partitions\":7}",
                          makepath=True)
        yield box.connect_string
    finally:
        box.stop()


@pytest.mark.parametrize("extra", [(), ("--dry-run",)], ids=["real", "dry-run"])
@pytest.mark.parametrize("what", [("--topics", "alpha"), ("--plan", "elect.json")],
                         ids=["topics", "plan"])
def test_an_unreadable_election_znode_stops_elect_and_its_dry_run(
        kadmin: Callable[..., Any], unreadable_election: str, tmp_path: Path,
        extra: tuple[str, ...], what: tuple[str, ...]) -> None:
    _files(tmp_path)
    run = kadmin("elect", *what, "-z", unreadable_election, "--timeout", "30", *extra)
    assert run.code == 1, (run.code, run.out, run.err)
    assert paths.PREFERRED_REPLICA_ELECTION in run.err and "cannot decode" in run.err


# --- what kadmin writes, it reads back first ---------------------------------------------------


def test_a_snapshot_kadmin_would_refuse_is_never_written(tmp_path: Path) -> None:
    """A replica list naming a broker twice (a reader that let one through) makes a snapshot
    kadmin refuses to read: an internal error naming the file, nothing in place."""
    broken = ClusterSnapshot(brokers={0: Broker(0), 1: Broker(1)}, topics={"t": {0: (0, 1, 0)}})
    for fmt, name in (("json", "snap.json"), ("dir", "snap")):
        target = tmp_path / name
        with pytest.raises(OperationFailed, match=rf"^internal error: {target} as written fails "
                                                  r"kadmin's own check when read back \(.*\); "
                                                  r"nothing was replaced$"):
            snapshots.write_snapshot(broken, target, fmt=fmt)  # type: ignore[arg-type]
        assert not target.exists()
    assert [p.name for p in tmp_path.iterdir()] == [], "no temporary file left either"


def test_a_snapshot_that_reads_back_replaces_the_old_one(tmp_path: Path) -> None:
    target = tmp_path / "snap.json"
    target.write_text("old")
    snapshots.write_snapshot(SNAPSHOT, target, force=True)
    assert snapshots.read_snapshot(target) == SNAPSHOT


def test_a_rollback_kadmin_would_refuse_is_never_written_nor_its_plan(tmp_path: Path) -> None:
    plan = ReassignmentPlan((PartitionMove("t", 0, (0, 1)),))
    rollback = ReassignmentPlan((PartitionMove("t", 0, (0, 1, 0)),))
    (tmp_path / "plan.json").write_text("the operator's old plan")
    with pytest.raises(OperationFailed, match=r"^internal error: .*plan\.rollback\.json as "
                                              r"written fails kadmin's own check"):
        write_plan(plan, PlanKind.REASSIGN, tmp_path / "plan.json", True, rollback)
    assert (tmp_path / "plan.json").read_text() == "the operator's old plan"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


def test_read_back_runs_before_anything_is_placed(tmp_path: Path) -> None:
    seen: list[tuple[Path, bytes]] = []

    def read_back(path: Path, written: Path) -> None:
        seen.append((path, written.read_bytes()))

    files.atomic_write_files([(tmp_path / "a", b"1"), (tmp_path / "b", b"2")],
                             read_back=read_back)
    assert seen == [(tmp_path / "a", b"1"), (tmp_path / "b", b"2")]


@pytest.mark.parametrize(("payload", "kind"), [(b"null", "null"), (b"[1]", "a list"),
                                               (b"true", "a boolean"), (b'"x"', "a string")])
def test_a_znode_that_is_no_object_is_named_in_jsons_words(payload: bytes, kind: str) -> None:
    """Not Python's type names (NoneType, list, bool)."""
    from kadmin.zk import codec
    with pytest.raises(codec.DecodeError) as refused:
        codec.decode_broker(1, payload)
    assert str(refused.value).endswith(f"expected a JSON object, got {kind}"), str(refused.value)


def test_an_election_failure_without_a_leader_says_so_in_words() -> None:
    """A partition without a state znode has no leader: said so, never "leader is None"."""
    from kadmin.executor.elect import election_failure
    from kadmin.model import Broker, ClusterSnapshot, TopicPartition
    snapshot = ClusterSnapshot(brokers={b: Broker(b) for b in (0, 1)}, topics={"t": {0: (0, 1)}})
    said = election_failure(snapshot, TopicPartition("t", 0))
    assert said == ("t-0: no leader, not preferred replica 0: the partition has no state znode, "
                    "so no leader or ISR")
