"""Everything kadmin shows a person: rich tables and progress bars, or JSON for machines."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import chain

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from kadmin import files, reports
from kadmin.balance.chunks import ChunkedGoal
from kadmin.balance.metrics import loads, spread
from kadmin.balance.rebalance import RackBalance
from kadmin.cli.common import err, out, print_sampled, write_stdout
from kadmin.events import (
    BatchDone,
    BatchResumed,
    BatchSubmitted,
    Event,
    ExecutionPlanned,
    Finished,
    HealthWait,
    PlannerEvent,
    PlannerNote,
    ThrottleCleared,
    ThrottleSet,
    TimedOut,
    Waiting,
    event_to_json,
)
from kadmin.executor.reassign import Scheduled
from kadmin.model import (
    INLINE_LIMIT,
    Severity,
    TopicPartition,
    and_more,
    listed,
    printable,
    sample_of,
)
from kadmin.operations.demote import Demoted
from kadmin.operations.generate import Generated
from kadmin.operations.rebalance import Rebalanced
from kadmin.operations.status import Status
from kadmin.plans import PlanStats, ValidationReport
from kadmin.reports import ReportFormat
from kadmin.schedule import load_of
from kadmin.units import human_bytes, human_duration
from kadmin.verdicts import Verdict
from kadmin.zk import paths
from kadmin.zk.config import EntityThrottle


def cell(text: str) -> Text:
    """A table cell of text kadmin did not write itself, escaped like every printed string and
    never read as rich markup."""
    return Text(printable(text))


def print_json(doc: object) -> None:
    """A JSON document on stdout, encoded as it is written: never a second copy of a large
    document in memory (rich's print_json builds and highlights the whole text first)."""
    write_stdout(chain(_PRETTY.iterencode(doc), ["\n"]))


_PRETTY = json.JSONEncoder(indent=2, ensure_ascii=False)


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
            write_stdout([json.dumps(reports.verdict_json(verdict, strict), ensure_ascii=False),
                          "\n"])
        elif report_format is ReportFormat.GITHUB:
            write_stdout(line + "\n" for line in reports.github_lines(verdict))
        else:
            validation_report(verdict.report, verdict.plan, False, strict=strict)
    if report_format is ReportFormat.TEXT and total > 1:
        out.print(f"{total:,} plans: {total - failed:,} valid, {failed:,} invalid"
                  + (" (warnings fail with --strict)" if strict else ""), markup=False)
    return failed


def plan_stats(stats: PlanStats, as_json: bool) -> None:
    if as_json:  # brokers above capacity in the words of plan rebalance --json and status --json
        print_json({**dataclasses.asdict(stats), "over_capacity": over_capacity_doc(stats.over_capacity)})
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


def above_capacity(prefix: str, over: Sequence[tuple[int, int, int]]) -> str:
    """One line naming the brokers above their capacity, ``(broker, bytes, capacity)`` each,
    with their use; capped like every list, with a count of the rest."""
    shown = sample_of(over)
    return prefix + ", ".join(f"broker {b} {human_bytes(held)} of {human_bytes(cap)} "
                              f"({held / cap:.0%})" for b, held, cap in shown.items) + (
        f", {and_more(shown.rest)}" if shown.rest else "")


def over_capacity_doc(over: Sequence[tuple[int, int, int]]) -> list[dict[str, int]]:
    """The ``--json`` form of the brokers above their capacity (every one: JSON is not capped)."""
    return [{"broker": b, "bytes": held, "capacity": cap} for b, held, cap in over]


def generated(made: Generated, rf_changes: int, as_json: bool, *, to_stderr: bool) -> None:
    """The summary of ``plan generate`` (on stderr when the plan itself went to stdout)."""
    written = made.written
    rollback_path = str(files.sibling(written, ".rollback.json")) if written else None
    console = err if to_stderr else out
    if as_json and not to_stderr:
        print_json({"plan": str(written) if written else None, "topics": made.topics,
                    "partitions": len(made.plan.moves), "unchanged": made.unchanged,
                    "rf_changes": rf_changes, "rollback": rollback_path})
    elif not made.plan.moves:
        console.print(f"nothing to move: all {made.unchanged} partition(s) of {made.topics} "
                      "topic(s) are already in place; no plan written", markup=False)
    else:
        console.print(
            f"{len(made.plan.moves)} partition(s) to move, {made.unchanged} already in place, "
            f"{made.topics} topic(s)" + (f"; plan {written}, rollback {rollback_path}"
                                         if written else "")
            + (f"; {rf_changes} partition(s) change their replication factor (plan validate "
               "and reassign need --allow-rf-change)" if rf_changes else ""), markup=False)


def summary(line: str, doc: Mapping[str, object], as_json: bool, *,
            to_stderr: bool = False) -> None:
    """A command's result: ``doc`` as JSON on stdout with --json, else ``line`` for a person.
    When stdout carries the data itself (``--out -``), the line goes to stderr, never JSON."""
    if as_json and not to_stderr:
        print_json(doc)
    else:
        (err if to_stderr else out).print(line, markup=False)


def rebalanced(figures: Rebalanced, as_json: bool) -> None:
    """The summary of a rebalance; the plan itself went to ``figures.written`` (None: to
    stdout, or no plan because nothing needs to move). A folder plan (``kadmin spark
    rebalance``) is written even when empty, and gets its rollback file when ``kadmin
    reassign`` runs it."""
    r, before, after, sized = figures, figures.before, figures.after, figures.byte_figures
    written, folder = figures.written, figures.folder
    rollback = files.sibling(written, ".rollback.json") if written and not folder else None
    if as_json and (written or not figures.partitions):
        print_json({
            "plan": str(written) if written else None,
            "rollback": str(rollback) if rollback else None,
            "topics": figures.topics, "partitions": figures.partitions,
            "replica_moves": r.replica_moves, "lower_bound": r.lower_bound,
            "leader_changes": r.leader_changes, "partial": r.partial, "unplaced": r.unplaced,
            "before": before.figures(), "after": after.figures(),
            "balance": "replicas" if r.bytes_moved is None else "bytes",
            "bytes_moved": None if sized is None else sized.moved,
            "bytes_lower_bound": r.lower_bound if r.bytes_moved is not None else None,
            "brokers": [{**load, **({} if sized is None else {
                "bytes_before": sized.before[load["broker"]],
                "bytes_after": sized.after[load["broker"]]})}
                for load in loads(before, after)],
            "drained": [{"broker": b, "replicas_before": n, "replicas_after": m}
                        for b, (n, m) in figures.drained.items()],
            "unregistered_kept": list(figures.unregistered), "held_partitions": r.held,
            "stopped": None if figures.partitions else _why_nothing(figures),
            "topic_goal": None if r.topic_goal is None else {
                **dataclasses.asdict(r.topic_goal), "reachable": r.topic_goal.reachable},
            "racks": None if r.racks is None else dataclasses.asdict(r.racks),
            "over_capacity": over_capacity_doc(r.over_capacity)})
        return
    console = out if written or not figures.partitions else err
    say = lambda line: console.print(line, markup=False)  # noqa: E731
    if not figures.partitions:
        say(f"nothing to move: {_why_nothing(figures)}; "
            + (f"the plan {written} has no batch" if written else "no plan written"))
        _kept(say, figures)
        return
    if r.bytes_moved is None:
        say(f"{r.replica_moves} replica move(s) (lower bound {r.lower_bound}), "
            f"{r.leader_changes} leader change(s), in {figures.partitions} partition(s) of "
            f"{figures.topics} topic(s)")
    else:
        say(f"{human_bytes(r.bytes_moved)} to copy (lower bound {human_bytes(r.lower_bound)}) in "
            f"{r.replica_moves} replica move(s), {r.leader_changes} leader change(s), in "
            f"{figures.partitions} partition(s) of {figures.topics} topic(s)")
    if sized is not None:
        if r.bytes_moved is None:
            say(f"{human_bytes(sized.moved)} to copy")
        say(f"bytes per broker: spread {human_bytes(spread(sized.before))} -> "
            f"{human_bytes(spread(sized.after))}")
        print_sampled(console, (f"broker {b}: {human_bytes(held)} -> {human_bytes(sized.after[b])}"
                                for b, held in sized.before.items()), "  ")
    say(f"replica spread {before.replica_spread} -> {after.replica_spread}, leader spread "
        f"{before.leader_spread} -> {after.leader_spread}, worst topic spread "
        f"{before.worst_topic_spread} -> {after.worst_topic_spread}"
        + (f" ({after.worst_topic})" if after.worst_topic else ""))
    _drains(say, figures)
    _kept(say, figures)
    for line in goal_lines(r):
        say(line)
    if after.elsewhere:
        say(f"{after.elsewhere} replica(s) stay on brokers outside the targets")
    if r.unplaced:
        say(f"{r.unplaced} more move(s) would be needed for a spread of 1, and no valid plan "
            f"allows them (rack diversity, or partitions as wide as the broker list)")
    if r.partial:
        say("a partial plan (--max-moves/--max-leader-changes): run the same command again "
            "once it is done, to continue: the steps together make the fewest moves a whole "
            "plan would")
    if written:
        say(f"plan {written}, rollback {rollback}" if rollback else
            f"plan {written} (`kadmin reassign --plan` writes the rollback file next to it "
            f"before it starts)")
    if r.leader_changes and not figures.resized:
        say("preferred leaders change: run the plan with 'kadmin reassign --elect', which "
            "elects them once the replicas have moved")


def _why_nothing(figures: Rebalanced) -> str:
    """What stopped a plan that changes nothing: a limit, the byte aim, rules no plan can
    break, or balance itself."""
    r, before, sized = figures, figures.before, figures.byte_figures
    counts = (f"replica spread {before.replica_spread}, leader spread {before.leader_spread}")
    if r.partial:
        return (f"{figures.limits or 'the limit'} allows none of the changes the balance needs "
                f"({r.lower_bound} replica move(s) at least; {counts})")
    if r.bytes_moved is not None and sized is not None:
        if not sized.largest:
            return (f"every partition's size is 0, so --balance bytes has nothing to balance "
                    f"({counts}; --balance replicas balances counts)")
        return (f"bytes per broker are within one largest partition "
                f"({human_bytes(sized.largest)}) of the mean already (byte spread "
                f"{human_bytes(spread(sized.before))}), so no move serves --balance bytes "
                f"({counts}; --balance replicas balances counts)")
    if r.unplaced:
        return (f"{r.unplaced} move(s) would be needed for a spread of 1 and no valid plan "
                f"allows them (rack diversity, or partitions as wide as the broker list; "
                f"{counts})")
    return (f"{figures.topics} topic(s) are balanced over {len(before.replicas)} broker(s) "
            f"({counts})")


def _drains(say: Callable[[str], None], figures: Rebalanced) -> None:
    """The brokers a plan empties (or, partial, relieves): the spread over the targets does not
    show them."""
    if not figures.drained:
        return
    brokers = listed(figures.drained)
    held = sum(n for n, _ in figures.drained.values())
    afters = [m for _, m in figures.drained.values()]
    left = figures.after.elsewhere if None in afters else sum(m or 0 for m in afters)
    if not left:
        say(f"empties broker(s) {brokers}: their {held} replica(s) move to the targets")
    else:
        say(f"moves {held - left} of the {held} replica(s) off broker(s) {brokers}; {left} stay "
            f"there")


def _kept(say: Callable[[str], None], figures: Rebalanced) -> None:
    if figures.unregistered:
        say(f"broker(s) {listed(figures.unregistered)} are not registered: their replicas stay, "
            f"nothing new goes there, and the {figures.held} partition(s) holding one "
            f"are left as they are")


def demoted(figures: Demoted, as_json: bool) -> None:
    """The summary of a demotion: how many leaders move and where, the spread over the other
    brokers, and the partitions that stay; the plan itself went to ``figures.written``."""
    r, written = figures.result, figures.written
    rollback = files.sibling(written, ".rollback.json") if written else None
    stuck = (("all_demoted", figures.all_demoted, "every replica is on a demoted broker"),
             ("no_live_replica", figures.no_live_replica,
              "their other replicas are on unregistered brokers, which must not lead"),
             ("dead_led", figures.dead_led,
              "led by an unregistered broker that is not demoted (demote it too to move them)"))
    if as_json and (written or not r.leader_changes):  # else the plan went to stdout
        print_json({
            "plan": str(written) if written else None,
            "rollback": str(rollback) if rollback else None,
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
               for key, found, _ in stuck}})
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
        say(f"plan {written}, rollback {rollback} (the way back)")
        gate = (f" --no-health-gate (broker(s) {listed(figures.down)} are down: their partitions "
                f"are under-replicated)" if figures.down else "")
        say(f"next: kadmin reassign --plan {written} --elect{gate} (reordering only: it "
            f"completes at once, and --elect makes the new preferred leaders lead)")


def goal_lines(r: Rebalanced) -> list[str]:
    """What the plan did for topics, racks and capacities, in the words of spec section 7."""
    lines = []
    goal = r.topic_goal
    chunked = ("planned chunk by chunk, each exact for the broker counts the driver gave it: "
               "not proven the {} over the whole")
    if isinstance(goal, ChunkedGoal) and goal.certified:
        lines.append(
            f"worst topic spread {goal.spread}: "
            + ("the least any plan of these moves reaches" if goal.exact else
               f"planned chunk by chunk, not proven the least (no plan of these moves goes "
               f"below {goal.least})")
            + f"; {goal.chunks_proven:,} of {goal.chunks:,} chunk(s) ({goal.topics_proven:,} of "
              f"{goal.topics:,} topics) at their own topics' bound")
    elif goal is not None and goal.chunked and not goal.exact:
        extra = (goal.fewest or 0) - goal.plain_bound
        lines.append(
            f"worst topic spread {goal.spread} ({chunked.format('least')})" if goal.asked is None
            else (f"every topic within spread {goal.asked}" if goal.reachable else
                  f"topic spread {goal.asked} was not reached: the chunks end at {goal.spread}")
            + f": {goal.fewest} move(s), {extra} over the {goal.plain_bound} that balance the "
              f"brokers alone ({chunked.format('fewest' if goal.reachable else 'smallest')})")
    elif goal is not None and goal.asked is not None:
        extra = (goal.fewest or 0) - goal.plain_bound
        lines.append(
            (f"every topic within spread {goal.asked}" if goal.reachable else
             f"topic spread {goal.asked} is out of reach (racks, or partitions too few to "
             f"spread); the smallest reachable is {goal.spread}")
            + f": {goal.fewest} move(s) at {'least' if goal.exact else 'most'}, {extra} over "
              f"the {goal.plain_bound} that balance the brokers alone"
            + ("" if goal.exact else " (the search ran out of time: not proven the fewest)"))
    elif goal is not None:
        lines.append(f"worst topic spread {goal.spread}: "
                     + ("the least any plan of these moves reaches" if goal.exact else
                        "what the search reached, not proven the least"
                        + (f" (no plan of these moves goes below {goal.least})"
                           if goal.least is not None else "")))
    if r.racks is not None:
        lines.append(racks_line(r.racks, r.lower_bound))
    if r.over_capacity:
        lines.append(above_capacity("warning: above capacity after the plan: ", r.over_capacity))
    return lines


def racks_line(racks: RackBalance, bound: int) -> str:
    """Racks of unequal size: whether every broker was balanced across them, and if not why,
    how evenly the rule let them end and what the printed lower bound is."""
    free = racks.rack_free_bound
    if racks.within is not None:
        return ("racks: every broker balanced, no partition on fewer racks than it had; racks "
                f"cost {bound - free} move(s) over the rack-free bound {free}, because "
                f"{racks.within:,} partition(s) hold one replica on each rack they must keep "
                f"and could only move within their rack; lower bound {bound}: the fewest moves "
                "that keep every partition's racks, proven")
    if racks.across:
        return ("racks of unequal size: every broker balanced across them, no partition on "
                "fewer racks than it had"
                + (f"; racks cost {bound - free} move(s) over the rack-free bound {free}"
                   if bound > free else "")
                + ("" if racks.proven else "; not proven the fewest moves (the search's plan "
                   "makes more than the lower bound)"))
    if racks.spread is None:
        return ("racks of unequal size: balanced across racks: no ("
                + ("no plan balances every broker without a partition losing a rack"
                   if racks.proven else "the search found no plan that does without a "
                   "partition losing a rack, and too many partitions for the exact program to "
                   "say whether one exists")
                + "), so each rack is balanced inside"
                + (f" ({bound - free} move(s) over the rack-free bound {free})"
                   if bound > free else ""))
    why = " and ".join([f"rack(s) {listed(racks.below)} below"] * bool(racks.below)
                       + [f"rack(s) {listed(racks.above)} above"] * bool(racks.above))
    why = f"it keeps {why} a balanced share at best" if why else ""
    return ("racks of unequal size: balanced across racks: no (no plan balances every broker "
            f"without a partition losing a rack{': ' if why else ''}{why}); as "
            f"evenly as the rule allows: brokers' spread "
            f"{racks.spread}, each rack's within one; lower bound {bound}: the fewest moves "
            f"at that spread "
            + (f"({bound - free} over" if bound > free else "(below" if bound < free else
               "(equal to") + f" the rack-free bound {free}, which balances every broker)"
            + ("" if racks.proven else "; not proven the fewest moves (the plan makes more)"))


def schedule(scheduled: Scheduled, throttle: int | None, as_json: bool) -> None:
    """The batches a run would submit: partitions, bytes (with sizes), busiest broker and, with
    sizes and a throttle, the modelled duration (spec section 8) next to the lower bound."""
    timed = throttle is not None and scheduled.sized
    predicted = scheduled.prediction(throttle) if timed and throttle else None
    rows = [(i, b, None if predicted is None else predicted.batches[i - 1])
            for i, b in enumerate(scheduled.batches, start=1)]
    views = scheduled.transfers
    if as_json:
        print_json({
            "batches": [{
                "batch": i, "partitions": len(b),
                "bytes": sum(t.work for t in views[i - 1]) if scheduled.sized else None,
                "busiest_broker": load_of(views[i - 1])[1],
                "predicted_seconds": None if p is None else p.seconds,
                "lower_bound_seconds": None if p is None else p.lower_bound_seconds,
                "first": str(b[0].tp), "last": str(b[-1].tp)} for i, b, p in rows],
            "partitions": sum(map(len, views)),
            "bytes": sum(t.work for v in views for t in v) if scheduled.sized else None,
            "busiest_broker": load_of(t for v in views for t in v)[1],
            "predicted_seconds": None if predicted is None else predicted.seconds,
            "lower_bound_seconds": None if predicted is None else predicted.lower_bound_seconds,
            "throttle": throttle})
        return
    table = Table(title=f"{len(rows)} batch(es)")
    for column in ("batch", "partitions", *(("bytes",) if scheduled.sized else ()),
                   "busiest broker", *(("predicted",) if timed else ()), "first", "last"):
        table.add_column(column)
    shown = sample_of(rows)
    for i, b, p in shown.items:
        view = views[i - 1]
        table.add_row(str(i), str(len(b)),
                      *((human_bytes(sum(t.work for t in view)),) if scheduled.sized else ()),
                      str(load_of(view)[1] if view else "-"),
                      *((human_duration(p.seconds),) if p is not None else ()),
                      cell(str(b[0].tp)), cell(str(b[-1].tp)))
    if shown.rest:
        table.add_row(and_more(shown.rest))
    out.print(table)
    every = [t for view in views for t in view]
    busiest = load_of(every)[1]
    plan_line = (f"plan: {len(every)} partition(s) in {len(rows)} batch(es)"
                 + (f", {human_bytes(sum(t.work for t in every))} to copy" if scheduled.sized
                    else "")
                 + ("" if busiest is None else f", busiest broker {busiest}"))
    if predicted is not None:
        out.print(f"{plan_line}; predicted {human_duration(predicted.seconds)} at "
                  f"{human_bytes(predicted.rate)}/s (lower bound "
                  f"{human_duration(predicted.lower_bound_seconds)}, "
                  f"{predicted.seconds / predicted.lower_bound_seconds:.2f}x)"
                  if predicted.lower_bound_seconds else f"{plan_line}; nothing to copy",
                  markup=False, soft_wrap=True)
    else:
        out.print(plan_line + ("; give --throttle RATE for the predicted duration"
                               if scheduled.sized else ""), markup=False, soft_wrap=True)


@contextmanager
def progress(as_json: bool) -> Iterator[Callable[[Event], None]]:
    """A sink for executor events: JSON lines on stdout, or a rich progress bar on stderr."""
    if as_json:
        def emit_json(event: Event) -> None:
            write_stdout([json.dumps(event_to_json(event)) + "\n"])
        yield emit_json
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[amount]}"),
                   TextColumn("{task.fields[note]}"), TimeElapsedColumn(), console=err,
                   transient=False)
    task = bar.add_task("starting", total=None, note="", amount="")
    sized = False  # with partition sizes the bar counts bytes, else partitions

    def count(done: int, total: float | None) -> None:
        bar.update(task, completed=done, total=total,
                   amount=f"{human_bytes(done)}/{human_bytes(total or 0)}" if sized
                   else f"{done}/{total}")

    def emit(event: Event) -> None:
        # shown from the first event on: a run refused before it (bad input, conflict)
        # leaves only its error on the terminal, not an empty bar
        nonlocal sized
        if not bar.live.is_started:
            bar.start()
        if isinstance(event, ExecutionPlanned):
            resumed = ", resuming an earlier run" if event.resumed else ""
            unit = "topic(s)" if event.operation == "delete" else "partition(s)"
            data = "" if event.bytes_total is None else f", {human_bytes(event.bytes_total)} to copy"
            bar.console.print(
                f"{event.operation}: {event.total} {unit}, {event.unchanged} need nothing, "
                f"{event.already_done} already done, {event.batches} batch(es) to run"
                f"{data}{resumed}", markup=False)
            sized = event.bytes_total is not None
            bar.update(task, description=event.operation)
            if sized:
                count(0, event.bytes_total)
            else:
                count(event.already_done, event.total)
        elif isinstance(event, BatchSubmitted | BatchResumed):
            verb = "resumed" if isinstance(event, BatchResumed) else "submitted"
            data = (f", {human_bytes(event.bytes)}"
                    if isinstance(event, BatchSubmitted) and event.bytes is not None else "")
            bar.update(task, note=f"batch {event.batch}/{event.batches} {verb} "
                                  f"({event.size}{data})")
        elif isinstance(event, HealthWait):
            bar.update(task, note=f"before batch {event.batch}: waiting while "
                                  f"{event.under_replicated} under-replicated and {event.offline} "
                                  f"offline partition(s)"
                                  + (f" and {event.unreadable} with an unreadable state znode"
                                     if event.unreadable else "")
                                  + " outside the plan recover "
                                  f"({', '.join(event.sample)})")
        elif isinstance(event, ThrottleSet):
            bar.console.print(f"batch {event.batch}: throttle {human_bytes(event.rate)}/s set on "
                              f"{event.brokers} broker(s), {event.topics} topic(s)", markup=False)
        elif isinstance(event, ThrottleCleared):
            bar.console.print(f"batch {event.batch}: kadmin's throttles removed from "
                              f"{event.entities} config(s)", markup=False)
        elif isinstance(event, Waiting):
            note = "waiting"
            if not event.connected:
                note = "ZooKeeper connection lost, reconnecting"
            elif event.controller is None:
                note = "no controller elected, waiting for one"
            if sized and event.bytes_done is not None:
                count(event.bytes_done, event.bytes_total)
                note += _byte_note(event)
            else:
                count(event.done, event.total)
            bar.update(task, note=f"batch {event.batch}: {event.remaining} left, {note}")
        elif isinstance(event, BatchDone):
            if sized and event.bytes_done is not None:
                count(event.bytes_done, bar.tasks[0].total)
            else:
                count(event.done, event.total)
            bar.update(task, note=f"batch {event.batch}/{event.batches} done")
        elif isinstance(event, TimedOut):
            bar.update(task, note=f"timed out with {event.remaining} still in flight")
        elif isinstance(event, Finished):
            bar.update(task, note="done" if event.ok else f"{event.failed} failed")

    try:
        yield emit
    finally:
        if bar.live.is_started:
            bar.stop()


def _byte_note(event: Waiting) -> str:
    """``; batch 1.2 GB/3 GB, 50 MB/s, ETA batch 36s, plan 5m10s``."""
    rate = "rate unknown yet" if event.rate is None else f"{human_bytes(event.rate)}/s"
    eta = ("" if event.eta is None or event.batch_eta is None else
           f", ETA batch {human_duration(event.batch_eta)}, plan {human_duration(event.eta)}")
    return (f"; batch {human_bytes(event.batch_bytes_done or 0)}/"
            f"{human_bytes(event.batch_bytes_total or 0)}, {rate}{eta}")


def throttles(in_force: Sequence[EntityThrottle], as_json: bool, title: str = "throttles",
              unreadable: Sequence[tuple[str, str]] = ()) -> None:
    """Replication throttles per config entity, kadmin's own marked; the table is sampled like
    every list, and so is each throttled-replicas value (one entry per partition replica). The
    config znodes and kadmin records that cannot be decoded are warnings (sampled too)."""
    warnings = sample_of(unreadable)
    print_sampled(err, (f"cannot decode {path}: {reason}" for path, reason in unreadable),
                  "kadmin: warning: ")
    if as_json:
        print_json({"throttles": [_throttle_doc(t) for t in in_force],
                    "unreadable": [{"path": p, "reason": r} for p, r in warnings.items],
                    "unreadable_count": warnings.total})
        return
    if not in_force:
        out.print(f"{title}: none", markup=False)
        return
    shown = sample_of(in_force)
    table = Table(title=f"{title}: {shown.total} config(s)")
    for column in ("config", "throttle", "set by kadmin"):
        table.add_column(column)
    for entity in shown.items:
        table.add_row(cell(f"/config/{entity.entity}"),
                      Text("\n").join(cell(f"{k}={listed(v.split(','))}")
                                       for k, v in entity.values.items()) or "-",
                      _set_by_kadmin(entity))
    if shown.rest:
        table.add_row(and_more(shown.rest))
    out.print(table)


def _set_by_kadmin(entity: EntityThrottle) -> str:
    if entity.record_error:
        return "unreadable record"
    return "yes" if entity.own else "no"


def _throttle_doc(entity: EntityThrottle) -> dict[str, object]:
    return {"config": f"/config/{entity.entity}", "values": entity.values,
            "kadmin": entity.own.to_json() if entity.own else None,
            "kadmin_record_error": entity.record_error}


def status(st: Status, as_json: bool) -> None:
    """What ``kadmin status`` shows: a table of the cluster, one of its brokers, and a warning
    per znode that cannot be decoded; or all of it as one JSON document."""
    if as_json:
        print_json(_status_doc(st))
        return
    table = Table(show_header=False, title="cluster status")
    table.add_column(style="bold")
    table.add_column()
    for label, value in chain(_overview_rows(st), _health_rows(st), _work_rows(st)):
        table.add_row(label, cell(value))  # rack and topic names come from ZooKeeper
    out.print(table)
    _shares_table(st)
    print_sampled(err, (f"cannot decode {path}: {reason}" for path, reason in st.unreadable),
                  "kadmin: warning: ")
    if st.over_capacity:
        err.print(above_capacity("kadmin: warning: above capacity: ", st.over_capacity),
                  markup=False)


def _status_doc(st: Status) -> dict[str, object]:
    health, shares, in_flight = st.health, st.shares, st.in_flight
    use = {u.broker: u for u in st.use}
    warnings = sample_of(st.unreadable)
    return {
        "controller": st.controller, "controller_epoch": st.epoch,
        "brokers": [{"id": s.broker, "rack": s.rack, "replicas": s.replicas,
                     "preferred_leaders": s.preferred, "leaders": s.leading,
                     "bytes": None if st.held is None else st.held.get(s.broker, 0),
                     "capacity": use[s.broker].capacity if use else None,
                     "replica_share": round(use[s.broker].share, 3) if use else None,
                     "used": use[s.broker].used if use else None}
                    for s in shares.brokers],
        "over_capacity": over_capacity_doc(st.over_capacity),
        "replica_spread": shares.replica_spread, "preferred_leader_spread": shares.preferred_spread,
        "leader_spread": shares.leader_spread, "worst_topic_spread": shares.worst_topic_spread,
        "worst_topic": shares.worst_topic,
        "topics": health.topics, "partitions": health.partitions,
        "under_replicated": [str(tp) for tp in health.under_replicated],
        "offline": [str(tp) for tp in health.offline],
        "not_preferred_leader": [str(tp) for tp in health.not_preferred],
        "reassignment_in_progress": None if in_flight.reassignment is None
        else [str(m.tp) for m in in_flight.reassignment],
        "reassigning": [{"partition": str(tp), "target": list(m.target),
                         "original": list(m.original)} for tp, m in health.reassigning],
        "election_in_progress": None if in_flight.election is None
        else [str(tp) for tp in in_flight.election],
        "deletions_in_progress": list(in_flight.deletions),
        "unreadable": [{"path": p, "reason": r} for p, r in warnings.items],
        "unreadable_count": warnings.total,
        "throttles": [_throttle_doc(t) for t in st.throttles],
    }


Rows = Iterator[tuple[str, str]]


def _overview_rows(st: Status) -> Rows:
    """The controller, the live brokers, the counts and the spreads."""
    shares = st.shares
    yield ("controller", f"{st.controller} (epoch {st.epoch})" if st.controller is not None
           else "none")
    yield ("live brokers", listed(f"{s.broker}" + (f" ({s.rack})" if s.rack else "")
                                  for s in shares.brokers) or "none")
    yield ("topics / partitions", f"{st.health.topics} / {st.health.partitions}")
    yield ("spread", f"replicas {shares.replica_spread}, preferred leaders "
                     f"{shares.preferred_spread}, leaders {shares.leader_spread}, worst topic "
                     f"{shares.worst_topic_spread}"
                     + (f" ({shares.worst_topic})" if shares.worst_topic else "")
                     + (" (kadmin plan rebalance evens them out)"
                        if max(shares.replica_spread, shares.preferred_spread) > 1 and not st.use
                        else ""))
    if st.use:
        counts = {s.broker: s.replicas for s in shares.brokers}
        off = [u.broker for u in st.use if not u.low <= counts.get(u.broker, 0) <= u.high]
        yield ("capacity shares", f"{len(off)} broker(s) off their replica share: "
               f"{listed(off)} (kadmin plan rebalance --capacity FILE evens them out)" if off
               else "every broker at its replica share")


def _health_rows(st: Status) -> Rows:
    """Partitions under-replicated, offline, or not led by their preferred replica."""
    for label, tps in (("under-replicated", st.health.under_replicated),
                       ("offline", st.health.offline),
                       ("not led by preferred replica", st.health.not_preferred)):
        yield (label, f"{len(tps)}" + (f": {listed(tps)}" if tps else ""))


def _work_rows(st: Status) -> Rows:
    """The admin work in progress and the throttles in force. An admin znode that exists but
    cannot be decoded is not "none": that would invite a second operation while one may be
    running."""
    in_flight, moving = st.in_flight, st.health.reassigning
    broken = {path for path, _ in st.unreadable}
    yield ("reassignment", _in_flight([m.tp for m in in_flight.reassignment])
           if in_flight.reassignment is not None else
           _absent(paths.REASSIGN_PARTITIONS, broken))
    yield ("moving (topic znodes)", f"{len(moving)}" + (
        ": " + listed(f"{tp} {list(m.original)} -> {list(m.target)}" for tp, m in moving)
        if moving else ""))
    yield ("preferred election", _in_flight(in_flight.election)
           if in_flight.election is not None else
           _absent(paths.PREFERRED_REPLICA_ELECTION, broken))
    yield ("topic deletions", listed(in_flight.deletions) if in_flight.deletions else "none")
    yield ("replication throttles",
           f"{len(st.throttles)} config(s): {listed(f'/config/{t.entity}' for t in st.throttles)}"
           if st.throttles else "none")


def _shares_table(st: Status) -> None:
    """Replicas and leaderships per broker, the busiest first (with capacities and sizes, the
    fullest first), so skew shows at the top; with sizes the bytes on each, with capacities
    each broker's capacity, its share of the replicas (spec section 7) and the part in use."""
    shares, held = st.shares, st.held
    if not shares.brokers:
        return
    use = {u.broker: u for u in st.use}
    used = bool(use) and held is not None
    table = Table(title="per broker")
    for column in ("broker", "rack", "replicas", "preferred leaders", "leaders",
                   *(("bytes",) if held is not None else ()),
                   *(("capacity", "replica share") if use else ()), *(("used",) if used else ())):
        table.add_column(column, justify="right")
    shown = sample_of(sorted(shares.brokers, key=lambda s: (
        -(use[s.broker].used or 0) if used else 0, -s.replicas, s.broker)))
    for s in shown.items:
        u = use.get(s.broker)
        table.add_row(str(s.broker), cell(s.rack or ""), str(s.replicas), str(s.preferred),
                      str(s.leading), *((human_bytes(held.get(s.broker, 0)),)
                                        if held is not None else ()),
                      *((human_bytes(u.capacity), f"{u.share:.1f}") if u else ()),
                      *((f"{u.used or 0:.0%}",) if u and used else ()))
    if shown.rest:
        table.add_row(and_more(shown.rest))
    out.print(table)


def _absent(path: str, unreadable: set[str]) -> str:
    return f"unreadable ({path} exists, see the warning)" if path in unreadable else "none"


def _in_flight(tps: Sequence[TopicPartition]) -> str:
    return f"in progress, {len(tps)} partition(s) remaining: {listed(tps)}"


@contextmanager
def planner_progress() -> Iterator[Callable[[PlannerEvent], None]]:
    """A sink for a Spark planner's events, on stderr: its notes as lines, each stage as a line
    when it ends (tasks and seconds), and on a terminal a bar for the stage under way."""
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("tasks"), TimeElapsedColumn(), console=err, transient=True)
    started: dict[str, tuple[float, TaskID]] = {}

    def emit(event: PlannerEvent) -> None:
        if isinstance(event, PlannerNote):
            bar.console.print(event.text, markup=False)
            return
        if event.stage not in started:
            started[event.stage] = (time.monotonic(), bar.add_task(event.stage, total=None))
        begun, task = started[event.stage]
        if event.finished:
            bar.remove_task(task)
            bar.console.print(f"{event.stage}: {event.total} task(s) in "
                              f"{time.monotonic() - begun:.1f} s", markup=False)
            return
        if event.total:
            if err.is_terminal and not bar.live.is_started:
                bar.start()
            bar.update(task, completed=event.done, total=event.total)

    try:
        yield emit
    finally:
        if bar.live.is_started:  # never started (an input error first): no stray blank line
            bar.stop()
