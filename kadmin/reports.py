"""The verdicts of ``plan validate`` in the formats CI systems read. Pure: text in, text out.

- ``json``: one object per plan (:func:`verdict_json`), one a line (JSON Lines).
- ``github``: GitHub Actions workflow commands, one per problem, ``::error file=F,line=L,col=C::M``
  (``::warning`` for warnings), which GitHub shows as annotations on those lines. Escaped as
  GitHub's toolkit does (``@actions/core``, ``command.ts``): ``%``, CR and LF in the message,
  and ``:`` and ``,`` too in the properties.
- ``junit``: one JUnit XML document, a test case per plan and a failure per invalid one holding
  its problems (those shown and a count of the rest), for Jenkins, GitLab and the rest.

The text format for people is the CLI's (:func:`kadmin.cli.render.plan.verdicts`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from enum import Enum
from typing import Any

from kadmin.model import Severity, and_more, printable
from kadmin.plans import ValidationReport
from kadmin.verdicts import Finding, Verdict


class ReportFormat(str, Enum):
    """How ``plan validate`` reports."""

    TEXT = "text"
    JSON = "json"
    GITHUB = "github"
    JUNIT = "junit"


def verdict_json(verdict: Verdict, strict: bool = False) -> dict[str, Any]:
    """The report's JSON (:meth:`~kadmin.plans.ValidationReport.to_json`) with the plan's name,
    and each problem's file, line and column."""
    doc: dict[str, Any] = {"file": verdict.plan, **verdict.report.to_json(strict)}
    for key, severity in (("errors", Severity.ERROR), ("warnings", Severity.WARNING)):
        placed = [f for f in verdict.findings if f.problem.severity is severity]
        doc[key] = [{**item, "file": f.file, "line": f.line, "column": f.column}
                    for item, f in zip(doc[key], placed, strict=True)]
    return doc


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(severity: Severity, file: str, line: int | None, column: int | None,
             message: str) -> str:
    """A workflow command; control characters in the name or message (a file name can hold
    any) are escaped as everywhere kadmin prints (:func:`~kadmin.model.printable`) before
    GitHub's own escapes, so none can end the command or start another."""
    file, message = printable(file), printable(message)
    props = [f"file={_escape_property(file)}"]
    if line is not None:
        props.append(f"line={line}")
    if column is not None:
        props.append(f"col={column}")
    return f"::{severity.value} {','.join(props)}::{_escape_data(message)}"


def github_lines(verdict: Verdict) -> Iterator[str]:
    """A workflow command per problem shown, then one per severity with problems left out."""
    for f in verdict.findings:
        yield _command(f.problem.severity, f.file, f.line, f.column, str(f.problem))
    for severity, omitted in _omitted(verdict.report):
        yield _command(severity, verdict.plan, None, None,
                       f"{and_more(omitted)} {severity.value}(s) not shown")


def _omitted(report: ValidationReport) -> Iterator[tuple[Severity, int]]:
    """How many errors and warnings the report only counts, where any."""
    for severity, omitted in ((Severity.ERROR, report.omitted_errors),
                              (Severity.WARNING, report.omitted_warnings)):
        if omitted:
            yield severity, omitted


def finding_line(finding: Finding) -> str:
    """``plans/a.json:12:5: error: $.partitions[3] (orders-3): ...``: the place as compilers
    and linters write it, which editors and CI logs link."""
    place = finding.file + "".join(f":{n}" for n in (finding.line, finding.column)
                                   if n is not None)
    return printable(f"{place}: {finding.problem.severity.value}: {finding.problem}")


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_safe(text: str) -> str:
    """XML 1.0 has no way to write most control characters (nor lone surrogates): they are
    written as ``\\xNN`` instead, or the document would not be well-formed."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def junit_document(verdicts: Iterable[Verdict], strict: bool = False) -> bytes:
    """One JUnit XML document: a ``testcase`` per plan (named by the plan as given), with a
    ``failure`` for an invalid plan listing its problems one a line (``file:line:col: error:
    ...``, those shown and a count of the rest); a valid plan's warnings go in its
    ``system-out``."""
    suites = ET.Element("testsuites", name="kadmin plan validate")
    suite = ET.SubElement(suites, "testsuite", name="kadmin plan validate")
    tests = failures = 0
    for verdict in verdicts:
        tests += 1
        report = verdict.report
        case = ET.SubElement(suite, "testcase", classname="kadmin.plan.validate",
                             name=printable(verdict.plan), file=printable(verdict.plan))
        lines = [finding_line(f) for f in verdict.findings]
        lines.extend(printable(f"{verdict.plan}: {severity.value}: {and_more(omitted)} "
                               f"{severity.value}(s) not shown")
                     for severity, omitted in _omitted(report))
        counts = f"{report.error_count:,} error(s), {report.warning_count:,} warning(s)"
        if not verdict.ok(strict):
            failures += 1
            kind = report.kind.value if report.kind else "unknown"
            failure = ET.SubElement(case, "failure", type="invalid plan",
                                    message=_xml_safe(f"{kind} plan INVALID ({counts})"))
            failure.text = _xml_safe("\n".join(lines))
        elif lines:
            ET.SubElement(case, "system-out").text = _xml_safe("\n".join(lines))
    for element in (suites, suite):
        element.set("tests", str(tests))
        element.set("failures", str(failures))
        element.set("errors", "0")
    suite.set("skipped", "0")
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True) + b"\n"
