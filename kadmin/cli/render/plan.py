"""What ``kadmin plan`` shows: verdicts, plan stats, and the summaries of the plans it writes
(``spark rebalance`` and ``demo`` show a rebalance the same way)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator
from itertools import chain

from rich.table import Table

from kadmin import files, reports
from kadmin.balance.chunks import ChunkedGoal
from kadmin.balance.metrics import loads, spread
from kadmin.balance.rebalance import RackBalance
from kadmin.cli.common import err, out, print_sampled, write_stdout
from kadmin.cli.render import above_capacity, over_capacity_doc, print_json
from kadmin.model import INLINE_LIMIT, Severity, and_more, listed, sample_of
from kadmin.operations.demote import Demoted
from kadmin.operations.generate import Generated
from kadmin.operations.rebalance import Rebalanced
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


def generated(made: Generated, as_json: bool, *, to_stderr: bool) -> None:
    """The summary of ``plan generate`` (on stderr when the plan itself went to stdout)."""
    written, rf_changes = made.written, made.rf_changes
    rollback_path = str(files.rollback_of(written)) if written else None
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


def rebalanced(figures: Rebalanced, as_json: bool) -> None:
    """The summary of a rebalance; the plan itself went to ``figures.written`` (None: to
    stdout, or no plan because nothing needs to move). A folder plan (``kadmin spark
    rebalance``) is written even when empty, and gets its rollback file when ``kadmin
    reassign`` runs it."""
    r, before, after, sized = figures, figures.before, figures.after, figures.byte_figures
    written, folder = figures.written, figures.folder
    rollback = files.rollback_of(written) if written and not folder else None
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
    rollback = files.rollback_of(written) if written else None
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
