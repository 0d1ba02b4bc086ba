"""Plan validation: the schemas, every structural rule (message and path), the cluster rules, and a
fuzz proving that no JSON value makes validation raise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kadmin import model, plans, schema
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    DeletionPlan,
    ElectionPlan,
    PartitionMove,
    PartitionState,
    PlanKind,
    ReassignmentPlan,
    Severity,
    TopicPartition,
    topic_name_problem,
)

REPO = Path(__file__).resolve().parents[2]
PLAN_SCHEMAS = ("reassign_partitions", "preferred_replica_election", "delete_topics")


def problems(doc: object, kind: PlanKind | None = None) -> list[tuple[str, str]]:
    return [(p.where, p.message) for p in plans.validate_document(doc, kind).problems]


def reassign(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "partitions": list(entries)}


def move(topic: str = "foo", partition: int = 0, replicas: Any = (1, 2), **extra: Any
         ) -> dict[str, Any]:
    return {"topic": topic, "partition": partition,
            "replicas": list(replicas) if isinstance(replicas, tuple) else replicas, **extra}


# --- schema files and loader -------------------------------------------------------------------


@pytest.mark.parametrize("name", PLAN_SCHEMAS)
def test_plan_schemas_are_draft_2020_12_with_id_and_descriptions(name: str) -> None:
    doc = schema.load_schema(name)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"].startswith("urn:kadmin:schema:")
    assert doc["description"]
    schema.KadminValidator.check_schema(doc)
    assert all(p.get("description") for p in doc["properties"].values())


def test_load_schema_accepts_the_file_name_too() -> None:
    assert schema.load_schema("delete_topics.schema.json") == schema.load_schema("delete_topics")
    assert schema.validator("delete_topics") is schema.validator("delete_topics")


def test_load_schema_prefers_the_package_data_dir(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "_schemas").mkdir()
    (tmp_path / "_schemas" / "delete_topics.schema.json").write_text('{"title": "packaged"}')
    monkeypatch.setattr(schema, "files", lambda package: tmp_path)
    schema.load_schema.cache_clear()
    try:
        assert schema.load_schema("delete_topics") == {"title": "packaged"}
        # a schema the package dir lacks comes from the source tree's schemas/
        assert schema.load_schema("reassign_partitions") == json.loads(
            (REPO / "schemas" / "reassign_partitions.schema.json").read_text())
    finally:
        schema.load_schema.cache_clear()


def test_missing_schema_names_every_place_looked_in() -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.schema\.json not found .*_schemas.*schemas"):
        schema.load_schema("nope")


def test_float_is_not_an_integer() -> None:
    """Kafka's parser refuses 1.0 where an int belongs; so does kadmin's validator."""
    assert problems(reassign(move(partition=1.0))) == [  # type: ignore[arg-type]
        ("$.partitions[0].partition", "1.0 is not of type 'integer'")]
    assert problems(reassign(move(replicas=[1, True]))) == [
        ("$.partitions[0].replicas[1]", "True is not of type 'integer'")]


# --- files Kafka's tools produce ---------------------------------------------------------------

KAFKA_FILES = [
    # kafka-reassign-partitions.sh --generate ("Proposed partition reassignment configuration")
    ('{"version":1,"partitions":[{"topic":"foo1","partition":2,"replicas":[5,6],'
     '"log_dirs":["any","any"]},{"topic":"foo1","partition":0,"replicas":[5,6],'
     '"log_dirs":["any","any"]},{"topic":"foo2","partition":2,"replicas":[5,6],'
     '"log_dirs":["any","any"]}]}', PlanKind.REASSIGN),
    # hand-written custom reassignment from Kafka's documentation
    ('{"version":1,"partitions":[{"topic":"foo1","partition":0,"replicas":[5,6]},'
     '{"topic":"foo2","partition":1,"replicas":[2,3]}]}', PlanKind.REASSIGN),
    # replicas moved between log directories, no version
    ('{"partitions":[{"topic":"foo","partition":1,"replicas":[1,2],'
     '"log_dirs":["/var/kafka-logs-2","any"]}]}', PlanKind.REASSIGN),
    # kafka-preferred-replica-election.sh --path-to-json-file, without version
    ('{"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]}',
     PlanKind.ELECTION),
    # the deletion plan document
    ('{"version":1,"topics":["foo","bar"]}', PlanKind.DELETION),
]


@pytest.mark.parametrize(("text", "kind"), KAFKA_FILES)
def test_files_kafka_tools_produce_are_valid(text: str, kind: PlanKind) -> None:
    doc = json.loads(text)
    report = plans.validate_document(doc)
    assert report.problems == ()
    assert report.kind is kind
    assert report.plan is not None
    assert plans.detect_kind(doc) is kind
    assert schema.validator(plans.SCHEMAS[kind]).is_valid(doc)


def test_parsed_reassignment_keeps_log_dirs_and_sorts() -> None:
    report = plans.validate_document(json.loads(KAFKA_FILES[0][0]))
    assert report.plan == ReassignmentPlan((
        PartitionMove("foo1", 0, (5, 6), ("any", "any")),
        PartitionMove("foo1", 2, (5, 6), ("any", "any")),
        PartitionMove("foo2", 2, (5, 6), ("any", "any")),
    ))


# --- kind detection ----------------------------------------------------------------------------


@pytest.mark.parametrize(("doc", "kind"), [
    ({"partitions": [{"topic": "a", "partition": 0, "replicas": [1]}]}, PlanKind.REASSIGN),
    ({"partitions": [{"topic": "a", "partition": 0}, {"topic": "a", "partition": 1,
                                                     "replicas": [1]}]}, PlanKind.REASSIGN),
    ({"partitions": []}, PlanKind.REASSIGN),
    ({"partitions": [{"topic": "a", "partition": 0}]}, PlanKind.ELECTION),
    ({"topics": []}, PlanKind.DELETION),
    ({"topics": ["a"], "partitions": []}, None),
    ({"version": 1}, None),
    ([1], None),
    ("partitions", None),
])
def test_detect_kind(doc: object, kind: PlanKind | None) -> None:
    assert plans.detect_kind(doc) is kind


def test_unknown_kind_is_one_error_at_the_root() -> None:
    report = plans.validate_document({"version": 1, "moves": []})
    assert report.kind is None and report.plan is None
    assert problems({"version": 1, "moves": []}) == [(
        "$", 'not a plan: expected an object with "partitions" (a reassignment or election plan) '
             'or "topics" (a deletion plan), got an object with keys ["moves", "version"]')]
    assert problems(None)[0][1].endswith("got null")
    assert problems([])[0][1].endswith("got an array")


def test_explicit_kind_wins_over_the_shape() -> None:
    doc = {"partitions": [{"topic": "a", "partition": 0}]}
    assert problems(doc, PlanKind.REASSIGN) == [
        ("$.partitions[0]", "'replicas' is a required property")]


# --- structural rules, one by one --------------------------------------------------------------


@pytest.mark.parametrize(("doc", "expected"), [
    (reassign(move("foo", 1), move("bar", 0), move("foo", 1)),
     [("$.partitions[2]", "listed twice: also at $.partitions[0]")]),
    (reassign(move(replicas=[])),
     [("$.partitions[0].replicas", "replica list is empty; a partition needs at least one "
                                   "replica")]),
    (reassign(move(replicas=[3, 1, 3, 1, 2])),
     [("$.partitions[0].replicas", "broker id(s) 1, 3 listed more than once in [3, 1, 3, 1, 2]")]),
    (reassign(move(partition=-1)),
     [("$.partitions[0].partition", "partition id -1 is negative")]),
    (reassign(move(replicas=[1, -2])),
     [("$.partitions[0].replicas[1]", "broker id -2 is negative")]),
    (reassign(move(replicas=[1, 2], log_dirs=["any"])),
     [("$.partitions[0].log_dirs", "1 log dir(s) for 2 replica(s); log_dirs needs one entry per "
                                   "replica")]),
    (reassign(move(replicas=[1, 2], log_dirs=["any", "data/kafka"])),
     [("$.partitions[0].log_dirs[1]", 'log dir "data/kafka" must be "any" or an absolute path')]),
    (reassign(move(topic="foo bar")),
     [("$.partitions[0].topic", "illegal topic name \"foo bar\": Kafka allows only ASCII letters, "
                                "digits, '.', '_' and '-'")]),
    (reassign(move(topic="")), [("$.partitions[0].topic", "topic name is empty")]),
    (reassign(move(topic="..")), [("$.partitions[0].topic", 'topic name ".." is not allowed by '
                                                             'Kafka')]),
    (reassign(move(topic="t" * 256)),
     [("$.partitions[0].topic", "topic name is 256 characters long; no Kafka release allows "
                                "more than 255")]),
    ({"topics": ["foo", "bar", "foo"]},
     [("$.topics[2]", 'topic "foo" is listed twice: also at $.topics[0]')]),
    ({"topics": ["ok", "no/slash"]},
     [("$.topics[1]", "illegal topic name \"no/slash\": Kafka allows only ASCII letters, digits, "
                      "'.', '_' and '-'")]),
    ({"partitions": [{"topic": "a", "partition": 0}, {"topic": "a", "partition": 0}]},
     [("$.partitions[1]", "listed twice: also at $.partitions[0]")]),
])
def test_structural_rule(doc: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    report = plans.validate_document(doc)
    assert [(p.where, p.message) for p in report.problems] == expected
    assert all(p.severity is Severity.ERROR for p in report.problems)
    assert report.plan is None and not report.ok()


def test_topic_names_of_every_kafka_release_are_legal() -> None:
    assert problems(reassign(move(topic="t" * 249))) == []
    # Kafka 0.8 and 0.9 created names of up to 255 characters; such topics still exist
    assert problems(reassign(move(topic="t" * 255))) == []
    assert topic_name_problem("a.b_c-D9") is None


def test_topic_name_with_trailing_newline_is_illegal() -> None:
    """Python's ``$`` matches before a final newline, so jsonschema's pattern lets this through;
    kadmin's own rule does not."""
    assert problems({"topics": ["foo\n"]})[0][0] == "$.topics[0]"


@pytest.mark.parametrize(("doc", "expected"), [
    ({"version": 2, "partitions": [move()]}, [("$.version", "1 was expected")]),
    ({"partitions": [move()], "extra": 1},
     [("$", "Additional properties are not allowed ('extra' was unexpected)")]),
    ({"partitions": {"foo": 1}}, [("$.partitions", "{'foo': 1} is not of type 'array'")]),
    (reassign(move(leader=1)),
     [("$.partitions[0]", "Additional properties are not allowed ('leader' was unexpected)")]),
    (reassign({"topic": "foo", "replicas": [1]}),
     [("$.partitions[0]", "'partition' is a required property")]),
    (reassign(move(replicas="1,2")),
     [("$.partitions[0].replicas", "'1,2' is not of type 'array'")]),
    (reassign(move(log_dirs=None)),
     [("$.partitions[0].log_dirs", "None is not of type 'array'")]),
    (reassign(move(topic=7)), [("$.partitions[0].topic", "7 is not of type 'string'")]),
    (reassign("foo-1"), [("$.partitions[0]", "'foo-1' is not of type 'object'")]),
    ({"topics": ["a", 1]}, [("$.topics[1]", "1 is not of type 'string'")]),
])
def test_schema_errors_have_json_paths(doc: Any, expected: list[tuple[str, str]]) -> None:
    assert problems(doc) == expected


@pytest.mark.parametrize(("doc", "kind", "where", "noun"), [
    ({"version": 1, "partitions": []}, None, "$.partitions", "partitions"),
    ({"version": 1, "partitions": []}, PlanKind.ELECTION, "$.partitions", "partitions"),
    ({"version": 1, "topics": []}, None, "$.topics", "topics"),
])
def test_an_empty_plan_is_an_error_of_every_kind(doc: Any, kind: PlanKind | None, where: str,
                                                 noun: str) -> None:
    """Kafka's tool ("Partition reassignment data file is empty") and kafka-utils ("Plan should
    have at least one partition") refuse it: a CI gate must not pass a plan that does nothing."""
    report = plans.validate_document(doc, kind)
    assert [(p.where, p.message, p.severity) for p in report.problems] == [
        (where, f"the plan lists no {noun}; an empty plan does nothing", Severity.ERROR)]
    assert not report.ok() and report.plan is None


def test_every_problem_is_reported_in_document_order() -> None:
    doc = {"version": 3, "partitions": [
        move("ok", 0),
        {"topic": "bad name", "partition": -4, "replicas": [2, 2, -1], "log_dirs": ["x"],
         "size": 10},
        7,
        move("ok", 0),
        move("ok", 1, replicas=[]),
    ]}
    assert problems(doc) == [
        ("$.version", "1 was expected"),
        ("$.partitions[1]", "Additional properties are not allowed ('size' was unexpected)"),
        ("$.partitions[1].topic", "illegal topic name \"bad name\": Kafka allows only ASCII "
                                  "letters, digits, '.', '_' and '-'"),
        ("$.partitions[1].partition", "partition id -4 is negative"),
        ("$.partitions[1].replicas[2]", "broker id -1 is negative"),
        ("$.partitions[1].replicas", "broker id(s) 2 listed more than once in [2, 2, -1]"),
        ("$.partitions[1].log_dirs", "1 log dir(s) for 3 replica(s); log_dirs needs one entry per "
                                     "replica"),
        ("$.partitions[1].log_dirs[0]", 'log dir "x" must be "any" or an absolute path'),
        ("$.partitions[2]", "7 is not of type 'object'"),
        ("$.partitions[3]", "listed twice: also at $.partitions[0]"),
        ("$.partitions[4].replicas", "replica list is empty; a partition needs at least one "
                                     "replica"),
    ]


def test_huge_offending_values_are_quoted_briefly() -> None:
    (where, message), = problems({"partitions": {str(i): i for i in range(100_000)}})
    assert where == "$.partitions" and len(message) < 400 and message.endswith("…")


def test_beyond_the_list_limit_problems_are_counted_not_kept(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """Every kind of problem shares one cap: the first LIST_LIMIT errors are kept (schema
    failures explained by jsonschema), every further one is only counted, each unexplained
    schema failure as one error."""
    monkeypatch.setattr(model, "LIST_LIMIT", 3)
    doc = reassign(move("t", 0), move("t", 0), move("bad name", 1), move("t", 2, extra=1),
                   move("t", 3, extra=1), move("t", 0), move("bad name", 4))
    report = plans.validate_document(doc)
    assert [(p.where, p.message) for p in report.problems] == [
        ("$.partitions[1]", "listed twice: also at $.partitions[0]"),
        ("$.partitions[2].topic", "illegal topic name \"bad name\": Kafka allows only ASCII "
                                  "letters, digits, '.', '_' and '-'"),
        ("$.partitions[3]", "Additional properties are not allowed ('extra' was unexpected)"),
    ]
    assert report.omitted_errors == 3 and report.error_count == 6
    assert report.to_json()["error_count"] == 6 and len(report.to_json()["errors"]) == 3
    assert not report.ok() and report.plan is None


def test_ten_thousand_identical_entries_keep_a_hundred_problems() -> None:
    report = plans.validate_document(reassign(*[move("t", 0)] * 10_000))
    assert len(report.problems) == model.LIST_LIMIT == 100
    assert report.error_count == 9_999


def test_report_to_json() -> None:
    report = plans.validate_document({"partitions": [move(partition=-1)]})
    assert report.to_json() == {
        "valid": False, "kind": "reassign",
        "errors": [{"path": "$.partitions[0].partition", "partition": None,
                    "message": "partition id -1 is negative"}],
        "warnings": [], "error_count": 1, "warning_count": 0}
    assert plans.validate_document([]).to_json()["kind"] is None
    report = plans.validate_document({"partitions": [move("orders", 17, replicas=[])]})
    assert report.to_json()["errors"] == [{
        "path": "$.partitions[0].replicas", "partition": "orders-17",
        "message": "replica list is empty; a partition needs at least one replica"}]


def test_a_problem_inside_an_entry_names_its_partition() -> None:
    """Issue 20 item 11: in a million-entry plan the path's index does not tell the operator
    which partition it is; the partition goes next to it, where the entry names one soundly."""
    doc = reassign(move("orders", 17, replicas=[]), move("orders", -1), move("bad\nname", 2),
                   move("pay", 3, extra=1), 7, move("orders", 17))
    report = plans.validate_document(doc)
    assert [(p.where, p.subject, p.path) for p in report.problems] == [
        ("$.partitions[0].replicas", "orders-17", ("partitions", 0, "replicas")),
        ("$.partitions[1].partition", None, ("partitions", 1, "partition")),
        ("$.partitions[2].topic", "bad\\nname-2", ("partitions", 2, "topic")),
        ("$.partitions[3]", "pay-3", ("partitions", 3)),
        ("$.partitions[4]", None, ("partitions", 4)),
        ("$.partitions[5]", "orders-17", ("partitions", 5)),
    ]
    assert str(report.problems[0]) == ("$.partitions[0].replicas (orders-17): replica list is "
                                       "empty; a partition needs at least one replica")
    assert report.invalid("p.json").details[0].startswith("$.partitions[0].replicas (orders-17): ")
    top = plans.validate_document({"version": 2, "partitions": []})
    assert [(p.where, p.subject, p.path) for p in top.problems] == [
        ("$.version", None, ("version",)), ("$.partitions", None, ("partitions",))]


# --- against the cluster -----------------------------------------------------------------------

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b) for b in (1, 2, 3)},
    topics={"foo": {0: (1, 2), 1: (2, 3)}, "bar": {0: (3, 1)},
            "__consumer_offsets": {0: (1, 2)}},
    states={"foo": {0: PartitionState(leader=2, isr=(2,)), 1: PartitionState(leader=2, isr=(2, 3))},
            "bar": {0: PartitionState(leader=3, isr=(3, 1))}},
)


def cluster_problems(plan: Any, **options: bool) -> list[tuple[str, str, Severity]]:
    return [(p.where, p.message, p.severity)
            for p in plans.validate_against_cluster(plan, CLUSTER, **options)]


def test_reassignment_against_cluster() -> None:
    plan = ReassignmentPlan((
        PartitionMove("bar", 0, (1, 2)),          # fine
        PartitionMove("foo", 1, (3, 4)),          # broker 4 unknown
        PartitionMove("foo", 5, (1, 2)),          # partition unknown
        PartitionMove("foo", 0, (1, 2, 3)),       # RF 2 -> 3
        PartitionMove("nope", 0, (1,)),           # topic unknown (named once)
        PartitionMove("nope", 1, (1,)),
    ))
    assert cluster_problems(plan) == [
        ("nope", "unknown topic nope (not in /brokers/topics; 2 partition(s) of the plan)",
         Severity.ERROR),
        ("foo-5", "unknown partition: topic foo has 2 partition(s)", Severity.ERROR),
        ("foo-1", "broker(s) 4 of replicas [3, 4] not registered in /brokers/ids", Severity.ERROR),
        ("foo-0", "changes the replication factor from 2 to 3 (allowed with --allow-rf-change)",
         Severity.ERROR),
    ]
    assert ("foo-0", "changes the replication factor from 2 to 3 (allowed with "
                     "--allow-rf-change)", Severity.ERROR) not in cluster_problems(
        plan, allow_rf_change=True)


def test_a_reordering_with_a_broker_that_is_down_completes() -> None:
    """Kafka's controller (2.4+) refuses only new replicas on brokers that are not alive; a
    reordering adds none and completes at once, so an unregistered broker in it is a warning
    (plan demote takes leadership off a broker that is down), unless it is to lead."""
    down = ClusterSnapshot(brokers={1: Broker(1), 2: Broker(2)}, topics={"t": {0: (3, 1, 2),
                                                                               1: (1, 3)}})
    plan = ReassignmentPlan((PartitionMove("t", 0, (1, 3, 2)), PartitionMove("t", 1, (3, 1))))
    assert [(p.where, p.message, p.severity)
            for p in plans.validate_against_cluster(plan, down)] == [
        ("t-0", "broker(s) 3 of replicas [1, 3, 2] not registered in /brokers/ids; the "
                "reordering completes at once all the same", Severity.WARNING),
        ("t-1", "preferred replica 3 of [3, 1] is not registered in /brokers/ids; it could not "
                "lead", Severity.ERROR),
    ]


def test_election_against_cluster() -> None:
    offline = ClusterSnapshot(brokers={2: Broker(2), 3: Broker(3)}, topics=CLUSTER.topics,
                              states=CLUSTER.states)
    plan = ElectionPlan((TopicPartition("bar", 0), TopicPartition("foo", 0),
                         TopicPartition("foo", 1), TopicPartition("foo", 9),
                         TopicPartition("gone", 0), TopicPartition("__consumer_offsets", 0)))
    assert [(p.where, p.message, p.severity) for p in
            plans.validate_against_cluster(plan, offline)] == [
        ("gone", "unknown topic gone (not in /brokers/topics; 1 partition(s) of the plan)",
         Severity.ERROR),
        ("foo-9", "unknown partition: topic foo has 2 partition(s)", Severity.ERROR),
        # bar-0 prefers 3, alive and in the ISR: nothing to say
        ("foo-0", "preferred replica 1 is offline; the controller will skip this partition",
         Severity.WARNING),
        # __consumer_offsets-0 prefers offline broker 1 too; its state is unknown to the snapshot
        ("__consumer_offsets-0", "preferred replica 1 is offline; the controller will skip this "
                                 "partition", Severity.WARNING),
    ]
    assert cluster_problems(ElectionPlan((TopicPartition("foo", 0),))) == [
        ("foo-0", "preferred replica 1 is not in the ISR [2]; the controller will skip this "
                  "partition", Severity.WARNING)]
    assert cluster_problems(ElectionPlan((TopicPartition("foo", 1),))) == []


def test_deletion_against_cluster() -> None:
    plan = DeletionPlan(("__consumer_offsets", "__transaction_state", "bar"))
    assert cluster_problems(plan) == [
        ("__consumer_offsets", "__consumer_offsets is an internal topic; deleting it loses state "
                               "every client depends on (allowed with --allow-internal)",
         Severity.ERROR),
        ("__transaction_state", "unknown topic __transaction_state (not in /brokers/topics)",
         Severity.ERROR),
        ("__transaction_state", "__transaction_state is an internal topic; deleting it loses state "
                                "every client depends on (allowed with --allow-internal)",
         Severity.ERROR),
    ]
    assert cluster_problems(DeletionPlan(("__consumer_offsets", "bar")), allow_internal=True) == []


def test_validate_combines_document_and_cluster() -> None:
    doc = reassign(move("foo", 0, (2, 3)), move("foo", 1, (3, 1, 2)))
    report = plans.validate(doc, None, CLUSTER)
    assert [str(p) for p in report.errors] == [
        "foo-1: changes the replication factor from 2 to 3 (allowed with --allow-rf-change)"]
    assert report.plan is None and report.kind is PlanKind.REASSIGN
    allowed = plans.validate(doc, None, CLUSTER, allow_rf_change=True)
    assert allowed.ok() and allowed.plan is not None and len(allowed.plan.moves) == 2
    # warnings keep the plan
    election = plans.validate({"partitions": [{"topic": "foo", "partition": 0}]}, None, CLUSTER)
    assert election.ok() and not election.ok(strict=True) and election.plan is not None
    # no cluster check when the document itself is broken
    assert plans.validate(reassign(move("nope", -1)), None, CLUSTER).problems == \
        plans.validate_document(reassign(move("nope", -1))).problems


def test_cluster_problems_share_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model, "LIST_LIMIT", 2)
    doc = {"partitions": [{"topic": "foo", "partition": p} for p in range(2, 12)]}
    report = plans.validate(doc, None, CLUSTER)
    assert [p.where for p in report.errors] == ["foo-2", "foo-3"]
    assert report.error_count == 10 and report.plan is None


# --- fuzz --------------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20)
TOPICS = st.sampled_from(["foo", "bar", "a.b_c-1", "", ".", "..", "bad name", "foo\n", "t" * 256])
IDS = st.integers(-2, 4) | st.sampled_from([1.0, True, "1"])
LOG_DIRS = st.lists(st.sampled_from(["any", "/data", "rel", 3]), max_size=4)


def _entry_values(key: str) -> st.SearchStrategy[Any]:
    """Mostly plausible values (so the deep rules run), sometimes anything at all."""
    plausible = {"topic": TOPICS, "partition": IDS, "replicas": st.lists(IDS, max_size=4),
                 "log_dirs": LOG_DIRS}.get(key, JSON)
    return st.one_of(plausible, plausible, plausible, JSON)


ENTRY = st.lists(st.sampled_from(["topic", "partition", "replicas", "log_dirs", "leader"]),
                 unique=True, min_size=2).flatmap(
    lambda keys: st.fixed_dictionaries({k: _entry_values(k) for k in keys}))
OPTIONAL = {"version": st.sampled_from([1, 1, 2, "1", 1.0]), "extra": JSON}
PLAN_SHAPED = st.one_of(
    st.fixed_dictionaries({"partitions": st.lists(ENTRY, max_size=6) | JSON}, optional=OPTIONAL),
    st.fixed_dictionaries({"topics": st.lists(TOPICS, max_size=6) | st.lists(JSON, max_size=3)
                           | JSON}, optional=OPTIONAL),
    st.fixed_dictionaries({}, optional={"partitions": JSON, "topics": JSON, **OPTIONAL}),
)


@settings(max_examples=300)
@given(doc=JSON | PLAN_SHAPED, kind=st.sampled_from([None, *PlanKind]))
def test_validate_document_never_raises_and_agrees_with_the_schema(doc: Any,
                                                                   kind: PlanKind | None) -> None:
    report = plans.validate_document(doc, kind)
    assert report.kind is (kind or plans.detect_kind(doc))
    assert all(p.where.startswith("$") for p in report.problems)
    if report.kind is None:
        assert report.errors and report.plan is None
        return
    if not schema.validator(plans.SCHEMAS[report.kind]).is_valid(doc):
        assert report.errors, "the schema refuses the document but kadmin found no error"
    if not report.errors:
        assert report.plan is not None
        # what kadmin writes back validates to the same plan (the kind is given: the empty
        # election and reassignment documents are the same document)
        written = plans.plan_document(report.plan)
        assert plans.validate_document(written, report.kind).plan == report.plan
    else:
        assert report.plan is None


VALID_MOVES = st.lists(
    st.tuples(st.sampled_from(["foo", "bar", "baz.1"]), st.integers(0, 50),
              st.lists(st.integers(0, 9), min_size=1, max_size=4, unique=True), st.booleans()),
    unique_by=lambda t: (t[0], t[1]), min_size=1, max_size=30)


@settings(max_examples=100)
@given(moves=VALID_MOVES)
def test_valid_reassignments_parse_to_exactly_their_moves(moves: list[Any]) -> None:
    doc = reassign(*[move(t, p, r, **({"log_dirs": ["any"] * len(r)} if dirs else {}))
                     for t, p, r, dirs in moves])
    report = plans.validate_document(doc)
    assert report.problems == ()
    assert report.plan == ReassignmentPlan(tuple(sorted(
        PartitionMove(t, p, tuple(r), ("any",) * len(r) if dirs else None)
        for t, p, r, dirs in moves)))
