"""Snapshot files: round trips, every error message, and agreement of the fast structural pass with
schemas/cluster.schema.json (the authoritative rules)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kadmin import schema, snapshots
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    InvalidInput,
    PartitionState,
    Reassignment,
    TopicPartition,
)
from kadmin.synthetic import synthetic_cluster

SCHEMA = "cluster.schema.json"
DELETE = object()

STATE = {"leader": 0, "isr": [0, 1, 2], "leader_epoch": 0, "controller_epoch": 1}
BASE: dict[str, Any] = {
    "version": 1,
    "brokers": {"0": {"host": "h0", "port": 9092, "rack": "r1"}, "1": {"host": "h1", "port": 9092},
                "2": {}},
    "topics": {"foo": {"0": [0, 1, 2], "1": [1, 2, 0]}, "my.topic": {"0": [2]}},
    "states": {"foo": {"0": STATE}},
    # foo-1 moves from [2, 0] to [1, 2]: its topic znode lists both, target first
    "reassigning": {"foo": {"1": {"target": [1, 2], "original": [2, 0]}}},
    # measured sizes, the moving partition's among them: both kinds of extra travel together
    "sizes": {"foo": {"0": 1000, "1": 2000}, "my.topic": {"0": 0}},
    "controller": {"brokerid": 0},
    "controller_epoch": 1,
}
EXPECTED = ClusterSnapshot(
    brokers={0: Broker(0, "h0", 9092, "r1"), 1: Broker(1, "h1", 9092), 2: Broker(2)},
    topics={"foo": {0: (0, 1, 2), 1: (1, 2, 0)}, "my.topic": {0: (2,)}},
    states={"foo": {0: PartitionState(0, (0, 1, 2), 0, 1)}},
    controller=0,
    controller_epoch=1,
    reassigning={"foo": {1: Reassignment(target=(1, 2), original=(2, 0))}},
    sizes={"foo": {0: 1000, 1: 2000}, "my.topic": {0: 0}},
)


def changed(keys: tuple[str, ...], value: object, doc: dict[str, Any] = BASE) -> Any:
    """A deep copy of ``doc`` with ``value`` at ``keys`` (DELETE removes the key)."""
    out = copy.deepcopy(doc)
    target = out
    for key in keys[:-1]:
        target = target[key]
    if value is DELETE:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return out


def schema_accepts(doc: object, definition: str | None = None) -> bool:
    """Validity per the schema file, or per one of its $defs (the folder form's parts)."""
    if definition is None:
        return schema.validator(SCHEMA).is_valid(doc)
    whole = schema.load_schema(SCHEMA)
    part = {**whole["$defs"][definition], "$defs": whole["$defs"]}
    return schema.KadminValidator(part).is_valid(doc)


def states_belong(doc: dict[str, Any]) -> bool:
    """The one rule outside the schema: every state belongs to a listed partition."""
    topics = doc["topics"]
    return all(name in topics and states.keys() <= topics[name].keys()
               for name, states in doc.get("states", {}).items())


def fast_pass_accepts(doc: object) -> bool:
    try:
        snapshots.snapshot_from_document(doc, "c.json")
    except InvalidInput as exc:
        assert str(exc).startswith("c.json: $")
        assert "\n" not in str(exc)
        return False
    return True


# --- the document form --------------------------------------------------------------------------


def test_the_documented_example() -> None:
    assert snapshots.snapshot_from_document(BASE, "cluster.json") == EXPECTED


def test_document_round_trip_is_sorted_and_stable() -> None:
    doc = snapshots.snapshot_to_document(EXPECTED)
    assert list(doc["topics"]) == ["foo", "my.topic"]
    assert doc == BASE
    assert snapshots.snapshot_from_document(doc, "x") == EXPECTED


MESSAGES: list[tuple[tuple[str, ...], object, str]] = [
    (("extra",), 1,
     "$.extra: unknown key (expected version, brokers, topics, states, reassigning, sizes, "
     "controller, controller_epoch)"),
    (("topics",), DELETE, "$: missing topics"),
    (("brokers",), DELETE, "$: missing brokers"),
    (("version",), DELETE, "$: missing version"),
    (("version",), 2, "$.version: unsupported snapshot version 2 (this kadmin reads 1)"),
    (("version",), True, "$.version: unsupported snapshot version true (this kadmin reads 1)"),
    (("brokers",), [], "$.brokers: must be an object of broker id -> broker"),
    (("brokers", "01"), {}, '$.brokers.01: "01" is not a broker id '
                            "(a non-negative decimal integer without leading zeros)"),
    (("brokers", "-1"), {}, '$.brokers.-1: "-1" is not a broker id '
                            "(a non-negative decimal integer without leading zeros)"),
    (("brokers", "b1"), {}, '$.brokers.b1: "b1" is not a broker id '
                            "(a non-negative decimal integer without leading zeros)"),
    (("brokers", "0"), "h0", "$.brokers.0: must be an object (host, port, rack, all optional)"),
    (("brokers", "0", "port"), "9092", '$.brokers.0.port: must be an integer or null, got "9092"'),
    (("brokers", "0", "port"), 9092.0, "$.brokers.0.port: must be an integer or null, got 9092.0"),
    (("brokers", "0", "host"), ["h"], '$.brokers.0.host: must be a string or null, got ["h"]'),
    (("brokers", "0", "rack"), 1, "$.brokers.0.rack: must be a string or null, got 1"),
    (("topics",), [], "$.topics: must be an object of topic -> partitions"),
    (("topics", "a b"), {"0": [0]}, '$.topics["a b"]: "a b" is not a legal topic name '
                                    '(1 to 255 characters from a-z A-Z 0-9 . _ -, and not "." or "..")'),
    (("topics", ".."), {"0": [0]}, '$.topics[".."]: ".." is not a legal topic name '
                                   '(1 to 255 characters from a-z A-Z 0-9 . _ -, and not "." or "..")'),
    (("topics", "t" * 256), {"0": [0]}, f'$.topics.{"t" * 256}: "{"t" * 56}... is not a legal topic '
                                        'name (1 to 255 characters from a-z A-Z 0-9 . _ -, and not '
                                        '"." or "..")'),
    (("topics", "foo"), [[0, 1]], "$.topics.foo: must be an object of partition id -> replicas"),
    (("topics", "foo", "3"), "0,1",
     '$.topics.foo.3: replicas must be a list of broker ids (integers >= 0), got "0,1"'),
    (("topics", "foo", "3"), [0, -1],
     "$.topics.foo.3: replicas must be a list of broker ids (integers >= 0), got [0, -1]"),
    (("topics", "foo", "3"), [0, 1.0],
     "$.topics.foo.3: replicas must be a list of broker ids (integers >= 0), got [0, 1.0]"),
    (("topics", "foo", "3"), [0, True],
     "$.topics.foo.3: replicas must be a list of broker ids (integers >= 0), got [0, true]"),
    (("topics", "foo", "3"), [], "$.topics.foo.3: replicas must not be empty"),
    (("topics", "foo", "3"), [0, 1, 0], "$.topics.foo.3: replicas lists broker 0 twice"),
    (("topics", "foo", "x"), [0], '$.topics.foo.x: "x" is not a partition id '
                                  "(a non-negative decimal integer without leading zeros)"),
    (("topics", "foo", "1.0"), [0], '$.topics.foo["1.0"]: "1.0" is not a partition id '
                                    "(a non-negative decimal integer without leading zeros)"),
    (("topics", "foo", "٣"), [0], '$.topics.foo["٣"]: "٣" is not a partition id '
                                  "(a non-negative decimal integer without leading zeros)"),
    (("topics", "my.topic", "0"), "x",
     '$.topics["my.topic"].0: replicas must be a list of broker ids (integers >= 0), got "x"'),
    (("states",), None, "$.states: must be an object of topic -> partition id -> state"),
    (("states", "a/b"), {}, '$.states["a/b"]: "a/b" is not a legal topic name '
                            '(1 to 255 characters from a-z A-Z 0-9 . _ -, and not "." or "..")'),
    (("states", "foo"), [], "$.states.foo: must be an object of partition id -> state"),
    (("states", "foo", "0"), 5, "$.states.foo.0: must be an object with leader and isr"),
    (("states", "foo", "0", "isr"), DELETE, "$.states.foo.0: missing isr"),
    (("states", "foo", "0", "leader"), DELETE, "$.states.foo.0: missing leader"),
    (("states", "foo", "0", "leader"), -2,
     "$.states.foo.0.leader: must be a broker id or -1 (no leader), got -2"),
    (("states", "foo", "0", "leader"), None,
     "$.states.foo.0.leader: must be a broker id or -1 (no leader), got null"),
    (("states", "foo", "0", "isr"), [0, 0], "$.states.foo.0.isr: isr lists broker 0 twice"),
    (("states", "foo", "0", "isr"), "0",
     '$.states.foo.0.isr: isr must be a list of broker ids (integers >= 0), got "0"'),
    (("states", "foo", "0", "leader_epoch"), -1,
     "$.states.foo.0.leader_epoch: must be an integer >= 0, got -1"),
    (("states", "foo", "0", "controller_epoch"), "1",
     '$.states.foo.0.controller_epoch: must be an integer >= 0, got "1"'),
    (("states", "foo", "01"), STATE, '$.states.foo.01: "01" is not a partition id '
                                     "(a non-negative decimal integer without leading zeros)"),
    (("reassigning",), [], "$.reassigning: must be an object of topic -> partition id -> "
                           "reassignment"),
    (("reassigning", "a b"), {}, '$.reassigning["a b"]: "a b" is not a legal topic name '
                                 '(1 to 255 characters from a-z A-Z 0-9 . _ -, and not "." or "..")'),
    (("reassigning", "foo"), [], "$.reassigning.foo: must be an object of partition id -> "
                                 "reassignment"),
    (("reassigning", "foo", "01"), {"target": [1], "original": [2]},
     '$.reassigning.foo.01: "01" is not a partition id '
     "(a non-negative decimal integer without leading zeros)"),
    (("reassigning", "foo", "1"), [1, 2],
     '$.reassigning.foo.1: must be an object {"target": [...], "original": [...]}'),
    (("reassigning", "foo", "1", "target"), DELETE, "$.reassigning.foo.1: missing target"),
    (("reassigning", "foo", "1", "original"), DELETE, "$.reassigning.foo.1: missing original"),
    (("reassigning", "foo", "1", "adding"), [1],
     "$.reassigning.foo.1.adding: unknown key (expected target, original)"),
    (("reassigning", "foo", "1", "target"), [], "$.reassigning.foo.1.target: target must not be "
                                                "empty"),
    (("reassigning", "foo", "1", "original"), [2, 2],
     "$.reassigning.foo.1.original: original lists broker 2 twice"),
    (("sizes",), [], "$.sizes: must be an object of topic -> partition id -> bytes"),
    (("sizes", "a b"), {}, '$.sizes["a b"]: "a b" is not a legal topic name '
                           '(1 to 255 characters from a-z A-Z 0-9 . _ -, and not "." or "..")'),
    (("sizes", "foo"), [1], "$.sizes.foo: must be an object of partition id -> bytes"),
    (("sizes", "foo", "01"), 5, '$.sizes.foo.01: "01" is not a partition id '
                                "(a non-negative decimal integer without leading zeros)"),
    (("sizes", "foo", "0"), -1, "$.sizes.foo.0: must be a size in bytes (an integer >= 0), got -1"),
    (("sizes", "foo", "0"), 1.5,
     "$.sizes.foo.0: must be a size in bytes (an integer >= 0), got 1.5"),
    (("sizes", "foo", "0"), True,
     "$.sizes.foo.0: must be a size in bytes (an integer >= 0), got true"),
    (("controller",), 0, '$.controller: must be an object {"brokerid": <broker id>}'),
    (("controller",), {"version": 1}, "$.controller: missing brokerid"),
    (("controller", "brokerid"), -1,
     "$.controller.brokerid: must be a broker id (an integer >= 0), got -1"),
    (("controller_epoch",), None, "$.controller_epoch: must be an integer >= 0, got null"),
]
SEMANTIC: list[tuple[tuple[str, ...], object, str]] = [
    (("states", "bar"), {"0": STATE}, "$.states.bar: no topic bar in $.topics"),
    (("states", "foo", "7"), STATE, "$.states.foo.7: topic foo has no partition 7 in $.topics"),
    (("reassigning", "bar"), {"0": {"target": [1], "original": [2]}},
     "$.reassigning.bar: no topic bar in $.topics"),
    (("reassigning", "foo", "7"), {"target": [1], "original": [2]},
     "$.reassigning.foo.7: topic foo has no partition 7 in $.topics"),
    (("reassigning", "foo", "1"), {"target": [2, 1], "original": [1, 2]},
     "$.reassigning.foo.1: target and original hold the same brokers, so the partition is not "
     "being reassigned"),
    (("reassigning", "foo", "1"), {"target": [1, 2], "original": [2, 5]},
     "$.reassigning.foo.1: topic foo lists replicas [1, 2, 0] for partition 1 in $.topics, not "
     "the target and original together"),
    (("sizes", "bar"), {"0": 1}, "$.sizes.bar: no topic bar in $.topics"),
    (("sizes", "foo", "7"), 1, "$.sizes.foo.7: topic foo has no partition 7 in $.topics"),
]
VALID: list[tuple[tuple[str, ...], object]] = [
    (("states",), DELETE),
    (("controller",), DELETE),
    (("controller_epoch",), DELETE),
    (("brokers",), {}),
    (("topics", "empty"), {}),
    (("states",), {}),
    (("reassigning",), DELETE),
    (("reassigning",), {}),
    (("reassigning", "foo"), {}),
    (("sizes",), DELETE),
    (("sizes",), {}),
    (("sizes", "foo"), {}),
    (("sizes", "foo", "0"), 2**63 - 1),  # a Java long, as Kafka reports it
    (("brokers", "0"), {"version": 5, "host": None, "port": -1, "jmx_port": -1,
                        "endpoints": ["SSL://h0:9093"], "timestamp": "1"}),
    (("brokers", "0", "rack"), None),
    (("topics", "t" * 249), {"0": [7, 8]}),  # replicas on unregistered (dead) brokers
    (("topics", "t" * 255), {"0": [7]}),  # as long as Kafka 0.8 and 0.9 allowed
    (("topics", "a-b_c.D9"), {"10": [0], "0": [1]}),
    (("states", "foo", "0"), {"leader": -1, "isr": [], "version": 1,
                              "leader_recovery_state": 0}),
    (("controller",), {"version": 1, "brokerid": 2, "timestamp": "1452068227409"}),
    (("controller_epoch",), 0),
]


@pytest.mark.parametrize(("keys", "value", "message"), MESSAGES + SEMANTIC)
def test_invalid_documents_name_the_file_and_path(keys: tuple[str, ...], value: object,
                                                  message: str) -> None:
    with pytest.raises(InvalidInput) as info:
        snapshots.snapshot_from_document(changed(keys, value), "cluster.json")
    assert str(info.value) == f"cluster.json: {message}"
    assert info.value.exit_code == 2


@pytest.mark.parametrize("doc", [[], None, "x", 1])
def test_a_snapshot_must_be_an_object(doc: object) -> None:
    with pytest.raises(InvalidInput) as info:
        snapshots.snapshot_from_document(doc, "cluster.json")
    assert str(info.value) == "cluster.json: $: a snapshot must be a JSON object"


@pytest.mark.parametrize(("keys", "value"), VALID)
def test_valid_variants(keys: tuple[str, ...], value: object) -> None:
    assert fast_pass_accepts(changed(keys, value))


# --- the schema stays authoritative -------------------------------------------------------------


def test_schema_agrees_on_the_example_the_errors_and_the_variants() -> None:
    assert schema_accepts(BASE)
    for keys, value, message in MESSAGES:
        assert not schema_accepts(changed(keys, value)), message
    for keys, value, message in SEMANTIC:  # beyond what a schema can say
        assert schema_accepts(changed(keys, value)), message
    for keys, value in VALID:
        assert schema_accepts(changed(keys, value)), keys
    not_objects: list[object] = [[], None, "x", 1]
    for doc in not_objects:
        assert not schema_accepts(doc)


def _mostly(valid: st.SearchStrategy[Any], invalid: st.SearchStrategy[Any]
            ) -> st.SearchStrategy[Any]:
    """``valid`` nine times in ten: a document is only valid if every part is, and half of the
    generated documents should be."""
    return st.integers(0, 9).flatmap(lambda i: invalid if i == 5 else valid)


_junk = st.one_of(st.none(), st.booleans(), st.integers(-1, 2), st.sampled_from(["x", 0.5]),
                  st.just([]), st.just({}), st.just([1, "a"]))
_ints = _mostly(st.integers(0, 3), st.sampled_from([-2, -1, True, False, 1.0, 2.5, "1", None]))
_ids = _mostly(st.integers(0, 3).map(str),
               st.sampled_from(["-1", "01", "00", "x", "", " 1", "+1", "1.0", "٣", "1_0"]))
# No name ends in a newline: Python's re (used by jsonschema) lets "$" match before a final
# newline, unlike the ECMA-262 regexes JSON Schema specifies, so "foo\n" would be a false alarm.
_names = _mostly(st.sampled_from(["foo", "bar", "a.b", "my-topic_1", "...", "t" * 249]),
                 st.one_of(st.sampled_from([".", "..", "a b", "", "a/b", "t" * 256, "é", "x\ny"]),
                           st.text(st.characters(codec="ascii", exclude_characters="\n"),
                                   max_size=3)))
_replicas = _mostly(st.lists(_ints, min_size=1, max_size=3), st.one_of(_junk, st.lists(_ints)))
_broker = _mostly(st.fixed_dictionaries({}, optional={
    "host": _mostly(st.sampled_from([None, "h"]), st.just(1)),
    "port": st.one_of(st.integers(-1, 9092), _ints),
    "rack": _mostly(st.sampled_from([None, "r"]), st.just(0)),
    "endpoints": st.just(["PLAINTEXT://h:1"]), "version": st.just(4)}), _junk)
_state = _mostly(st.fixed_dictionaries({"leader": st.one_of(st.just(-1), _ints),
                                        "isr": _mostly(st.lists(_ints, max_size=3), _junk)},
                                       optional={"leader_epoch": _ints, "controller_epoch": _ints,
                                                 "version": st.just(1)}),
                 st.one_of(_junk, st.fixed_dictionaries({}, optional={"leader": _ints,
                                                                      "isr": st.just([0])})))
_well_formed = st.fixed_dictionaries(
    {"version": _mostly(st.just(1), st.sampled_from([2, True, 1.0, "1"])),
     "brokers": _mostly(st.dictionaries(_ids, _broker, max_size=3), _junk),
     "topics": _mostly(st.dictionaries(
         _names, _mostly(st.dictionaries(_ids, _replicas, max_size=3), _junk), max_size=3), _junk)},
    optional={
        "controller": _mostly(st.fixed_dictionaries({"brokerid": _ints},
                                                    optional={"timestamp": st.just("1")}),
                              st.one_of(_junk, st.just({"version": 1}))),
        "controller_epoch": _ints,
    })


@st.composite
def _documents(draw: st.DrawFn) -> dict[str, Any]:
    """Near-valid snapshots; states mostly name partitions that exist, so the rule beyond the
    schema is exercised both ways."""
    doc = draw(_well_formed)
    topics = doc["topics"]
    known = [(name, p) for name, partitions in topics.items() if type(partitions) is dict
             for p in partitions] if type(topics) is dict else []
    anywhere = st.tuples(_names, _ids)
    where = _mostly(st.sampled_from(known), anywhere) if known else anywhere
    with_states: bool = bool(known) or draw(st.booleans())
    if with_states:
        states: dict[str, Any] = {}
        for name, p in draw(st.lists(where, min_size=bool(known), max_size=3)):
            states.setdefault(name, {})[p] = draw(_state)
        doc["states"] = draw(_mostly(st.just(states), _junk))
    if draw(_mostly(st.just(False), st.just(True))):
        doc["extra"] = 1
    return doc


@settings(max_examples=500)
@given(_documents())
def test_fast_pass_agrees_with_the_schema_on_generated_documents(doc: dict[str, Any]) -> None:
    expected = schema_accepts(doc) and states_belong(doc)
    assert fast_pass_accepts(doc) == expected


def _twin(value: Any) -> Any:
    """``value`` with its 0s and 1s as false and true: equal in Python, refused in a snapshot."""
    if type(value) is dict:
        return {k: _twin(v) for k, v in value.items()}
    if type(value) is list:
        return [_twin(v) for v in value]
    return bool(value) if type(value) is int and value in (0, 1) else value


@st.composite
def _listed_states(draw: st.DrawFn) -> dict[str, Any]:
    """Snapshots whose states key every partition of their topic, in the topic's order (the
    quick path of states), a state often repeated, or repeated as its twin."""
    topics = draw(st.dictionaries(
        st.sampled_from(["foo", "bar"]),
        st.dictionaries(st.integers(0, 5).map(str), st.just([0, 1]), min_size=2, max_size=4),
        min_size=1, max_size=2))
    first = draw(_state)
    states = {name: {p: draw(st.sampled_from([first, _twin(first), draw(_state)]))
                     for p in partitions} for name, partitions in topics.items()}
    return {"version": 1, "brokers": {}, "topics": topics, "states": states}


def outcome_of(doc: object) -> object:
    try:
        return snapshots.snapshot_from_document(doc, "c.json")
    except InvalidInput as exc:
        return str(exc)


@settings(max_examples=500)
@given(_listed_states())
def test_states_keyed_as_their_partitions_are_checked_as_closely(doc: dict[str, Any]) -> None:
    """The quick path of states agrees with the schema, and with the precise path, which reads
    the same states when the topics list their partitions in another order: the same snapshot,
    or the same error."""
    assert fast_pass_accepts(doc) == schema_accepts(doc)
    shuffled = {**doc, "topics": {name: dict(reversed(partitions.items()))
                                  for name, partitions in doc["topics"].items()}}
    assert outcome_of(doc) == outcome_of(shuffled)


def folder_outcome(folder: Path, doc: dict[str, Any]) -> object:
    """``doc`` written as a snapshot folder by hand (its parts as they are) and read."""
    folder.mkdir(exist_ok=True)
    (folder / "brokers.json").write_text(json.dumps(doc["brokers"]))
    (folder / "topics.jsonl").write_text("".join(
        json.dumps({"topic": t, "partitions": p}) + "\n" for t, p in doc["topics"].items()))
    (folder / "states.jsonl").write_text("".join(
        json.dumps({"topic": t, "states": s}) + "\n" for t, s in doc["states"].items()))
    try:
        return snapshots.read_snapshot(folder)
    except InvalidInput as exc:
        return str(exc)


@settings(max_examples=200)
@given(_listed_states())
def test_states_lines_keyed_as_their_partitions_are_checked_as_closely(
        tmp_path_factory: pytest.TempPathFactory, doc: dict[str, Any]) -> None:
    """The same in a snapshot folder: states.jsonl read the quick way, or the precise way when
    topics.jsonl lists the partitions in another order."""
    shuffled = {**doc, "topics": {name: dict(reversed(partitions.items()))
                                  for name, partitions in doc["topics"].items()}}
    base = tmp_path_factory.mktemp("snap")
    assert folder_outcome(base / "a", doc) == folder_outcome(base / "a", shuffled)


# --- files --------------------------------------------------------------------------------------


def test_json_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "cluster.json"
    snapshots.write_snapshot(EXPECTED, path)
    assert snapshots.read_snapshot(path) == EXPECTED
    text = path.read_text()
    assert '\n    "foo": {"0":[0,1,2],"1":[1,2,0]},\n' in text  # one topic per line
    assert schema_accepts(json.loads(text))


def test_write_refuses_an_existing_snapshot_unless_forced(tmp_path: Path) -> None:
    for fmt, name in (("json", "c.json"), ("dir", "snap")):
        path = tmp_path / name
        snapshots.write_snapshot(EXPECTED, path, fmt=fmt)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="already exists"):
            snapshots.write_snapshot(EXPECTED, path, fmt=fmt)  # type: ignore[arg-type]
        snapshots.write_snapshot(EXPECTED, path, fmt=fmt, force=True)  # type: ignore[arg-type]
        assert snapshots.read_snapshot(path) == EXPECTED
    with pytest.raises(InvalidInput, match="unknown snapshot format 'yaml'"):
        snapshots.write_snapshot(EXPECTED, tmp_path / "x", fmt="yaml")  # type: ignore[arg-type]


def test_folder_round_trip_and_layout(tmp_path: Path) -> None:
    path = tmp_path / "snap"
    snapshots.write_snapshot(EXPECTED, path, fmt="dir")
    assert sorted(p.name for p in path.iterdir()) == [
        "brokers.json", "meta.json", "reassigning.jsonl", "sizes.jsonl", "states.jsonl",
        "topics.jsonl"]
    assert (path / "topics.jsonl").read_text() == (
        '{"topic":"foo","partitions":{"0":[0,1,2],"1":[1,2,0]}}\n'
        '{"topic":"my.topic","partitions":{"0":[2]}}\n')
    assert (path / "states.jsonl").read_text() == (
        '{"topic":"foo","states":{"0":{"leader":0,"isr":[0,1,2],"leader_epoch":0,'
        '"controller_epoch":1}}}\n')
    assert json.loads((path / "meta.json").read_text()) == {
        "version": 1, "controller": {"brokerid": 0}, "controller_epoch": 1}
    assert schema_accepts(json.loads((path / "brokers.json").read_text()), "brokers")
    assert schema_accepts(json.loads((path / "meta.json").read_text()), "meta")
    for line in (path / "topics.jsonl").read_text().splitlines():
        assert schema_accepts(json.loads(line), "topicLine")
    for line in (path / "states.jsonl").read_text().splitlines():
        assert schema_accepts(json.loads(line), "statesLine")
    assert (path / "reassigning.jsonl").read_text() == (
        '{"topic":"foo","reassigning":{"1":{"target":[1,2],"original":[2,0]}}}\n')
    assert schema_accepts(json.loads((path / "reassigning.jsonl").read_text()), "reassigningLine")
    assert (path / "sizes.jsonl").read_text() == (
        '{"topic":"foo","sizes":{"0":1000,"1":2000}}\n'
        '{"topic":"my.topic","sizes":{"0":0}}\n')
    for line in (path / "sizes.jsonl").read_text().splitlines():
        assert schema_accepts(json.loads(line), "sizesLine")
    assert snapshots.read_snapshot(path) == EXPECTED
    assert list(tmp_path.iterdir()) == [path]  # no temp sibling left


def test_folder_without_states_controller_or_topics(tmp_path: Path) -> None:
    bare = ClusterSnapshot(brokers={0: Broker(0)}, topics={})
    snapshots.write_snapshot(bare, tmp_path / "snap", fmt="dir")
    assert sorted(p.name for p in (tmp_path / "snap").iterdir()) == [
        "brokers.json", "meta.json", "topics.jsonl"]
    assert snapshots.read_snapshot(tmp_path / "snap") == bare
    (tmp_path / "snap" / "meta.json").unlink()  # optional
    assert snapshots.read_snapshot(tmp_path / "snap") == bare


def test_synthetic_round_trips_through_both_forms(tmp_path: Path) -> None:
    cluster = synthetic_cluster(brokers=7, topics=20, partitions=5, replication_factor=3, racks=2)
    for fmt in ("json", "dir"):
        path = tmp_path / fmt
        snapshots.write_snapshot(cluster, path, fmt=fmt)  # type: ignore[arg-type]
        assert snapshots.read_snapshot(path) == cluster
    assert schema_accepts(snapshots.snapshot_to_document(cluster))


def test_iter_topics_jsonl_streams_topics(tmp_path: Path) -> None:
    snapshots.write_snapshot(EXPECTED, tmp_path / "snap", fmt="dir")
    assert list(snapshots.iter_topics_jsonl(tmp_path / "snap" / "topics.jsonl")) == [
        ("foo", {0: (0, 1, 2), 1: (1, 2, 0)}), ("my.topic", {0: (2,)})]


def test_read_errors_of_the_file_form(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as info:
        snapshots.read_snapshot(tmp_path / "missing.json")
    assert str(info.value) == f"{tmp_path / 'missing.json'}: no such file"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(changed(("topics", "foo", "3"), [])))
    with pytest.raises(InvalidInput) as info:
        snapshots.read_snapshot(path)
    assert str(info.value) == f"{path}: $.topics.foo.3: replicas must not be empty"


REPEATS = [
    # a repeat hiding a bad value behind a good one, and the reverse
    ('"foo": {"0": [0, 1, 2]', '"foo": {"0": [], "0": [0, 1, 2]', '"0"', "$.topics.foo"),
    ('"foo": {"0": [0, 1, 2]', '"foo": {"0": [0, 1, 2], "0": []', '"0"', "$.topics.foo"),
    ('"my.topic": {"0": [2]}}', '"my.topic": {"0": [2]}, "foo": {}}', '"foo"', "$.topics"),
    ('"leader": 0,', '"leader": 0, "leader": 1,', '"leader"', '$.states.foo["0"]'),
    ('"states": {"foo": {"0"', '"states": {"foo": {}, "foo": {"0"', '"foo"', "$.states"),
    ('"sizes": {"foo": {"0": 1000,', '"sizes": {"foo": {"0": 1000, "0": -1,', '"0"',
     "$.sizes.foo"),
    ('"brokers": {"0": {"host": "h0",', '"brokers": {"0": {"host": "h0", "host": "h0",',
     '"host"', '$.brokers["0"]'),
]


@pytest.mark.parametrize(("before", "after", "key", "where"), REPEATS)
def test_a_repeated_key_anywhere_in_a_snapshot_file_is_refused_first(
        tmp_path: Path, before: str, after: str, key: str, where: str) -> None:
    """The members of a partition each (topics, states, sizes) are parsed without looking for
    repeats and proved free of them by their count of keys: a repeat is refused all the same,
    in the same words, before whatever else is wrong."""
    text = json.dumps(BASE)
    assert text.count(before) == 1
    path = tmp_path / "c.json"
    path.write_text(text.replace(before, after))
    with pytest.raises(InvalidInput) as info:
        snapshots.read_snapshot(path)
    assert str(info.value) == (f"{path}: not valid JSON (duplicate key {key} in the object at "
                               f"{where})")


@pytest.mark.parametrize("extra", [
    {"leader_recovery_state": "RECOVERED: 1"}, {"version": 1, "more": {"a": {"b": [1]}}},
    {"x": ["a:b", {}]}])
def test_state_keys_kadmin_ignores_may_hold_anything(tmp_path: Path, extra: dict[str, Any]
                                                     ) -> None:
    """A state znode's other keys are allowed: their colons and objects make the count of keys
    disagree, and the snapshot is then read strictly, to the same result."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps(changed(("states", "foo", "0"), {**STATE, **extra})))
    assert snapshots.read_snapshot(path) == EXPECTED


# --- errors of the folder form ------------------------------------------------------------------


def snapshot_dir(tmp_path: Path, **contents: str | None) -> Path:
    """A snapshot folder made of EXPECTED, with some files replaced (``None`` text deletes)."""
    folder = tmp_path / "snap"
    snapshots.write_snapshot(EXPECTED, folder, fmt="dir")
    for name, text in contents.items():
        file = folder / name.replace("_", ".")
        if text is None:
            file.unlink()
        else:
            file.write_text(text)
    return folder


GOOD_TOPICS = '{"topic":"foo","partitions":{"0":[0,1,2],"1":[1,2,0]}}\n'
TOPIC_LINE_MESSAGES = [
    ('{"topic":"bar","partitions":{"0":[]}}', "$.partitions.0: replicas must not be empty"),
    ('["foo"]', '$: must be an object {"topic": ..., "partitions": {...}}'),
    ('{"topic":"bar","partitions":{},"extra":1}', "$.extra: unknown key (expected topic, partitions)"),
    ('{"topic":"bar"}', "$: missing partitions"),
    ('{"topic":7,"partitions":{}}', '$.topic: 7 is not a legal topic name (1 to 255 characters '
                                    'from a-z A-Z 0-9 . _ -, and not "." or "..")'),
    ('{"topic":"foo","partitions":{}}', "$.topic: topic foo is already on line 1"),
    ('{"topic":"bar","partitions":[]}', "$.partitions: must be an object of partition id -> replicas"),
    ('{"topic":"bar","partitions":{"-1":[0]}}', '$.partitions.-1: "-1" is not a partition id '
                                                "(a non-negative decimal integer without leading zeros)"),
]


@pytest.mark.parametrize(("line", "message"), TOPIC_LINE_MESSAGES)
def test_topics_jsonl_errors_name_file_line_and_path(tmp_path: Path, line: str,
                                                     message: str) -> None:
    folder = snapshot_dir(tmp_path, topics_jsonl=GOOD_TOPICS + "\n" + line + "\n")
    with pytest.raises(InvalidInput) as info:
        snapshots.read_snapshot(folder)
    assert str(info.value) == f"{folder / 'topics.jsonl'}:3: {message}"


def test_topic_lines_agree_with_the_schema() -> None:
    assert schema_accepts(json.loads(GOOD_TOPICS), "topicLine")
    for line, message in TOPIC_LINE_MESSAGES:
        if "already on line" not in message:  # a rule across lines, beyond the schema
            assert not schema_accepts(json.loads(line), "topicLine"), message


@pytest.mark.parametrize(("name", "text", "message"), [
    ("topics.jsonl", GOOD_TOPICS + '{"topic":\n', "topics.jsonl:2: not valid JSON "
                                                  "(Expecting value at column 10)"),
    ("states.jsonl", '{"topic":"bar","states":{}}\n', "states.jsonl:1: $.topic: no topic bar in "
                                                      "topics.jsonl"),
    ("states.jsonl", '{"topic":"foo","states":{"5":{"leader":0,"isr":[0]}}}\n',
     "states.jsonl:1: $.states.5: topic foo has no partition 5 in topics.jsonl"),
    ("states.jsonl", '{"topic":"foo","states":{"0":{"leader":0}}}\n',
     "states.jsonl:1: $.states.0: missing isr"),
    ("states.jsonl", '{"topic":"foo","states":{}}\n{"topic":"foo","states":{}}\n',
     "states.jsonl:2: $.topic: topic foo is already on line 1"),
    ("brokers.json", '{"01": {}}', 'brokers.json: $.01: "01" is not a broker id '
                                   "(a non-negative decimal integer without leading zeros)"),
    ("brokers.json", '{"1": {"port": "x"}}', 'brokers.json: $.1.port: must be an integer or null, '
                                             'got "x"'),
    ("brokers.json", "[]", "brokers.json: $: must be an object of broker id -> broker"),
    ("reassigning.jsonl", '{"topic":"bar","reassigning":{}}\n',
     "reassigning.jsonl:1: $.topic: no topic bar in topics.jsonl"),
    ("reassigning.jsonl", '{"topic":"foo","reassigning":{"0":{"target":[0],"original":[0,1,5]}}}\n',
     "reassigning.jsonl:1: $.reassigning.0: topic foo lists replicas [0, 1, 2] for partition 0 in "
     "topics.jsonl, not the target and original together"),
    ("reassigning.jsonl", '{"topic":"foo","reassigning":{"1":{"target":[1,2]}}}\n',
     "reassigning.jsonl:1: $.reassigning.1: missing original"),
    ("sizes.jsonl", '{"topic":"bar","sizes":{"0":1}}\n',
     "sizes.jsonl:1: $.topic: no topic bar in topics.jsonl"),
    ("sizes.jsonl", '{"topic":"foo","sizes":{"5":1}}\n',
     "sizes.jsonl:1: $.sizes.5: topic foo has no partition 5 in topics.jsonl"),
    ("sizes.jsonl", '{"topic":"foo","sizes":{"0":"1GB"}}\n',
     'sizes.jsonl:1: $.sizes.0: must be a size in bytes (an integer >= 0), got "1GB"'),
    ("meta.json", '{"version": 2}', "meta.json: $.version: unsupported snapshot version 2 "
                                    "(this kadmin reads 1)"),
    ("meta.json", '{"controller": {"brokerid": 1}}', "meta.json: $: missing version"),
    ("meta.json", '{"version": 1, "topics": {}}',
     "meta.json: $.topics: unknown key (expected version, controller, controller_epoch)"),
    ("meta.json", '{"version": 1, "controller_epoch": -1}',
     "meta.json: $.controller_epoch: must be an integer >= 0, got -1"),
    ("meta.json", "{", "meta.json: not valid JSON (Expecting property name enclosed in double "
                       "quotes at line 1 column 2)"),
])
def test_folder_errors_name_the_file(tmp_path: Path, name: str, text: str, message: str) -> None:
    folder = snapshot_dir(tmp_path, **{name.replace(".", "_"): text})
    with pytest.raises(InvalidInput) as info:
        snapshots.read_snapshot(folder)
    assert str(info.value) == f"{folder}/{message}"


def test_folder_parts_agree_with_the_schema() -> None:
    assert schema_accepts({"version": 1}, "meta")
    assert not schema_accepts({"version": 2}, "meta")
    assert not schema_accepts({"controller": {"brokerid": 1}}, "meta")
    assert not schema_accepts({"version": 1, "topics": {}}, "meta")
    assert not schema_accepts({"01": {}}, "brokers")
    assert schema_accepts({"topic": "foo", "states": {"0": {"leader": 0, "isr": [0]}}},
                          "statesLine")
    assert not schema_accepts({"topic": "foo", "states": {"0": {"leader": 0}}}, "statesLine")
    assert schema_accepts({"topic": "foo", "reassigning": {"0": {"target": [1], "original": [2]}}},
                          "reassigningLine")
    assert not schema_accepts({"topic": "foo", "reassigning": {"0": {"target": [1]}}},
                              "reassigningLine")
    assert schema_accepts({"topic": "foo", "sizes": {"0": 5}}, "sizesLine")
    assert not schema_accepts({"topic": "foo", "sizes": {"0": -5}}, "sizesLine")
    assert not schema_accepts({"topic": "foo"}, "sizesLine")


def test_a_folder_that_is_not_a_snapshot(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as info:
        snapshots.read_snapshot(tmp_path)
    assert str(info.value) == (f"{tmp_path} is a folder without brokers.json and topics.jsonl, "
                               "so not a snapshot folder")
    folder = snapshot_dir(tmp_path, topics_jsonl=None)
    with pytest.raises(InvalidInput) as info:
        snapshots.read_snapshot(folder)
    assert str(info.value) == f"{folder} is a folder without topics.jsonl, so not a snapshot folder"


def test_json_path_brackets_keys_that_are_not_plain() -> None:
    assert snapshots.json_path(()) == "$"
    assert snapshots.json_path(("topics", "my-topic_1", "3")) == "$.topics.my-topic_1.3"
    assert snapshots.json_path(("topics", "a.b", "3")) == '$.topics["a.b"].3'
    assert snapshots.json_path(("x y",)) == '$["x y"]'


def test_an_interrupted_stream_leaves_no_folder(tmp_path: Path) -> None:
    def broken() -> Any:
        yield "t", {0: (0,)}, {}
        raise RuntimeError("source died")

    with pytest.raises(RuntimeError):
        snapshots.write_snapshot_dir(tmp_path / "snap", {0: Broker(0)}, broken())
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["json", "dir"])
@pytest.mark.parametrize(("reassigning", "sizes"), [
    (True, True), (True, False), (False, True), (False, False)])
def test_reassigning_and_sizes_round_trip_alone_and_together(
        tmp_path: Path, fmt: str, reassigning: bool, sizes: bool) -> None:
    """Each extra survives both forms with or without the other; a folder holds a file for each
    one present and none for one absent."""
    snap = ClusterSnapshot(EXPECTED.brokers, EXPECTED.topics, EXPECTED.states,
                           EXPECTED.controller, EXPECTED.controller_epoch,
                           reassigning=EXPECTED.reassigning if reassigning else {},
                           sizes=EXPECTED.sizes if sizes else {})
    path = tmp_path / "snap"
    snapshots.write_snapshot(snap, path, fmt=fmt)  # type: ignore[arg-type]
    back = snapshots.read_snapshot(path)
    assert back == snap
    assert back.reassignment(TopicPartition("foo", 1)) == (
        Reassignment((1, 2), (2, 0)) if reassigning else None)
    assert back.sizes.get("foo", {}).get(1) == (2000 if sizes else None)
    if fmt == "dir":
        names = {p.name for p in path.iterdir()}
        assert ("reassigning.jsonl" in names) == reassigning
        assert ("sizes.jsonl" in names) == sizes
    else:
        doc = json.loads(path.read_text())
        assert ("reassigning" in doc, "sizes" in doc) == (reassigning, sizes)
        assert schema_accepts(doc)
