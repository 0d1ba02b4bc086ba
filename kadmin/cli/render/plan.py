"""What ``kadmin plan`` shows: verdicts, plan stats, and the summaries of the plans it writes
(``spark rebalance`` and ``demo`` show a rebalance the same way)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

from rich.table import Table

from kadmin import files, reports
from kadmin.cli.common import err, out, print_sampled, warn, write_stdout
from kadmin.cli.render import above_capacity, json_escaped, over_capacity_doc, print_json
from kadmin.model import INLINE_LIMIT, Severity, and_more, listed, sample_of
from kadmin.operations.demote import Demoted
from kadmin.operations.generate import Generated
from kadmin.operations.replace import Replaced
from kadmin.plans import PlanStats, ValidationReport
from kadmin.reports import ReportFormat
from kadmin.units import human_bytes
from kadmin.verdicts import Verdict


def validation_report(report: ValidationReport, source: str, as_json: bool, *,
                      strict: bool = False) -> None:
    """One line per problem shown, a count of those left out, then the verdict; with
    ``strict`` warnings fail the plan too, so they go to stderr with the errors."""
    if as_json:
        print_json(report.to_json(strict))
        return
    for problem in report.problems:
        fatal = strict or problem.severity is Severity.ERROR
        (err if fatal else out).print(f"{source}: {problem.severity.value}: {problem}",
                                      markup=False)
    for severity, omitted in ((Severity.ERROR, report.omitted_errors),
                              (Severity.WARNING, report.omitted_warnings)):
        if omitted:
            fatal = strict or severity is Severity.ERROR
            (err if fatal else out).print(
                f"{source}: {severity.value}: {and_more(omitted)} {severity.value}(s) not shown",
                markup=False)
    kind = report.kind.value if report.kind else "unknown"
    verdict = ("valid" if report.ok(strict) else "INVALID" if report.error_count
               else "INVALID (warnings fail with --strict)")
    out.print(f"{source}: {kind} plan {verdict} ({report.error_count:,} error(s), "
              f"{report.warning_count:,} warning(s))", markup=False)


def verdicts(results: Iterable[Verdict], report_format: ReportFormat, *, strict: bool = False
             ) -> int:
    """Each plan's verdict as it comes (JUnit: one document at the end), and, in text, a last
    line counting them when there were several. Returns how many plans failed."""
    failed = total = 0

    def counted(results: Iterable[Verdict]) -> Iterator[Verdict]:
        nonlocal failed, total
        for verdict in results:
            total += 1
            failed += not verdict.ok(strict)
            yield verdict

    if report_format is ReportFormat.JUNIT:
        document = reports.junit_document(counted(results), strict)
        write_stdout([document.decode("utf-8")])
        return failed
    for verdict in counted(results):
        if report_format is ReportFormat.JSON:
            write_stdout([json_escaped(json.dumps(reports.verdict_json(verdict, strict),
                                                  ensure_ascii=False)), "\n"])
        elif report_format is ReportFormat.GITHUB:
            write_stdout(line + "\n" for line in reports.github_lines(verdict))
        else:
            validation_report(verdict.report, verdict.plan, False, strict=strict)
    if report_format is ReportFormat.TEXT and total > 1:
        out.print(f"{total:,} plans: {total - failed:,} valid, {failed:,} invalid"
                  + (" (warnings fail with --strict)" if strict else ""), markup=False)
    return failed


def plan_stats_doc(stats: PlanStats) -> dict[str, Any]:
    # brokers above capacity in the words of plan rebalance --json and status --json
    return {**dataclasses.asdict(stats), "over_capacity": over_capacity_doc(stats.over_capacity)}


def plan_stats(stats: PlanStats, as_json: bool) -> None:
    if as_json:
        print_json(plan_stats_doc(stats))
        return
    bound = "" if stats.lower_bound is None else f" (lower bound {stats.lower_bound})"
    moved = "" if stats.bytes_moved is None else f", {human_bytes(stats.bytes_moved)} to copy"
    topics = "" if stats.worst_topic_spread_after is None else (
        f"; worst topic spread {stats.worst_topic_spread_before} -> "
        f"{stats.worst_topic_spread_after}" + (f" ({stats.worst_topic})" if stats.worst_topic
                                              else ""))
    table = Table(title=f"{stats.partitions} partition(s) in the plan, {stats.unchanged} unchanged, "
                        f"{stats.replica_moves} replica move(s){bound}, {stats.leader_changes} "
                        f"leader change(s){moved}{topics}")
    sized = stats.bytes_moved is not None
    capacities = any(load.capacity for load in stats.brokers)
    used = sized and capacities
    for column in ("broker", "replicas before", "replicas after", "leaders before",
                   "leaders after") + (("bytes before", "bytes after") if sized else ()) + (
                       ("capacity",) if capacities else ()) + (
                       ("used before", "used after") if used else ()):
        table.add_column(column, justify="right")
    shown = sample_of(stats.brokers)
    for load in shown.items:
        cap = load.capacity
        table.add_row(str(load.broker), str(load.replicas_before), str(load.replicas_after),
                      str(load.leaders_before), str(load.leaders_after),
                      *((human_bytes(load.bytes_before or 0), human_bytes(load.bytes_after or 0))
                        if sized else ()),
                      *((human_bytes(cap) if cap else "",) if capacities else ()),
                      *((f"{(load.bytes_before or 0) / cap:.0%}",
                         f"{(load.bytes_after or 0) / cap:.0%}") if used and cap else
                        ("", "") if used else ()))
    if shown.rest:
        table.add_row(and_more(shown.rest))
    out.print(table)
    if stats.over_capacity:
        out.print(above_capacity("warning: above capacity after the plan: ",
                                 stats.over_capacity), markup=False)


def generated(made: Generated, as_json: bool, *, to_stderr: bool) -> None:
    """The summary of ``plan generate`` (on stderr when the plan itself went to stdout)."""
    written, rf_changes = made.written, made.rf_changes
    console = err if to_stderr else out
    if as_json:
        print_json({**plan_files_doc(written), "topics": made.topics,
                    "partitions": len(made.plan.moves), "unchanged": made.unchanged,
                    "rf_changes": rf_changes}, to_stderr=to_stderr)
    elif not made.plan.moves:
        console.print(f"nothing to move: all {made.unchanged} partition(s) of {made.topics} "
                      "topic(s) are already in place; no plan written", markup=False)
    else:
        console.print(
            f"{len(made.plan.moves)} partition(s) to move, {made.unchanged} already in place, "
            f"{made.topics} topic(s)" + (f"; plan {written}, rollback {files.rollback_of(written)}"
                                         if written else "")
            + (f"; {rf_changes} partition(s) change their replication factor (plan validate "
               "and reassign need --allow-rf-change)" if rf_changes else ""), markup=False)


def plan_files_doc(written: Path | None) -> dict[str, str | None]:
    """The ``--json`` keys naming a written plan and its rollback beside it (None: the plan
    went to stdout, or none was written)."""
    return {"plan": str(written) if written else None,
            "rollback": str(files.rollback_of(written)) if written else None}


def next_steps(say: Callable[[str], None], written: Path, elect: str = "") -> None:
    """The last lines after a plan kadmin wrote for ``reassign --elect``: where the plan and
    its rollback (the way back) are, and the command that runs it (``elect``: what follows
    ``--elect`` on that line)."""
    say(f"plan {written}, rollback {files.rollback_of(written)} (the way back)")
    say(f"next: kadmin reassign --plan {written} --elect{elect}")


def replaced(done: Replaced, as_json: bool) -> None:
    """The summary of ``plan replace``: the replicas and preferred leaders each replacement
    takes over (on stderr when the plan itself went to stdout)."""
    r, written = done.result, done.written
    for line in r.rack_changes:
        warn(line)
    if done.unregistered:
        warn(f"broker(s) {listed(done.unregistered)} not registered: the moves wait for them")
    if as_json:  # on stderr when the plan itself went to stdout
        print_json({
            **plan_files_doc(written),
            "pairs": [{"broker": a, "with": b, "replicas": r.moved[a], "preferred_leader": r.led[a]}
                      for a, b in done.pairs.items()],
            "partitions": len(r.plan.moves), "rack_changes": list(r.rack_changes)},
            to_stderr=not (written or not r.plan.moves))
        return
    console = out if written or not r.plan.moves else err
    say = lambda line: console.print(line, markup=False)  # noqa: E731
    if not r.plan.moves:
        say(f"nothing to move: no replica on broker(s) {listed(done.pairs)}; no plan written")
        return
    say(f"{len(r.plan.moves)} partition(s) to move: " + ", ".join(
        f"{a} -> {b}: {r.moved[a]} replica(s), {r.led[a]} preferred leader(s)"
        for a, b in done.pairs.items()))
    if written:
        next_steps(say, written)


def demoted(figures: Demoted, as_json: bool) -> None:
    """The summary of a demotion: how many leaders move and where, the spread over the other
    brokers, and the partitions that stay; the plan itself went to ``figures.written``."""
    r, written = figures.result, figures.written
    stuck = (("all_demoted", figures.all_demoted, "every replica is on a demoted broker"),
             ("no_live_replica", figures.no_live_replica,
              "their other replicas are on unregistered brokers, which must not lead"),
             ("dead_led", figures.dead_led,
              "led by an unregistered broker that is not demoted (demote it too to move them)"))
    if as_json:  # on stderr when the plan itself went to stdout
        print_json({
            **plan_files_doc(written),
            "demoted": list(figures.demoted), "minimal": figures.minimal,
            "topics": figures.topics, "leader_changes": r.leader_changes,
            "targets": list(r.targets), "leader_spread_before": r.spread_before,
            "leader_spread_after": r.spread_after, "least_spread": r.least_spread,
            "handovers": [{"from": a, "to": b, "partitions": n}
                          for (a, b), n in r.handovers.items()],
            "brokers": [{"broker": b, "leaders_before": n, "leaders_after": r.after[b]}
                        for b, n in r.before.items()],
            "demoted_leaders": [{"broker": b, "leaders_before": n, "leaders_after": m}
                                for b, (n, m) in r.demoted.items()],
            **{key: {"count": found.total, "partitions": list(found.items)}
               for key, found, _ in stuck}}, to_stderr=not (written or not r.leader_changes))
        return
    console = out if written or not r.leader_changes else err
    say = lambda line: console.print(line, markup=False)  # noqa: E731
    if not r.leader_changes:
        say(f"nothing to move: no partition of {figures.topics} topic(s) needs another preferred "
            f"leader to keep it off broker(s) {listed(figures.demoted)}"
            + ("" if figures.minimal else " and balanced over the others")
            + f" (leader spread {r.spread_after} over {len(r.targets)} broker(s)); no plan written")
    else:
        say(f"{r.leader_changes} leader change(s) in {figures.topics} topic(s), by reordering "
            f"replica lists only (no data moves)")
        say("leaders move: " + listed(f"{a} -> {b}: {n}" for (a, b), n in sorted(
            r.handovers.items(), key=lambda item: (-item[1], item[0]))))
        only = ", changing only what they lead" if figures.minimal else ""
        least = "" if r.least_spread <= 1 else f" (the least any reordering reaches{only})"
        say(f"preferred leaders over broker(s) {listed(r.targets)}: spread {r.spread_before} -> "
            f"{r.spread_after}{least}")
        print_sampled(console, chain(
            (f"broker {b} (demoted): {n} -> {m}" for b, (n, m) in r.demoted.items()),
            (f"broker {b}: {n} -> {r.after[b]}" for b, n in r.before.items())), "  ")
    for _, found, why in stuck:
        if found.total:
            shown = found.items[:INLINE_LIMIT]
            more = found.total - len(shown)
            say(f"{found.total} partition(s) keep their preferred leader: {why}: "
                + ", ".join(shown) + (f" {and_more(more)}" if more else ""))
    if written:
        gate = (f" --no-health-gate (broker(s) {listed(figures.down)} are down: their partitions "
                f"are under-replicated)" if figures.down else "")
        next_steps(say, written, f"{gate} (reordering only: it completes at once, and --elect "
                                 "makes the new preferred leaders lead)")
