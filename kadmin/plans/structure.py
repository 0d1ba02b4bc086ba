"""Plan documents: detect, validate, parse, diff against a cluster, batch, and summarise. Pure.

A plan file is one of the three admin documents (docs/znodes.md): Kafka's
``kafka-reassign-partitions.sh`` file, the preferred replica election document, or the topic
deletion document. The JSON Schemas in ``schemas/`` are the authority on their shape; this module
adds the rules no schema can express (a partition listed twice, one log dir per replica) and the
rules that need the cluster (unknown partitions, brokers, replication factor changes).

Validation must take seconds on a million-partition plan, and jsonschema needs about 300 µs per
entry. So every entry first goes through a hand-written check of exactly the schema's shape rules
(types, required and allowed keys); only an entry that fails it is run through jsonschema, whose
messages then explain the failure. The schema's value rules (``minimum``, ``pattern``,
``uniqueItems``...) are checked here for every entry and reported with messages that name the
offending value, so jsonschema's findings for those keywords are dropped rather than repeated.
"""


from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from kadmin.jsontext import json_path
from kadmin.model import (
    MAX_ID,
    DeletionPlan,
    ElectionPlan,
    PartitionMove,
    Plan,
    PlanKind,
    Problem,
    ReassignmentPlan,
    Severity,
    TopicPartition,
    is_topic_name,
    printable,
    topic_name_problem,
)
from kadmin.plans.documents import detect_kind, not_a_plan, shortened
from kadmin.plans.report import Findings, ValidationReport

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


SCHEMAS = {
    PlanKind.REASSIGN: "reassign_partitions",
    PlanKind.ELECTION: "preferred_replica_election",
    PlanKind.DELETION: "delete_topics",
}
"""Schema file (``schemas/<name>.schema.json``) of each plan kind."""

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})

VALUE_KEYWORDS = frozenset({"minimum", "minItems", "uniqueItems", "pattern", "maxLength", "not"})
"""Schema keywords whose findings this module reports itself, naming the offending value."""

_TOO_LARGE = f"is larger than {MAX_ID}, the largest id Kafka allows (a Java int)"


class _Checker:
    """One validation run: collects problems in document order and explains schema failures."""

    def __init__(self, kind: PlanKind, list_key: str) -> None:
        self.findings = Findings()
        self.list_key = list_key
        from kadmin import schema  # jsonschema: only where documents are validated

        self.root = schema.validator(SCHEMAS[kind])
        self.entry = self.root.evolve(schema=self.root.schema["properties"][list_key]["items"])
        self.good_topics: set[str] = set()
        self.entries: list[Any] = []
        """The entries of a partitions list, to name the partition of a problem inside one."""

    @property
    def errors(self) -> int:
        return self.findings.errors.total

    def error(self, path: tuple[str | int, ...], message: str) -> None:
        """An error at ``path``, naming the partition when it is inside an entry; past the cap
        only counted, so neither the path nor the partition is worded."""
        if self.findings.errors.full:
            self.findings.add(Problem("", message))
            return
        self.findings.add(Problem(json_path(path), message, Severity.ERROR, self.subject(path),
                                  path))

    def subject(self, path: tuple[str | int, ...]) -> str | None:
        """``orders-17`` for a path into an entry whose topic and partition are sound."""
        if len(path) < 2 or path[0] != self.list_key or type(path[1]) is not int \
                or not 0 <= path[1] < len(self.entries):
            return None
        entry = self.entries[path[1]]
        if not isinstance(entry, dict):
            return None
        topic, partition = entry.get("topic"), entry.get("partition")
        if type(topic) is str and type(partition) is int and 0 <= partition <= MAX_ID:
            return f"{printable(topic)}-{partition}"
        return None

    def at(self, index: int, *field: str | int) -> tuple[str | int, ...]:
        return (self.list_key, index, *field)

    def schema_errors(self, validator: Validator, value: object,
                      prefix: tuple[str | int, ...]) -> bool:
        """Report jsonschema's shape findings for ``value``; True when there were any."""
        found = False
        for error in validator.iter_errors(value):
            if error.validator not in VALUE_KEYWORDS:
                self.error((*prefix, *error.absolute_path), shortened(error.message))
                found = True
        return found

    def entry_shape_ok(self, index: int, entry: object) -> bool:
        """For an entry the fast check refused: jsonschema's verdict, explained while errors
        are still shown. Beyond that (a file broken throughout) the entry counts as one error
        unexplained: at ~300 µs an entry, explaining a million would take minutes, and nobody
        would see the explanations."""
        if self.findings.errors.full:
            self.error(self.at(index), "does not match the schema")
            return False
        return not self.schema_errors(self.entry, entry, (self.list_key, index))

    def topic(self, index: int, field: tuple[str, ...], name: object) -> None:
        if type(name) is str and name not in self.good_topics:
            if is_topic_name(name):
                self.good_topics.add(name)
            else:  # worded only while shown: a million bad names cost a count past the cap
                self.error(self.at(index, *field), "illegal topic name" if self.findings.errors.full
                           else topic_name_problem(name) or "")


_MOVE_KEYS = frozenset({"topic", "partition", "replicas", "log_dirs"})
_MOVE_REQUIRED = frozenset({"topic", "partition", "replicas"})
_ELECTION_KEYS = frozenset({"topic", "partition"})


def _check_partitions(c: _Checker, entries: list[Any], with_replicas: bool
                      ) -> tuple[list[Any], list[Any]]:
    """The entries of a reassignment (``with_replicas``) or election plan; returns the moves or
    topic-partitions of the entries without problems, and of those that can be checked against
    a cluster all the same (a sound partition and replica ids, listed once; a broker listed
    twice in it, say).

    One pass, written for speed: this loop runs once per partition of the plan. Type tests are
    ``type(x) is int`` (JSON never yields subclasses, and bool must not pass as int); an entry the
    inline shape test refuses goes to jsonschema, which has the last word.
    """
    allowed, required = (_MOVE_KEYS, _MOVE_REQUIRED) if with_replicas else (_ELECTION_KEYS,) * 2
    seen: dict[tuple[str, int], int] = {}
    parsed: list[Any] = []
    checkable: list[Any] = []
    c.entries = entries
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            c.entry_shape_ok(i, e)  # always a finding: an entry must be an object
            continue
        topic: Any = e.get("topic")
        partition: Any = e.get("partition")
        keys = e.keys()
        typed = (keys <= allowed and required <= keys and type(topic) is str
                 and type(partition) is int)
        if with_replicas:
            replicas: Any = e.get("replicas")
            log_dirs: Any = e.get("log_dirs")
            typed = (typed and type(replicas) is list and all(type(r) is int for r in replicas)
                     and ((type(log_dirs) is list and all(type(d) is str for d in log_dirs))
                          or "log_dirs" not in e))
        shape_ok = typed or c.entry_shape_ok(i, e)
        errors = c.errors
        if not (typed and topic in c.good_topics):
            c.topic(i, ("topic",), topic)
        if type(partition) is int:
            if partition < 0:
                c.error(c.at(i, "partition"), f"partition id {partition} is negative")
            elif partition > MAX_ID:
                c.error(c.at(i, "partition"), f"partition id {partition} {_TOO_LARGE}")
            if type(topic) is str:
                first = seen.setdefault((topic, partition), i)
                if first != i:  # worded only while shown, as every problem past the cap;
                    # the partition is named next to the path
                    c.error(c.at(i), "listed twice" if c.findings.errors.full
                            else f"listed twice: also at {json_path(c.at(first))}")
        placed = typed and c.errors == errors  # its topic and partition are sound
        if with_replicas:
            _check_replicas(c, i, replicas, log_dirs, typed)
        if shape_ok and c.errors == errors:
            parsed.append(PartitionMove(topic, partition, tuple(replicas), None if log_dirs is None
                                        else tuple(log_dirs)) if with_replicas
                          else TopicPartition(topic, partition))
        elif placed and with_replicas and replicas and 0 <= min(replicas) <= max(replicas) <= MAX_ID:
            checkable.append(PartitionMove(topic, partition, tuple(replicas)))
    return parsed, checkable


def _check_replicas(c: _Checker, i: int, replicas: object, log_dirs: object, typed: bool) -> None:
    """``typed``: the shape test passed, so every replica is an int and every log dir a str."""
    if type(replicas) is list:
        ids = replicas if typed else [r for r in replicas if type(r) is int]
        if not replicas:
            c.error(c.at(i, "replicas"), "replica list is empty; a partition needs at least one "
                                         "replica")
        elif ids and (min(ids) < 0 or max(ids) > MAX_ID):
            for j, r in enumerate(replicas):
                if type(r) is int and not 0 <= r <= MAX_ID:
                    c.error(c.at(i, "replicas", j),
                            f"broker id {r} " + ("is negative" if r < 0 else _TOO_LARGE))
        if len(set(ids)) != len(ids):
            twice = sorted(b for b, n in Counter(ids).items() if n > 1)
            c.error(c.at(i, "replicas"), f"broker id(s) {', '.join(map(str, twice))} listed more "
                                          f"than once in {shortened(json.dumps(replicas, default=str))}")
    if type(log_dirs) is list:
        if type(replicas) is list and len(log_dirs) != len(replicas):
            c.error(c.at(i, "log_dirs"), f"{len(log_dirs)} log dir(s) for {len(replicas)} "
                                          f"replica(s); log_dirs needs one entry per replica")
        if log_dirs.count("any") != len(log_dirs):
            for j, d in enumerate(log_dirs):
                if type(d) is str and d != "any" and not d.startswith("/"):
                    c.error(c.at(i, "log_dirs", j),
                            f'log dir {json.dumps(d)} must be "any" or an absolute path')


def _check_topics(c: _Checker, entries: list[Any]) -> list[str]:
    seen: dict[str, int] = {}
    parsed = []
    for i, name in enumerate(entries):
        errors = c.errors
        shape_ok = type(name) is str or c.entry_shape_ok(i, name)
        c.topic(i, (), name)
        if type(name) is str:
            first = seen.setdefault(name, i)
            if first != i:
                c.error(c.at(i), f"topic {json.dumps(name)} is listed twice: also at "
                                 f"{json_path(c.at(first))}")
        if shape_ok and c.errors == errors:
            parsed.append(name)
    return parsed


def validate_document(doc: object, kind: PlanKind | None = None) -> ValidationReport:
    """Every problem of a plan document on its own (schema and structure), never the first only.

    ``kind`` None detects it from the shape. Never raises, whatever JSON value it is given.
    """
    kind = detect_kind(doc) if kind is None else kind
    if kind is None:
        return ValidationReport(None, (not_a_plan(doc),), None)
    list_key = "topics" if kind is PlanKind.DELETION else "partitions"
    c = _Checker(kind, list_key)
    top: dict[str, Any] = doc if isinstance(doc, dict) else {}
    entries, version = top.get(list_key), top.get("version", 1)
    if not (top is doc and top.keys() <= {"version", list_key} and type(entries) is list
            and type(version) is int and version == 1):
        # the top level alone: the entries are checked one by one below
        c.schema_errors(c.root, {**top, list_key: []} if type(entries) is list else doc, ())
    if type(entries) is not list:
        return c.findings.report(kind, None)
    if not entries:
        # an error in both anchors: Kafka's tool ("Partition reassignment data file is empty")
        # and kafka-utils ("Plan should have at least one partition"); a CI gate must not pass
        # a plan that does nothing
        c.error((list_key,), f"the plan lists no {list_key}; an empty plan does nothing")
    checkable: list[Any] = []
    if kind is PlanKind.DELETION:
        parsed: list[Any] = _check_topics(c, entries)
    else:
        parsed, checkable = _check_partitions(c, entries, with_replicas=kind is PlanKind.REASSIGN)
    if c.errors:
        sound = sorted((*parsed, *checkable))
        return c.findings.report(kind, None, _plan(kind, sound) if sound else None)
    # every entry either parsed or produced an error: a plan must never silently lose an entry
    assert len(parsed) == len(entries)
    parsed.sort()  # (topic, partition) is unique here, so tuple order is plan order
    return c.findings.report(kind, _plan(kind, parsed))


def _plan(kind: PlanKind, entries: list[Any]) -> Plan:
    if kind is PlanKind.REASSIGN:
        return ReassignmentPlan(tuple(entries))
    if kind is PlanKind.ELECTION:
        return ElectionPlan(tuple(entries))
    return DeletionPlan(tuple(entries))


def parse_plan(doc: object, kind: PlanKind | None) -> Plan:
    """The plan a document describes, entries sorted by (topic, partition) or topic name.

    Validates first (one linear pass), so a bad document is an :class:`InvalidInput` naming the
    first problem (the others in ``details``), never a half-built plan.
    """
    report = validate_document(doc, kind)
    if report.plan is None:
        raise report.invalid(f"invalid {report.kind.value} plan" if report.kind else "invalid plan")
    return report.plan
