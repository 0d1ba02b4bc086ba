"""Fuzzing every reader of untrusted input: plan validation, snapshot documents and lines, JSON
files, and every znode decoder (what a corrupt or hand-edited znode could hold).

Each may accept its input or refuse it, and refusing means exactly one kind of exception with a
one-line message: :class:`InvalidInput` for files, :class:`codec.DecodeError` for znodes, a list
of problems (never an exception) from plan validation. Whatever is accepted must really be valid:
it passes the rules again after a round trip. Inputs are arbitrary values and, more usefully,
valid documents with a few mutations, which reach the deep rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kadmin import files, plans, snapshots
from kadmin.model import (
    MAX_ID,
    Broker,
    ClusterSnapshot,
    DeletionPlan,
    ElectionPlan,
    InvalidInput,
    PartitionMove,
    PartitionState,
    PlanKind,
    ReassignmentPlan,
    TopicPartition,
    topic_name_problem,
)
from kadmin.zk import codec

# --- values -------------------------------------------------------------------------------------

BOUNDARY_INTS = [-(2**63), -2, -1, 0, 1, 2, MAX_ID, MAX_ID + 1, 2**63, 10**100]
ODD_STRINGS = ["", " ", ".", "..", "a b", "a\nb", "orders\n", "²", "٣", "0", "01", "-1", "1.0",
               "\ud800", "a\udfff", "t" * 256, "__consumer_offsets", "orders", "PLAINTEXT://h:²",
               "PLAINTEXT://h:" + "9" * 30, "SSL://", "://:", "9" * 11, "9" * 5000]
TEXT = st.text(max_size=12) | st.sampled_from(ODD_STRINGS)
NUMBERS = (st.integers() | st.sampled_from(BOUNDARY_INTS)
           | st.floats(allow_nan=False) | st.sampled_from([1.0, 0.0, -0.0, 1e30]))
SCALARS = st.none() | st.booleans() | NUMBERS | TEXT
JSON = st.recursive(SCALARS, lambda children: st.lists(children, max_size=5)
                    | st.dictionaries(TEXT, children, max_size=5), max_leaves=25)
"""Anything ``json.loads`` can return (infinity included: it reads ``1e400`` as inf)."""


def _containers(value: Any, found: list[Any]) -> list[Any]:
    if isinstance(value, (dict, list)):
        found.append(value)
        for child in (value.values() if isinstance(value, dict) else value):
            _containers(child, found)
    return found


@st.composite
def mutated(draw: st.DrawFn, documents: st.SearchStrategy[Any]) -> Any:
    """A document with one to three edits: a value replaced (often by a near miss of the right
    type), a key or element removed or added, an element repeated."""
    doc = json.loads(json.dumps(draw(documents)))  # a private deep copy
    for _ in range(draw(st.integers(1, 3))):
        containers = _containers(doc, [])
        if not containers:
            return draw(JSON)
        node = draw(st.sampled_from(containers))
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        action = draw(st.sampled_from(["replace", "replace", "remove", "add", "repeat"]))
        if action == "add" or not keys:
            if isinstance(node, dict):
                node[draw(TEXT | st.sampled_from(["topic", "partition", "replicas", "log_dirs",
                                                  "version", "leader", "isr"]))] = draw(JSON)
            else:
                node.insert(draw(st.integers(0, len(node))), draw(JSON))
            continue
        key = draw(st.sampled_from(keys))
        if action == "replace":
            node[key] = draw(st.one_of(SCALARS, JSON, st.just([]), st.just({})))
        elif action == "remove":
            del node[key]
        elif isinstance(node, list):
            node.append(node[key])
        else:
            node[draw(TEXT)] = node[key]
    return doc


# --- a small cluster and valid plans of it --------------------------------------------------------

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"h{b}", 9092, f"r{b % 3}") for b in range(6)},
    topics={"orders": {0: (0, 1, 2), 1: (1, 2, 3), 2: (2, 3, 4)},
            "pay.ments": {0: (4, 5, 0), 1: (5, 0, 1)},
            "__consumer_offsets": {0: (0, 1, 2)}},
    states={"orders": {0: PartitionState(1, (1, 2)), 1: PartitionState(1, (1, 2, 3))}},
    controller=0, controller_epoch=4)
PARTITIONS = sorted(TopicPartition(t, p) for t, ps in CLUSTER.topics.items() for p in ps)

REASSIGNMENTS = st.lists(
    st.tuples(st.sampled_from(PARTITIONS), st.permutations(range(6)), st.booleans()),
    min_size=1, max_size=6, unique_by=lambda t: t[0],
).map(lambda moves: {"version": 1, "partitions": [
    {"topic": tp.topic, "partition": tp.partition, "replicas": r[:3],
     **({"log_dirs": ["any", "/data/a", "any"]} if dirs else {})} for tp, r, dirs in moves]})
ELECTIONS = st.lists(st.sampled_from(PARTITIONS), min_size=1, max_size=6, unique=True).map(
    lambda tps: {"version": 1, "partitions": [{"topic": t, "partition": p} for t, p in tps]})
DELETIONS = st.lists(st.sampled_from(sorted(set(CLUSTER.topics) - plans.INTERNAL_TOPICS)),
                     min_size=1, unique=True).map(
    lambda topics: {"version": 1, "topics": topics})
VALID_PLANS = REASSIGNMENTS | ELECTIONS | DELETIONS
KINDS = st.sampled_from([None, *PlanKind])


def assert_truly_valid(plan: Any, kind: PlanKind, against_cluster: bool) -> None:
    """What validation accepted obeys every rule, and reads back as itself."""
    if isinstance(plan, ReassignmentPlan):
        tps = [m.tp for m in plan.moves]
        for move in plan.moves:
            assert topic_name_problem(move.topic) is None
            assert type(move.partition) is int and 0 <= move.partition <= MAX_ID
            assert move.replicas and len(set(move.replicas)) == len(move.replicas)
            assert all(type(b) is int and 0 <= b <= MAX_ID for b in move.replicas)
            if move.log_dirs is not None:
                assert len(move.log_dirs) == len(move.replicas)
                assert all(d == "any" or d.startswith("/") for d in move.log_dirs)
            if against_cluster:
                assert CLUSTER.replicas(move.tp) is not None
                assert set(move.replicas) <= set(CLUSTER.brokers)
    elif isinstance(plan, ElectionPlan):
        tps = list(plan.partitions)
        for tp in tps:
            assert topic_name_problem(tp.topic) is None
            assert type(tp.partition) is int and 0 <= tp.partition <= MAX_ID
            assert not against_cluster or CLUSTER.replicas(tp) is not None
    else:
        assert isinstance(plan, DeletionPlan)
        tps = [TopicPartition(t, 0) for t in plan.topics]
        assert all(topic_name_problem(t) is None for t in plan.topics)
        assert not against_cluster or set(plan.topics) <= set(CLUSTER.topics)
    assert len(set(tps)) == len(tps)
    assert plans.validate_document(plans.plan_document(plan), kind).plan == plan


def check_plan_document(doc: Any, kind: PlanKind | None) -> None:
    for snapshot in (None, CLUSTER):
        report = plans.validate(doc, kind, snapshot)
        assert all("\n" not in str(p) for p in report.problems), report.problems
        if report.plan is None:
            assert report.errors
        else:
            assert not report.errors and report.kind is not None
            assert_truly_valid(report.plan, report.kind, snapshot is not None)
    for expected in PlanKind:
        problem = plans.kind_problem(doc, expected)
        assert problem is None or "\n" not in str(problem)


@settings(max_examples=300)
@given(doc=JSON, kind=KINDS)
def test_plan_validation_of_any_json_value(doc: Any, kind: PlanKind | None) -> None:
    check_plan_document(doc, kind)


@settings(max_examples=400)
@given(doc=mutated(VALID_PLANS), kind=KINDS)
def test_plan_validation_of_mutated_valid_plans(doc: Any, kind: PlanKind | None) -> None:
    check_plan_document(doc, kind)


@settings(max_examples=50)
@given(doc=VALID_PLANS)
def test_the_unmutated_plans_are_valid(doc: Any) -> None:
    """The seeds of the mutations pass, so a mutant's refusal is about its mutation."""
    report = plans.validate(doc, None, CLUSTER)
    assert report.plan is not None, report.problems


# --- snapshots ----------------------------------------------------------------------------------

SNAPSHOT_DOC = snapshots.snapshot_to_document(CLUSTER)


def check_snapshot_document(doc: Any) -> None:
    try:
        snapshot = snapshots.snapshot_from_document(doc, "fuzz.json")
    except InvalidInput as error:
        assert str(error).startswith("fuzz.json: $") and "\n" not in str(error), str(error)
        return
    document = snapshots.snapshot_to_document(snapshot)  # what `cluster snapshot` would write
    assert snapshots.snapshot_to_document(snapshots.snapshot_from_document(document, "again")) \
        == document
    for partitions in snapshot.topics.values():
        for partition, replicas in partitions.items():
            assert 0 <= partition <= MAX_ID and replicas
            assert all(0 <= b <= MAX_ID for b in replicas)


@settings(max_examples=300)
@given(doc=JSON)
def test_snapshot_documents_of_any_json_value(doc: Any) -> None:
    check_snapshot_document(doc)


@settings(max_examples=400)
@given(doc=mutated(st.just(SNAPSHOT_DOC)))
def test_mutated_snapshot_documents(doc: Any) -> None:
    check_snapshot_document(doc)


def _one_line_invalid_input(read: Callable[[], object]) -> None:
    try:
        read()
    except InvalidInput as error:
        assert "\n" not in str(error), str(error)


@settings(max_examples=300)
@given(data=st.binary(max_size=120) | JSON.map(lambda d: json.dumps(d).encode())
       | st.sampled_from([b"[" * 3000, b"9" * 5000, b"\xef\xbb\xbf{}", b'"\\ud800"'])
       | mutated(st.just({"topic": "orders", "partitions": {"0": [0, 1, 2]}})).map(
           lambda d: json.dumps(d, ensure_ascii=False).encode("utf-8", "surrogatepass")))
def test_json_and_snapshot_lines_of_any_bytes(data: bytes) -> None:
    _one_line_invalid_input(lambda: files.parse_json(data, "fuzz.json"))
    _one_line_invalid_input(lambda: snapshots.parse_topic_line(data, "topics.jsonl:1"))


# --- znode payloads -----------------------------------------------------------------------------

BROKER = Broker(7, "kafka-7.example.com", 9093, "rack-a")
DECODERS: dict[str, tuple[Callable[[bytes], object], list[bytes]]] = {
    "broker": (lambda data: codec.decode_broker(7, data),
               [codec.encode_broker(BROKER, version, 1) for version in range(1, 6)]
               + [b'{"version":5,"host":null,"port":-1,"endpoints":["SSL://h5:9093"],'
                  b'"rack":"r3","jmx_port":-1,"timestamp":"1"}']),
    "topic": (codec.decode_topic,
              [codec.encode_topic(CLUSTER.topics["orders"], version, "id-1")
               for version in range(1, 4)]),
    "state": (codec.decode_state, [codec.encode_state(PartitionState(1, (1, 2), 5, 4)),
                                   b'{"controller_epoch":4,"leader":-1,"version":1,'
                                   b'"leader_epoch":0,"isr":[],"leader_recovery_state":0}']),
    "controller": (codec.decode_controller, [codec.encode_controller(3, 1), b"3"]),
    "controller_epoch": (codec.decode_controller_epoch, [codec.encode_controller_epoch(20)]),
    "reassignment": (codec.decode_reassignment, [codec.encode_reassignment(
        [PartitionMove("orders", 0, (1, 2, 0)), PartitionMove("pay.ments", 1, (0, 1, 5))])]),
    "election": (codec.decode_election, [codec.encode_election(PARTITIONS[:3])]),
}


def _payload_mutations(valid: list[bytes]) -> st.SearchStrategy[bytes]:
    """JSON-level edits of a valid payload, and byte-level ones (truncated, bytes changed)."""
    documents = [json.loads(p) for p in valid if p.strip()[:1] == b"{"]
    as_json = (mutated(st.sampled_from(documents)).map(
        lambda d: json.dumps(d, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        if documents else st.nothing())

    @st.composite
    def bytewise(draw: st.DrawFn) -> bytes:
        data = bytearray(draw(st.sampled_from(valid)))
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(data)))
            edit = draw(st.sampled_from(["cut", "set", "insert"]))
            if edit == "cut":
                del data[at:]
            elif edit == "set" and at < len(data):
                data[at] = draw(st.integers(0, 255))
            else:
                data[at:at] = draw(st.binary(min_size=1, max_size=4)
                                   | st.sampled_from([b"9" * 5000, b"[" * 3000, b"\xff"]))
        return bytes(data)

    return as_json | bytewise()


def check_decoder(decode: Callable[[bytes], object], data: bytes | None) -> None:
    try:
        value = decode(data)  # type: ignore[arg-type]
    except codec.DecodeError as error:
        assert "\n" not in str(error), str(error)
        return
    if isinstance(value, dict):  # a topic: partition id -> replicas
        assert all(type(p) is int and 0 <= p <= MAX_ID and type(r) is tuple
                   and all(type(b) is int for b in r) for p, r in value.items())
    elif isinstance(value, int):  # controller or epoch
        assert type(value) is int and 0 <= value <= MAX_ID
    elif isinstance(value, PartitionState):
        assert all(type(v) is int for v in (value.leader, value.leader_epoch,
                                            value.controller_epoch, *value.isr))
    elif isinstance(value, Broker):
        assert value.port is None or type(value.port) is int
        assert all(v is None or type(v) is str for v in (value.host, value.rack))
    else:
        assert isinstance(value, tuple)
        assert all(type(e.topic) is str and type(e.partition) is int for e in value)


@pytest.mark.parametrize("name", sorted(DECODERS))
@settings(max_examples=150)
@given(data=st.none() | st.binary(max_size=80) | JSON.map(lambda d: json.dumps(d).encode()))
def test_decoders_on_any_bytes(name: str, data: bytes | None) -> None:
    check_decoder(DECODERS[name][0], data)


@pytest.mark.parametrize("name", sorted(DECODERS))
@settings(max_examples=200)
@given(data=st.data())
def test_decoders_on_mutated_valid_payloads(name: str, data: st.DataObject) -> None:
    decode, valid = DECODERS[name]
    check_decoder(decode, data.draw(_payload_mutations(valid)))


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_the_unmutated_payloads_decode(name: str) -> None:
    decode, valid = DECODERS[name]
    for payload in valid:
        decode(payload)


@settings(max_examples=300)
@given(text=TEXT | st.integers().map(str) | st.sampled_from(["9" * 5000, "0" * 11, str(MAX_ID)]))
def test_decimal_ids(text: str) -> None:
    try:
        value = codec.decimal_id(text, "id")
    except codec.DecodeError:
        # Kafka's spelling only: no sign, no leading zero (007 is not broker 7)
        assert not (re.fullmatch("0|[1-9][0-9]{0,9}", text) and int(text) <= MAX_ID)
    else:
        assert 0 <= value <= MAX_ID and int(text) == value


# --- the command line, end to end ---------------------------------------------------------------


@settings(max_examples=120,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200)
       | mutated(VALID_PLANS).map(lambda d: json.dumps(d, ensure_ascii=False).encode(
           "utf-8", "surrogatepass")))
# found by hypothesis: a list where the partition number goes, beside a valid entry that the
# cluster checks still read (an internal error once schema and cluster checks ran together)
@example(data=b'{"version": 1, "partitions": [{"topic": "__consumer_offsets", "partition": []},'
              b' {"topic": "orders", "partition": 0}]}')
def test_plan_validate_of_any_file_exits_0_or_2(data: bytes, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from kadmin.cli.app import main

    (tmp_path / "fuzz.json").write_bytes(data)
    (tmp_path / "cluster.json").write_bytes(files.dumps_json(SNAPSHOT_DOC))
    with pytest.raises(SystemExit) as exit_info:
        main(["plan", "validate", str(tmp_path / "fuzz.json"), "--cluster",
              str(tmp_path / "cluster.json")])
    captured = capsys.readouterr()
    assert exit_info.value.code in (None, 0, 2), captured.err
    assert "internal error" not in captured.err and "Traceback" not in captured.err


@settings(max_examples=120,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=mutated(st.just(SNAPSHOT_DOC)),
       strategy=st.sampled_from(["roundrobin", "kafka"]))
def test_plan_generate_from_any_mutated_snapshot_exits_0_or_2(
        doc: Any, strategy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kadmin.cli.app import main

    (tmp_path / "cluster.json").write_bytes(
        json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    with pytest.raises(SystemExit) as exit_info:
        main(["plan", "generate", "--cluster", str(tmp_path / "cluster.json"), "--all-topics",
              "--strategy", strategy, "--out", "-"])
    captured = capsys.readouterr()
    assert exit_info.value.code in (None, 0, 2), captured.err
    assert "internal error" not in captured.err and "Traceback" not in captured.err
