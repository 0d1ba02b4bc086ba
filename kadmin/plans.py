"""Plan documents: detect, validate, parse, diff against a cluster, batch, and summarise. Pure.

A plan file is one of the three admin documents (spec section 1): Kafka's
``kafka-reassign-partitions.sh`` file, the preferred replica election document, or the seed's topic
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, pairwise
from typing import Any, TypeVar

from jsonschema.protocols import Validator

from kadmin import schema
from kadmin.balance.metrics import Balance, balance
from kadmin.balance.rebalance import replica_quota
from kadmin.balance.table import PartitionTable
from kadmin.balance.weighted import bytes_per_broker
from kadmin.jsontext import json_path
from kadmin.model import (
    MAX_ID,
    ClusterSnapshot,
    Conflict,
    DeletionPlan,
    ElectionPlan,
    InvalidInput,
    PartitionMove,
    Plan,
    PlanKind,
    Problem,
    Reassignment,
    ReassignmentPlan,
    Sampler,
    Severity,
    TopicPartition,
    is_topic_name,
    listed,
    topic_name_problem,
)
from kadmin.zk import codec, paths

T = TypeVar("T")

SCHEMAS = {
    PlanKind.REASSIGN: "reassign_partitions",
    PlanKind.ELECTION: "preferred_replica_election",
    PlanKind.DELETION: "delete_topics",
}
"""Schema file (``schemas/<name>.schema.json``) of each plan kind."""

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})

VALUE_KEYWORDS = frozenset({"minimum", "minItems", "uniqueItems", "pattern", "maxLength", "not"})
"""Schema keywords whose findings this module reports itself, naming the offending value."""

_MESSAGE_LIMIT = 300
_TOO_LARGE = f"is larger than {MAX_ID}, the largest id Kafka allows (a Java int)"


# --- validation report -------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidationReport:
    kind: PlanKind | None
    problems: tuple[Problem, ...]
    """In document order: the first :data:`~kadmin.model.LIST_LIMIT` errors and the first as
    many warnings; the rest are only counted (``omitted_errors``, ``omitted_warnings``)."""
    plan: Plan | None
    """The parsed plan, present only when there are no errors (warnings allowed)."""
    omitted_errors: int = 0
    omitted_warnings: int = 0

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity is Severity.WARNING)

    @property
    def error_count(self) -> int:
        return len(self.errors) + self.omitted_errors

    @property
    def warning_count(self) -> int:
        return len(self.warnings) + self.omitted_warnings

    def ok(self, strict: bool = False) -> bool:
        """No errors; with ``strict`` (CI gates) no warnings either."""
        return not (self.error_count or (strict and self.warning_count))

    def invalid(self, what: str) -> InvalidInput:
        """The error of a refused plan: one error in the line itself, several as detail lines
        (those shown; the rest counted)."""
        if self.error_count == 1:
            return InvalidInput(f"{what}: {self.errors[0]}")
        return InvalidInput(f"{what} ({self.error_count:,} errors)",
                            details=map(str, self.errors), more=self.omitted_errors)

    def to_json(self, strict: bool = False) -> dict[str, Any]:
        def items(problems: tuple[Problem, ...]) -> list[dict[str, str]]:
            return [{"path": p.where, "message": p.message} for p in problems]

        return {"valid": self.ok(strict), "kind": self.kind.value if self.kind else None,
                "errors": items(self.errors), "warnings": items(self.warnings),
                "error_count": self.error_count, "warning_count": self.warning_count}


class _Findings:
    """The problems of one validation as they are found: errors and warnings each sampled, so
    a million identical problems cost a counter, not a million lines."""

    def __init__(self) -> None:
        self.kept: list[Problem] = []
        self.samplers = {Severity.ERROR: Sampler[Problem](), Severity.WARNING: Sampler[Problem]()}
        self.errors = self.samplers[Severity.ERROR]
        """Errors so far: ``errors.total`` counts those shown and those only counted."""

    def add(self, problem: Problem) -> None:
        sampler = self.samplers[problem.severity]
        if not sampler.full:
            self.kept.append(problem)
        sampler.add(problem)

    def report(self, kind: PlanKind | None, plan: Plan | None) -> ValidationReport:
        return ValidationReport(kind, tuple(self.kept), plan,
                                self.samplers[Severity.ERROR].rest,
                                self.samplers[Severity.WARNING].rest)


def detect_kind(doc: object) -> PlanKind | None:
    """The plan kind by shape, so ``plan validate`` needs no ``--kind`` for ordinary files.

    ``partitions`` whose entries carry ``replicas`` is a reassignment, without them an election;
    ``topics`` is a deletion. An empty ``partitions`` list counts as a reassignment (by far the
    commonest file; the empty documents of both kinds are identical anyway). An object with both
    keys or neither is no plan.
    """
    if not isinstance(doc, dict) or ("partitions" in doc) == ("topics" in doc):
        return None
    if "topics" in doc:
        return PlanKind.DELETION
    entries = doc["partitions"]
    if isinstance(entries, list) and entries and not any(
            isinstance(e, dict) and "replicas" in e for e in entries):
        return PlanKind.ELECTION
    return PlanKind.REASSIGN


_KIND_NAMES = {PlanKind.REASSIGN: "a reassignment plan", PlanKind.ELECTION: "an election plan",
               PlanKind.DELETION: "a deletion plan"}


def _not_a_plan(doc: object) -> Problem:
    return Problem("$", 'not a plan: expected an object with "partitions" (a reassignment or '
                        f'election plan) or "topics" (a deletion plan), got {_describe(doc)}')


def kind_problem(doc: object, expected: PlanKind) -> Problem | None:
    """Why ``doc`` cannot be meant as the ``expected`` kind of plan: it is no plan, or by its shape
    a plan of another kind. None when the shape fits, whatever its entries hold.

    Commands that need one kind say so in one line, instead of listing every entry of, say, an
    election plan as a reassignment missing its replicas. Only entries with ``replicas`` make a
    ``partitions`` document a reassignment rather than an election (an empty one is both; one
    whose entries are broken is left for validation to explain).
    """
    found = detect_kind(doc)
    if found is None:
        return _not_a_plan(doc)
    if found is expected:
        return None
    if expected is PlanKind.ELECTION and found is PlanKind.REASSIGN and isinstance(doc, dict):
        entries = doc["partitions"]
        if not (isinstance(entries, list)
                and any(isinstance(e, dict) and "replicas" in e for e in entries)):
            return None
    return Problem("$", f"{_KIND_NAMES[found]}, expected {_KIND_NAMES[expected]}")


def _short(text: str) -> str:
    """jsonschema quotes the whole offending value, which may be a million-entry list."""
    return text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "…"


def _describe(value: object) -> str:
    if isinstance(value, dict):
        return _short(f"an object with keys {json.dumps(sorted(map(str, value)))}")
    return "an array" if isinstance(value, list) else _short(json.dumps(value, default=str))


class _Checker:
    """One validation run: collects problems in document order and explains schema failures."""

    def __init__(self, kind: PlanKind, list_key: str) -> None:
        self.findings = _Findings()
        self.list_key = list_key
        self.root = schema.validator(SCHEMAS[kind])
        self.entry = self.root.evolve(schema=self.root.schema["properties"][list_key]["items"])
        self.good_topics: set[str] = set()

    @property
    def errors(self) -> int:
        return self.findings.errors.total

    def error(self, where: str, message: str) -> None:
        self.findings.add(Problem(where, message))

    def at(self, index: int, field: str = "") -> str:
        return f"$.{self.list_key}[{index}]{field}"

    def schema_errors(self, validator: Validator, value: object, prefix: tuple[object, ...]
                      ) -> bool:
        """Report jsonschema's shape findings for ``value``; True when there were any."""
        found = False
        for error in validator.iter_errors(value):
            if error.validator not in VALUE_KEYWORDS:
                self.error(json_path(prefix + tuple(error.absolute_path)), _short(error.message))
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

    def topic(self, index: int, field: str, name: object) -> None:
        if type(name) is str and name not in self.good_topics:
            if is_topic_name(name):
                self.good_topics.add(name)
            else:  # worded only while shown: a million bad names cost a count past the cap
                self.error(self.at(index, field), "illegal topic name" if self.findings.errors.full
                           else topic_name_problem(name) or "")


_MOVE_KEYS = frozenset({"topic", "partition", "replicas", "log_dirs"})
_MOVE_REQUIRED = frozenset({"topic", "partition", "replicas"})
_ELECTION_KEYS = frozenset({"topic", "partition"})


def _check_partitions(c: _Checker, entries: list[Any], with_replicas: bool) -> list[Any]:
    """The entries of a reassignment (``with_replicas``) or election plan; returns the moves or
    topic-partitions of the entries without problems.

    One pass, written for speed: this loop runs once per partition of the plan. Type tests are
    ``type(x) is int`` (JSON never yields subclasses, and bool must not pass as int); an entry the
    inline shape test refuses goes to jsonschema, which has the last word.
    """
    allowed, required = (_MOVE_KEYS, _MOVE_REQUIRED) if with_replicas else (_ELECTION_KEYS,) * 2
    seen: dict[tuple[str, int], int] = {}
    parsed: list[Any] = []
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
            c.topic(i, ".topic", topic)
        if type(partition) is int:
            if partition < 0:
                c.error(c.at(i, ".partition"), f"partition id {partition} is negative")
            elif partition > MAX_ID:
                c.error(c.at(i, ".partition"), f"partition id {partition} {_TOO_LARGE}")
            if type(topic) is str:
                first = seen.setdefault((topic, partition), i)
                if first != i:  # worded only while shown, as every problem past the cap
                    c.error(c.at(i), "listed twice" if c.findings.errors.full
                            else f"{topic}-{partition} is listed twice: also at {c.at(first)}")
        if with_replicas:
            _check_replicas(c, i, replicas, log_dirs, typed)
        if shape_ok and c.errors == errors:
            parsed.append(PartitionMove(topic, partition, tuple(replicas), None if log_dirs is None
                                        else tuple(log_dirs)) if with_replicas
                          else TopicPartition(topic, partition))
    return parsed


def _check_replicas(c: _Checker, i: int, replicas: object, log_dirs: object, typed: bool) -> None:
    """``typed``: the shape test passed, so every replica is an int and every log dir a str."""
    if type(replicas) is list:
        ids = replicas if typed else [r for r in replicas if type(r) is int]
        if not replicas:
            c.error(c.at(i, ".replicas"), "replica list is empty; a partition needs at least one "
                                          "replica")
        elif ids and (min(ids) < 0 or max(ids) > MAX_ID):
            for j, r in enumerate(replicas):
                if type(r) is int and not 0 <= r <= MAX_ID:
                    c.error(c.at(i, f".replicas[{j}]"),
                            f"broker id {r} " + ("is negative" if r < 0 else _TOO_LARGE))
        if len(set(ids)) != len(ids):
            twice = sorted(b for b, n in Counter(ids).items() if n > 1)
            c.error(c.at(i, ".replicas"), f"broker id(s) {', '.join(map(str, twice))} listed more "
                                          f"than once in {_short(json.dumps(replicas, default=str))}")
    if type(log_dirs) is list:
        if type(replicas) is list and len(log_dirs) != len(replicas):
            c.error(c.at(i, ".log_dirs"), f"{len(log_dirs)} log dir(s) for {len(replicas)} "
                                          f"replica(s); log_dirs needs one entry per replica")
        if log_dirs.count("any") != len(log_dirs):
            for j, d in enumerate(log_dirs):
                if type(d) is str and d != "any" and not d.startswith("/"):
                    c.error(c.at(i, f".log_dirs[{j}]"),
                            f'log dir {json.dumps(d)} must be "any" or an absolute path')


def _check_topics(c: _Checker, entries: list[Any]) -> list[str]:
    seen: dict[str, int] = {}
    parsed = []
    for i, name in enumerate(entries):
        errors = c.errors
        shape_ok = type(name) is str or c.entry_shape_ok(i, name)
        c.topic(i, "", name)
        if type(name) is str:
            first = seen.setdefault(name, i)
            if first != i:
                c.error(c.at(i), f"topic {json.dumps(name)} is listed twice: also at "
                                 f"{c.at(first)}")
        if shape_ok and c.errors == errors:
            parsed.append(name)
    return parsed


def validate_document(doc: object, kind: PlanKind | None = None) -> ValidationReport:
    """Every problem of a plan document on its own (schema and structure), never the first only.

    ``kind`` None detects it from the shape. Never raises, whatever JSON value it is given.
    """
    kind = detect_kind(doc) if kind is None else kind
    if kind is None:
        return ValidationReport(None, (_not_a_plan(doc),), None)
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
        c.error(f"$.{list_key}", f"the plan lists no {list_key}; an empty plan does nothing")
    if kind is PlanKind.DELETION:
        parsed: list[Any] = _check_topics(c, entries)
    else:
        parsed = _check_partitions(c, entries, with_replicas=kind is PlanKind.REASSIGN)
    if c.errors:
        return c.findings.report(kind, None)
    # every entry either parsed or produced an error: a plan must never silently lose an entry
    assert len(parsed) == len(entries)
    parsed.sort()  # (topic, partition) is unique here, so tuple order is plan order
    plan: Plan
    if kind is PlanKind.REASSIGN:
        plan = ReassignmentPlan(tuple(parsed))
    elif kind is PlanKind.ELECTION:
        plan = ElectionPlan(tuple(parsed))
    else:
        plan = DeletionPlan(tuple(parsed))
    return c.findings.report(kind, plan)


def parse_plan(doc: object, kind: PlanKind | None) -> Plan:
    """The plan a document describes, entries sorted by (topic, partition) or topic name.

    Validates first (one linear pass), so a bad document is an :class:`InvalidInput` naming the
    first problem (the others in ``details``), never a half-built plan.
    """
    report = validate_document(doc, kind)
    if report.plan is None:
        raise report.invalid(f"invalid {report.kind.value} plan" if report.kind else "invalid plan")
    return report.plan


# --- against a cluster -------------------------------------------------------------------------


def _unknown_partitions(entries: Sequence[TopicPartition] | Sequence[PartitionMove],
                        snapshot: ClusterSnapshot) -> Iterator[Problem]:
    """Unknown topics once per topic (a missing topic would otherwise fill a screen per
    partition), then unknown partitions of known topics one by one."""
    topics = snapshot.topics
    missing: Counter[str] = Counter(e.topic for e in entries if e.topic not in topics)
    for topic, count in sorted(missing.items()):
        yield Problem(topic, f"unknown topic {topic} (not in /brokers/topics; {count} "
                             f"partition(s) of the plan)")
    for e in entries:
        partitions = topics.get(e.topic)
        if partitions is not None and e.partition not in partitions:
            yield Problem(f"{e.topic}-{e.partition}", f"unknown partition: topic {e.topic} has "
                                                      f"{len(partitions)} partition(s)")


def _check_moves(plan: ReassignmentPlan, snapshot: ClusterSnapshot, allow_rf_change: bool
                 ) -> Iterator[Problem]:
    """Once per partition of the plan: plain dict lookups, no per-move objects."""
    yield from _unknown_partitions(plan.moves, snapshot)
    brokers, topics, reassigning = snapshot.brokers, snapshot.topics, snapshot.reassigning
    for move in plan.moves:
        replicas = move.replicas
        if not all(b in brokers for b in replicas):
            yield from _unregistered(move, snapshot)
        in_flight = reassigning.get(move.topic)
        moving = None if in_flight is None else in_flight.get(move.partition)
        if moving is not None:
            # its replica count is no replication factor until the move ends
            yield Problem(str(move.tp), f"{_moving(move.tp, moving)}; kadmin reassign refuses it "
                                        "until the controller is done", Severity.WARNING)
            continue
        partitions = topics.get(move.topic)
        current = None if partitions is None else partitions.get(move.partition)
        if current is not None and len(current) != len(replicas) and not allow_rf_change:
            yield Problem(str(move.tp), f"changes the replication factor from {len(current)} to "
                                        f"{len(replicas)} (allowed with --allow-rf-change)")


def _unregistered(move: PartitionMove, snapshot: ClusterSnapshot) -> Iterator[Problem]:
    """Replicas on brokers that are not registered. Kafka's controller (2.4+) refuses a new
    replica on a broker that is not alive, and a move that keeps a replica there waits for it to
    rejoin the ISR; a reordering adds and removes nothing, so it completes at once (taking
    leadership off a broker that is down is what ``plan demote`` may do): a warning, unless the
    new first replica is the one that is down."""
    replicas = move.replicas
    offline = [b for b in replicas if b not in snapshot.brokers]
    current = snapshot.settled_replicas(move.tp)
    if current is not None and len(current) == len(replicas) and set(current) == set(replicas):
        if replicas[0] in offline:
            yield Problem(str(move.tp), f"preferred replica {replicas[0]} of {list(replicas)} is "
                                        f"not registered in /brokers/ids; it could not lead")
        else:
            yield Problem(str(move.tp), f"broker(s) {', '.join(map(str, offline))} of replicas "
                                        f"{list(replicas)} not registered in /brokers/ids; the "
                                        f"reordering completes at once all the same",
                          Severity.WARNING)
        return
    yield Problem(str(move.tp), f"broker(s) {', '.join(map(str, offline))} of replicas "
                                f"{list(replicas)} not registered in /brokers/ids")


def _moving(tp: TopicPartition, move: Reassignment) -> str:
    return f"{tp} is being reassigned from {list(move.original)} to {list(move.target)}"


def refuse_moving(reassigning: Mapping[str, Mapping[int, Reassignment]],
                  concerned: Callable[[TopicPartition], bool], action: str) -> None:
    """A Conflict naming the partitions in flight (``ClusterSnapshot.reassigning``) that
    ``concerned`` picks: planning or submitting for one would race the controller, whose work is
    not done. Looks only at the few partitions in flight, never at the whole plan."""
    moving = [_moving(tp, move) for topic in sorted(reassigning)
              for partition, move in sorted(reassigning[topic].items())
              if concerned(tp := TopicPartition(topic, partition))]
    if moving:
        raise Conflict(f"{len(moving)} partition(s) are being reassigned, so {action}; wait until "
                       "the controller is done (kadmin status shows them)",
                       details=moving)


def _check_election(plan: ElectionPlan, snapshot: ClusterSnapshot) -> Iterator[Problem]:
    """The controller skips a partition whose preferred replica is offline or out of the ISR;
    that is worth a warning, not a refusal (the rest of the plan still works). A snapshot without
    leader/ISR state for a partition is not a reason to warn."""
    yield from _unknown_partitions(plan.partitions, snapshot)
    for tp in plan.partitions:
        replicas = snapshot.replicas(tp)
        if not replicas:
            continue
        preferred, state = replicas[0], snapshot.state(tp)
        if preferred not in snapshot.brokers:
            yield Problem(str(tp), f"preferred replica {preferred} is offline; the controller "
                                   f"will skip this partition", Severity.WARNING)
        elif state is not None and preferred not in state.isr:
            yield Problem(str(tp), f"preferred replica {preferred} is not in the ISR "
                                   f"{list(state.isr)}; the controller will skip this partition",
                          Severity.WARNING)


def _check_deletion(plan: DeletionPlan, snapshot: ClusterSnapshot, allow_internal: bool
                    ) -> Iterator[Problem]:
    for topic in plan.topics:
        if topic not in snapshot.topics:
            yield Problem(topic, f"unknown topic {topic} (not in /brokers/topics)")
        if topic in INTERNAL_TOPICS and not allow_internal:
            yield Problem(topic, f"{topic} is an internal topic; deleting it loses state every "
                                 f"client depends on (allowed with --allow-internal)")
        if snapshot.reassigning.get(topic):
            yield Problem(topic, f"topic {topic} has {len(snapshot.reassigning[topic])} "
                                 "partition(s) being reassigned; kadmin topics delete refuses it "
                                 "(unless --allow-reassigning)", Severity.WARNING)


def validate_against_cluster(plan: Plan, snapshot: ClusterSnapshot, *,
                             allow_rf_change: bool = False, allow_internal: bool = False
                             ) -> Iterator[Problem]:
    """What the controller would drop, skip or do unintentionally; ``where`` is the
    topic-partition (or topic) so the operator can look it up in the cluster. Lazy: the caller
    samples what it shows."""
    if isinstance(plan, ReassignmentPlan):
        return _check_moves(plan, snapshot, allow_rf_change)
    if isinstance(plan, ElectionPlan):
        return _check_election(plan, snapshot)
    return _check_deletion(plan, snapshot, allow_internal)


def validate(doc: object, kind: PlanKind | None = None, snapshot: ClusterSnapshot | None = None,
             *, allow_rf_change: bool = False, allow_internal: bool = False) -> ValidationReport:
    """The document on its own, then (when it parses and a snapshot is given) against the
    cluster. The report carries the plan only when neither found an error."""
    report = validate_document(doc, kind)
    if report.plan is None or snapshot is None:
        return report
    findings = _Findings()
    for problem in chain(report.problems, validate_against_cluster(
            report.plan, snapshot, allow_rf_change=allow_rf_change,
            allow_internal=allow_internal)):
        findings.add(problem)
    return findings.report(report.kind, None if findings.errors.total else report.plan)


def validate_batches(docs: Sequence[tuple[str, object]], snapshot: ClusterSnapshot | None = None,
                     *, allow_rf_change: bool = False) -> ValidationReport:
    """A reassignment plan cut into batch files (a Spark planner's folder), as the one plan
    they make: each file on its own (problems named ``<file>: <path>``), a partition in two
    files, then the whole plan against the cluster."""
    problems: list[Problem] = []
    moves: list[PartitionMove] = []
    for name, doc in docs:
        report = validate_document(doc, PlanKind.REASSIGN)
        problems.extend(Problem(f"{name}: {p.where}", p.message, p.severity)
                        for p in report.problems)
        if isinstance(report.plan, ReassignmentPlan):
            moves.extend(report.plan.moves)
    if any(p.severity is Severity.ERROR for p in problems):
        return ValidationReport(PlanKind.REASSIGN, tuple(problems), None)
    moves.sort()
    problems.extend(Problem(str(a.tp), "is in more than one batch file")
                    for a, b in pairwise(moves) if a.tp == b.tp)
    plan = ReassignmentPlan(tuple(moves))
    if snapshot is not None:
        problems.extend(validate_against_cluster(plan, snapshot, allow_rf_change=allow_rf_change))
    failed = any(p.severity is Severity.ERROR for p in problems)
    return ValidationReport(PlanKind.REASSIGN, tuple(problems), None if failed else plan)


# --- documents, diff, rollback -----------------------------------------------------------------


def plan_document(plan: Plan, *, log_dirs: bool = True) -> dict[str, Any]:
    """The plan file, entries sorted; ``log_dirs`` kept for moves that have them unless the
    caller wants the znode's shape."""
    if isinstance(plan, ReassignmentPlan):
        entries: list[Any] = []
        for move in sorted(plan.moves):
            entry: dict[str, Any] = {"topic": move.topic, "partition": move.partition,
                                     "replicas": list(move.replicas)}
            if log_dirs and move.log_dirs is not None:
                entry["log_dirs"] = list(move.log_dirs)
            entries.append(entry)
        return {"version": plan.version, "partitions": entries}
    if isinstance(plan, ElectionPlan):
        return {"version": plan.version, "partitions": [
            {"topic": tp.topic, "partition": tp.partition} for tp in sorted(plan.partitions)]}
    return {"version": plan.version, "topics": sorted(plan.topics)}


def current_assignment(plan: ReassignmentPlan, snapshot: ClusterSnapshot) -> ReassignmentPlan:
    """The rollback plan: today's replicas of the partitions the plan touches, in Kafka's file
    format, so undoing a reassignment is running another one. A partition still moving (a batch
    of this plan that an interrupted run left in flight) is recorded with its original replicas,
    never the temporary full set."""
    moves, unknown = [], []
    for move in plan.moves:
        current = snapshot.settled_replicas(move.tp)
        if current is None:
            unknown.append(str(move.tp))
        else:
            moves.append(PartitionMove(move.topic, move.partition, current))
    if unknown:
        raise InvalidInput(f"cannot write a rollback plan: {len(unknown)} partition(s) of the plan "
                           f"are not in the cluster, the first {unknown[0]}", details=tuple(unknown))
    return ReassignmentPlan(tuple(sorted(moves)))


def changed_moves(plan: ReassignmentPlan, snapshot: ClusterSnapshot
                  ) -> tuple[tuple[PartitionMove, ...], int]:
    """The moves that still change something (replica order counts: it picks the preferred
    leader), and how many already match the cluster."""
    changed = tuple(m for m in plan.moves if snapshot.replicas(m.tp) != m.replicas)
    return changed, len(plan.moves) - len(changed)


# --- batching ----------------------------------------------------------------------------------

JUTE_MAXBUFFER = 1_048_575
"""ZooKeeper's default ``jute.maxbuffer`` (0xfffff bytes): the largest znode, and about the
largest request, a server accepts. A request over it makes the server drop the connection."""

REQUEST_HEADROOM = 1024
"""What a request adds around an admin znode's payload (headers, the path with its chroot, the
ACL), with room to spare: a payload may take jute.maxbuffer less this."""


def check_znode_limit(max_znode_bytes: int, jute_maxbuffer: int = JUTE_MAXBUFFER) -> None:
    """Refuse a ``--max-znode-bytes`` the servers would refuse, before anything is read or
    written: otherwise the first batch would fail half-way through a run, with the connection
    dropped and no word of why. Servers started with a larger ``-Djute.maxbuffer`` say so
    (``--jute-maxbuffer``)."""
    largest = jute_maxbuffer - REQUEST_HEADROOM
    if max_znode_bytes > largest:
        raise InvalidInput(
            f"--max-znode-bytes {max_znode_bytes:,} is more than ZooKeeper accepts: at most "
            f"{largest:,} with jute.maxbuffer {jute_maxbuffer:,} (less {REQUEST_HEADROOM:,} for "
            "the request around the payload); if the servers run with a larger "
            "-Djute.maxbuffer, give it with --jute-maxbuffer")



def batches(items: Sequence[T], entry_bytes: Callable[[T], int], overhead: int,
            max_items: int, max_bytes: int, *, separator: int = 1,
            label: Callable[[T], object] = str,
            work: Callable[[T], int] | None = None, max_work: int | None = None
            ) -> list[Sequence[T]]:
    """Split ``items`` into consecutive batches that each make a request ZooKeeper accepts.

    A batch's size is ``overhead`` (the envelope around the list) plus every entry's bytes plus
    ``separator`` bytes between entries: for an admin znode exactly the payload's (a comma
    between entries). Greedy and linear: a batch is closed when the next entry would pass
    ``max_items`` or ``max_bytes``, or, with ``work`` (say the bytes a move copies), when it
    would take the batch's work past ``max_work``; an item heavier than ``max_work`` alone is a
    batch of its own (a partition cannot be split). ``label`` names an item in errors.
    """
    if max_items < 1:
        raise InvalidInput(f"batch size must be at least 1, got {max_items}")
    if max_bytes <= overhead:
        raise InvalidInput(f"maximum znode size {max_bytes} bytes is too small: the admin "
                           f"document's envelope alone takes {overhead}")
    if max_work is not None and max_work < 1:
        raise InvalidInput(f"maximum bytes per batch must be at least 1, got {max_work}")
    out: list[Sequence[T]] = []
    start, size, load = 0, overhead, 0
    for i, item in enumerate(items):
        entry = entry_bytes(item)
        if overhead + entry > max_bytes:
            raise InvalidInput(f"{label(item)}: its entry alone takes {overhead + entry} bytes, "
                               f"more than the maximum znode size of {max_bytes}")
        cost = work(item) if work is not None else 0
        gap = separator if i > start else 0
        if (i - start == max_items or size + gap + entry > max_bytes
                or (max_work is not None and i > start and load + cost > max_work)):
            out.append(items[start:i])
            start, size, load, gap = i, overhead, 0, 0
        size += gap + entry
        load += cost
    if start < len(items):
        out.append(items[start:])
    return out


def reassignment_batches(moves: Sequence[PartitionMove], max_partitions: int = 1000,
                         max_bytes: int = 1_000_000, *,
                         moved_bytes: Callable[[PartitionMove], int] | None = None,
                         max_moved_bytes: int | None = None) -> list[Sequence[PartitionMove]]:
    """Znode-sized batches; with ``moved_bytes`` (what a move copies) and ``max_moved_bytes``
    also batches of a predictable amount of data."""
    return batches(moves, lambda m: len(codec.encode_reassignment_entry(m)),
                   len(codec.REASSIGNMENT_PREFIX) + len(codec.REASSIGNMENT_SUFFIX),
                   max_partitions, max_bytes, label=lambda m: m.tp,
                   work=moved_bytes, max_work=max_moved_bytes)


def election_batches(partitions: Sequence[TopicPartition], max_partitions: int = 1000,
                     max_bytes: int = 1_000_000) -> list[Sequence[TopicPartition]]:
    return batches(partitions, lambda tp: len(codec.encode_election_entry(tp)),
                   len(codec.ELECTION_PREFIX) + len(codec.ELECTION_SUFFIX),
                   max_partitions, max_bytes)


def deletion_batches(topics: Sequence[str], max_bytes: int = 1_000_000, chroot: str = ""
                     ) -> list[Sequence[str]]:
    """Topics per transaction of deletion markers. Each transaction is all-or-nothing, but a
    request over ZooKeeper's jute.maxbuffer (1 MB) makes the server drop the connection: some
    4,000 topics with long names already pass it. ``chroot`` is part of every path sent."""
    return batches(topics, lambda t: codec.multi_create_bytes(chroot + paths.delete_topic(t)),
                   codec.MULTI_REQUEST_OVERHEAD, max(1, len(topics)), max_bytes, separator=0)


# --- stats -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerLoad:
    broker: int
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    """Leaders are *preferred* leaders (first replica): what the cluster converges to after
    elections, and the only leader a plan can predict."""
    bytes_before: int | None = None
    bytes_after: int | None = None
    """Bytes of the replicas on the broker (None without partition sizes)."""


@dataclass(frozen=True)
class PlanStats:
    partitions: int
    unchanged: int
    replica_moves: int
    """Replicas added to partitions: each is a full copy of the partition's data."""
    leader_changes: int
    """Partitions whose preferred leader changes."""
    brokers: tuple[BrokerLoad, ...]
    bytes_moved: int | None = None
    """Bytes copied: each partition's size once per replica it gains (None without sizes)."""
    lower_bound: int | None = None
    """The fewest moves that balance the plan's topics over the brokers they end on (spec
    section 7): a plan that moves more copies more data than balance needs."""
    worst_topic_spread_before: int | None = None
    worst_topic_spread_after: int | None = None
    worst_topic: str | None = None
    """The topic spread least evenly after the plan, over the brokers the plan's topics end on.
    The four are None where they were not computed (the Spark planner's totals)."""


def plan_stats(plan: ReassignmentPlan, snapshot: ClusterSnapshot,
               sizes: Mapping[TopicPartition, int] | None = None) -> PlanStats:
    """Per-broker load before and after the plan over the whole cluster (partitions outside the
    plan count with their current replicas), so the operator sees the balance that results.
    With ``sizes`` (:class:`kadmin.sizes.PartitionSizes`) also bytes: moved, and per broker."""
    assignments: list[Mapping[int, tuple[int, ...]]] = list(snapshot.topics.values())
    all_replicas = [r for partitions in assignments for r in partitions.values()]
    replicas_before = Counter(chain.from_iterable(all_replicas))
    leaders_before = Counter(r[0] for r in all_replicas if r)
    replicas_after, leaders_after = replicas_before.copy(), leaders_before.copy()
    bytes_before = Counter() if sizes is None else Counter(bytes_per_broker(all_replicas, [
        sizes.get(TopicPartition(t, p), 0) for t, partitions in snapshot.topics.items()
        for p in partitions]))
    bytes_after = bytes_before.copy()
    unchanged = replica_moves = leader_changes = bytes_moved = 0
    for move in plan.moves:
        current = snapshot.replicas(move.tp) or ()
        if current == move.replicas:
            unchanged += 1
            continue
        replicas_after.subtract(current)
        replicas_after.update(move.replicas)
        added = len(set(move.replicas) - set(current))
        replica_moves += added
        if sizes is not None:
            size = sizes.get(move.tp, 0)
            bytes_moved += size * added
            for broker in current:
                bytes_after[broker] -= size
            for broker in move.replicas:
                bytes_after[broker] += size
        old_leader = current[0] if current else None
        new_leader = move.replicas[0] if move.replicas else None
        if old_leader != new_leader:
            leader_changes += 1
            if old_leader is not None:
                leaders_after[old_leader] -= 1
            if new_leader is not None:
                leaders_after[new_leader] += 1
    brokers = sorted(set(snapshot.brokers) | {b for b, n in replicas_before.items() if n}
                     | {b for b, n in replicas_after.items() if n})
    sized = sizes is not None
    bound, before, after = _topic_balance(plan, snapshot)
    return PlanStats(len(plan.moves), unchanged, replica_moves, leader_changes, tuple(
        BrokerLoad(b, replicas_before[b], replicas_after[b], leaders_before[b], leaders_after[b],
                   bytes_before[b] if sized else None, bytes_after[b] if sized else None)
        for b in brokers), bytes_moved if sized else None, bound, before.worst_topic_spread,
        after.worst_topic_spread, after.worst_topic)


def _topic_balance(plan: ReassignmentPlan, snapshot: ClusterSnapshot
                   ) -> tuple[int, Balance, Balance]:
    """The lower bound of moves and the balance before and after, for the plan's topics over
    the brokers they end on: what ``plan rebalance`` would report for the same topics."""
    table = PartitionTable.from_topics(snapshot.topics,
                                       sorted({m.topic for m in plan.moves} & set(snapshot.topics)))
    after = list(table.replicas)
    index = {tp: i for i, tp in enumerate(map(table.tp, range(len(table))))}
    for move in plan.moves:
        i = index.get(move.tp)
        if i is not None:
            after[i] = move.replicas
    targets = sorted({b for members in after for b in members})
    if not targets:  # no move, no topic: nothing to balance
        nothing = balance([], [], [], [])
        return 0, nothing, nothing
    return (replica_quota(table.replicas, targets, None).units,
            balance(table.replicas, table.topic_of, table.topics, targets),
            balance(after, table.topic_of, table.topics, targets))


# --- plans built from a cluster ----------------------------------------------------------------


def election_plan_for(snapshot: ClusterSnapshot, topics: Sequence[str] | None) -> ElectionPlan:
    """Every partition of ``topics`` (None: of every topic), like Kafka's tool without a file."""
    names = sorted(snapshot.topics) if topics is None else sorted(set(topics))
    unknown = [t for t in names if t not in snapshot.topics]
    if unknown:
        raise InvalidInput(f"unknown topic(s) not in the cluster: {listed(unknown)}")
    return ElectionPlan(tuple(TopicPartition(t, p) for t in names
                              for p in sorted(snapshot.topics[t])))


def deletion_plan_for(topics: Sequence[str]) -> DeletionPlan:
    """The deletion plan of ``topics`` (sorted, each once); names Kafka could never have created
    are refused here rather than left to the cluster check."""
    names = sorted(set(topics))
    if not names:
        raise InvalidInput("no topics to delete")
    bad = [problem for n in names if (problem := topic_name_problem(n)) is not None]
    if len(bad) == 1:
        raise InvalidInput(bad[0])
    if bad:
        raise InvalidInput(f"{len(bad)} illegal topic names, the first: {bad[0]}",
                           details=tuple(bad))
    return DeletionPlan(tuple(names))
