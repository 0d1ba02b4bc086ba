"""Verdicts placed at lines and columns, and the formats CI systems read them in. Pure."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kadmin import model, plans, reports, verdicts
from kadmin.files import LocatedJson
from kadmin.jsontext import loads_located
from kadmin.model import PlanKind, Problem, Severity


def located(text: str) -> LocatedJson:
    doc, positions = loads_located(text)
    return LocatedJson(text, doc, positions)


def entry(topic: str, partition: int, replicas: list[int]) -> str:
    return json.dumps({"topic": topic, "partition": partition, "replicas": replicas})


def plan_text(*entries: str, indent: str = "  ") -> str:
    return '{"version": 1, "partitions": [\n' + ",\n".join(indent + e for e in entries) + "\n]}\n"


def test_github_escapes_as_the_actions_toolkit_does() -> None:
    problem = Problem("$", "50% done\r\nnext: a, b")
    verdict = verdicts.Verdict("p:1,2%.json", plans.ValidationReport(None, (problem,), None),
                               (verdicts.Finding(problem, "p:1,2%.json", 3, 4),))
    assert list(reports.github_lines(verdict)) == [
        "::error file=p%3A1%2C2%25.json,line=3,col=4::$: 50%25 done\\r\\nnext: a, b"]
    # control characters are escaped as kadmin escapes them everywhere, before GitHub's rules
    assert reports._escape_data("a%\r\nb") == "a%25%0D%0Ab"
    assert reports._escape_property("a%\r\n:,b") == "a%25%0D%0A%3A%2Cb"


def test_problems_left_out_are_counted_in_every_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model, "LIST_LIMIT", 2)
    text = plan_text(*[entry("t", 0, [1])] * 5)
    source = located(text)
    report = plans.validate(source.doc)
    verdict = verdicts.locate("p.json", report, [("p.json", source)])
    assert [(f.line, f.column) for f in verdict.findings] == [(3, 3), (4, 3)]
    assert list(reports.github_lines(verdict))[-1] == \
        "::error file=p.json::(and 2 more) error(s) not shown"
    failure = ET.fromstring(reports.junit_document([verdict])).find("testsuite/testcase/failure")
    assert failure is not None and failure.text is not None
    assert failure.text.splitlines()[-1] == "p.json: error: (and 2 more) error(s) not shown"
    assert reports.verdict_json(verdict)["error_count"] == 4


def test_junit_writes_what_xml_cannot_hold_as_escapes() -> None:
    problem = Problem("$", "bad \x00\x1b\ud800 value")
    verdict = verdicts.unreadable("a\x07.json", str(problem.message))
    document = reports.junit_document([verdict])
    case = ET.fromstring(document).find("testsuite/testcase")
    assert case is not None and case.get("name") == "a\\x07.json"
    failure = case.find("failure")
    assert failure is not None and failure.text == "a\\x07.json: error: bad \\x00\\x1b\\ud800 value"


def test_junit_of_no_plans_and_a_valid_plan_with_warnings() -> None:
    assert ET.fromstring(reports.junit_document([])).get("tests") == "0"
    warning = Problem("orders-0", "careful", Severity.WARNING)
    report = plans.ValidationReport(PlanKind.REASSIGN, (warning,), None)
    verdict = verdicts.Verdict("p.json", report, (verdicts.Finding(warning, "p.json", 2, 3),))
    case = ET.fromstring(reports.junit_document([verdict])).find("testsuite/testcase")
    assert case is not None and case.find("failure") is None
    assert case.findtext("system-out") == "p.json:2:3: warning: orders-0: careful"
    strict = ET.fromstring(reports.junit_document([verdict], strict=True))
    assert strict.get("failures") == "1"


def test_cluster_problems_are_placed_at_their_partition_entry() -> None:
    text = plan_text(entry("a", 0, [0]), entry("a-1", 2, [0]), entry("a", 1, [0]), indent=" ")
    source = located(text)
    report = plans.ValidationReport(PlanKind.REASSIGN, (
        Problem("a-1", "unknown topic a-1"), Problem("a-1-2", "unknown partition"),
        Problem("a-0", "broker gone"), Problem("zzz", "nowhere")), None)
    verdict = verdicts.locate("p.json", report, [("p.json", source)])
    assert [(f.line, f.column) for f in verdict.findings] == [(3, 2), (3, 2), (2, 2),
                                                                (None, None)]


def test_batch_problems_are_placed_in_their_own_file() -> None:
    one = located(plan_text(entry("a", 0, [0]), entry("a", 1, [])))
    two = located(plan_text(entry("b", 0, [0]), entry("a", 0, [1]), indent="    "))
    report = plans.validate_batches([("d/1.json", one.doc), ("d/2.json", two.doc)])
    verdict = verdicts.locate("d", report, [("d/1.json", one), ("d/2.json", two)])
    # every problem in one run: the broken entry, and the partition in two files all the same
    assert [(f.file, f.line, f.column, str(f.problem)) for f in verdict.findings] == [
        ("d/1.json", 3, 3, "d/1.json: $.partitions[1].replicas (a-1): replica list is empty; a "
                           "partition needs at least one replica"),
        ("d/2.json", 3, 5, "a-0: is in more than one batch file: d/1.json and d/2.json")]
    fixed = located(plan_text(entry("a", 0, [0]), entry("a", 1, [0])))
    report = plans.validate_batches([("d/1.json", fixed.doc), ("d/2.json", two.doc)])
    verdict = verdicts.locate("d", report, [("d/1.json", fixed), ("d/2.json", two)])
    # the partition in two batch files: at its entry in the later one
    assert [(f.file, f.line, f.column, f.problem.where) for f in verdict.findings] == [
        ("d/2.json", 3, 5, "a-0")]


def test_moved_by_warns_the_second_plan_and_spares_a_rollback() -> None:
    moved = verdicts.MovedBy()
    a = located(plan_text(entry("t", 0, [0]), entry("t", 1, [0])))
    b = located(plan_text(entry("t", 1, [1]), entry("t", 2, [1])))
    assert list(moved.warnings("plans/a.json", PlanKind.REASSIGN, [("plans/a.json", a)])) == []
    assert list(moved.warnings("plans/a.rollback.json", PlanKind.REASSIGN,
                               [("plans/a.rollback.json", a)])) == []
    assert list(moved.warnings("e.json", PlanKind.ELECTION, [("e.json", a)])) == []
    (warning,) = moved.warnings("b.json", PlanKind.REASSIGN, [("b.json", b)])
    assert warning == Problem("$.partitions[0]", "also moved by plans/a.json: the two plans "
                              "cannot run at once", Severity.WARNING, "t-1", ("partitions", 0),
                              "b.json")
    report = plans.with_problems(plans.validate(b.doc), [warning])
    assert report.warning_count == 1 and report.plan is not None


def test_a_folder_of_plans_is_its_plans(tmp_path: Path) -> None:
    from kadmin.operations.validate import plan_paths

    (tmp_path / "p" / "sub").mkdir(parents=True)
    (tmp_path / "p" / ".hidden").mkdir()
    (tmp_path / "p" / "spark").mkdir()
    for name in ("b.json", "a.json", "a.journal.json", "notes.txt", "sub/c.json",
                 ".hidden/x.json", "spark/batch-1.json"):
        (tmp_path / "p" / name).write_text("{}")
    (tmp_path / "p" / "spark" / "manifest.json").write_text('{"batches": ["batch-1.json"]}')
    p = tmp_path / "p"
    assert plan_paths([p, p / "a.json", p / "spark" / "batch-1.json"]) == [
        p / "a.json", p / "b.json", p / "spark", p / "sub" / "c.json"]
    # what pre-commit passes: the manifest and its batch files, each by name
    assert plan_paths([p / "spark" / "batch-1.json", p / "spark" / "manifest.json"]) == [
        p / "spark" / "manifest.json"]


@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 3),
                          st.lists(st.integers(-1, 3), max_size=3)), min_size=1, max_size=8),
       st.lists(st.sampled_from([" ", "\n", "\t", "\r\n", "\n    "]), min_size=8, max_size=8))
def test_every_problem_is_placed_where_its_entry_starts(moves: list[tuple[str, int, list[int]]],
                                                        gaps: list[str]) -> None:
    """Whatever the layout: the line and column of each problem inside an entry is where the
    text of that very entry starts."""
    text = '{"version":1,"partitions":[' + ",".join(
        gaps[i % len(gaps)] + entry(t, p, r) for i, (t, p, r) in enumerate(moves)) + "]}"
    source = located(text)
    verdict = verdicts.locate("p.json", plans.validate(source.doc), [("p.json", source)])
    lines = text.split("\n")
    for finding in verdict.findings:
        path = finding.problem.path
        assert path is not None and finding.line is not None and finding.column is not None
        offset = sum(len(line) + 1 for line in lines[:finding.line - 1]) + finding.column - 1
        expected = source.doc["partitions"][path[1]] if len(path) > 1 else None
        if expected is not None:
            assert json.JSONDecoder().raw_decode(text, offset)[0] == expected
