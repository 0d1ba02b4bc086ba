"""The result of validating a plan: its problems, sampled, and the plan when it has no error."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from typing import Any

from kadmin.model import (
    InvalidInput,
    Plan,
    PlanKind,
    Problem,
    Sampler,
    Severity,
)

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
    sound: Plan | None = None
    """With errors: the entries that have none, as a plan, so that they are checked against
    the cluster in the same run (every problem of every entry reported at once)."""

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
        def items(problems: tuple[Problem, ...]) -> list[dict[str, str | None]]:
            return [{"path": p.where or None, "partition": p.subject, "message": p.message}
                    for p in problems]

        return {"valid": self.ok(strict), "kind": self.kind.value if self.kind else None,
                "errors": items(self.errors), "warnings": items(self.warnings),
                "error_count": self.error_count, "warning_count": self.warning_count}


class Findings:
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

    def report(self, kind: PlanKind | None, plan: Plan | None, sound: Plan | None = None
               ) -> ValidationReport:
        return ValidationReport(kind, tuple(self.kept), plan,
                                self.samplers[Severity.ERROR].rest,
                                self.samplers[Severity.WARNING].rest, sound)


def with_problems(report: ValidationReport, more: Iterable[Problem]) -> ValidationReport:
    """``report`` and problems found outside it (another plan of the run moving the same
    partitions), kept and counted under the same caps; the plan only while no error."""
    findings = Findings()
    for problem in chain(report.problems, more):
        findings.add(problem)
    errors = findings.errors.total + report.omitted_errors
    return ValidationReport(report.kind, tuple(findings.kept), None if errors else report.plan,
                            report.omitted_errors + findings.samplers[Severity.ERROR].rest,
                            report.omitted_warnings + findings.samplers[Severity.WARNING].rest)
