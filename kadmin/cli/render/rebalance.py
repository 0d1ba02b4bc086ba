"""What a rebalance shows (``plan rebalance``, ``spark rebalance`` and ``demo`` alike): its
moves against the lower bound, the spreads, the brokers drained, and what it did for topics,
racks and capacities."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from kadmin import files
from kadmin.balance.across import RackBalance
from kadmin.balance.chunk_topics import ChunkedGoal
from kadmin.balance.metrics import loads, spread
from kadmin.cli.common import err, out, print_sampled
from kadmin.cli.render import above_capacity, over_capacity_doc, print_json
from kadmin.model import listed
from kadmin.operations.rebalance import Rebalanced
from kadmin.units import human_bytes


def rebalanced(figures: Rebalanced, as_json: bool) -> None:
    """The summary of a rebalance; the plan itself went to ``figures.written`` (None: to
    stdout, or no plan because nothing needs to move). A folder plan (``kadmin spark
    rebalance``) is written even when empty, and gets its rollback file when ``kadmin
    reassign`` runs it."""
    r, before, after, sized = figures, figures.before, figures.after, figures.byte_figures
    written, folder = figures.written, figures.folder
    rollback = files.rollback_of(written) if written and not folder else None
    if as_json:  # on stderr when the plan itself went to stdout
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
            "over_capacity": over_capacity_doc(r.over_capacity)},
            to_stderr=not (written or not figures.partitions))
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


def goal_lines(r: Rebalanced) -> list[str]:
    """What the plan did for topics, racks and capacities, in the words of docs/balancing.md,
    then the one lower bound and what it is made of: each figure stated once."""
    lines = []
    goal = r.topic_goal
    chunked = ("planned chunk by chunk, each exact for the broker counts the driver gave it: "
               "not proven the {} over the whole")
    if isinstance(goal, ChunkedGoal) and goal.racked:
        lines.append(
            f"worst topic spread {goal.spread}: "
            + ("the least any plan of these moves reaches, proven over the whole selection"
               if goal.exact else
               f"planned over the whole selection, not proven the least (no plan of these "
               f"moves goes below {goal.least})" if goal.racked == "whole" else
               f"planned chunk by chunk at the broker counts split from the whole plan of the "
               f"fewest moves; the least those counts allow in {goal.chunks_proven:,} of "
               f"{goal.chunks:,} chunk(s); not proven the least over the whole (no plan goes "
               f"below {goal.least})"))
    elif isinstance(goal, ChunkedGoal) and goal.certified:
        lines.append(
            f"worst topic spread {goal.spread}: "
            + ("the least any plan of these moves reaches" if goal.exact else
               f"planned chunk by chunk, not proven the least (no plan of these moves goes "
               f"below {goal.least})")
            + f"; {goal.chunks_proven:,} of {goal.chunks:,} chunk(s) ({goal.topics_proven:,} of "
              f"{goal.topics:,} topics) at their own topics' bound")
    elif goal is not None and goal.chunked and not goal.exact:
        lines.append(
            f"worst topic spread {goal.spread} ({chunked.format('least')})" if goal.asked is None
            else (f"every topic within spread {goal.asked}" if goal.reachable else
                  f"topic spread {goal.asked} was not reached: the chunks end at {goal.spread}")
            + f" ({chunked.format('fewest' if goal.reachable else 'smallest')})")
    elif goal is not None and goal.asked is not None:
        lines.append(
            (f"every topic within spread {goal.asked}" if goal.reachable else
             f"topic spread {goal.asked} is out of reach (racks, or partitions too few to "
             f"spread); the smallest reachable is {goal.spread}")
            + ("" if goal.exact else f" (the search ran out of time: {goal.fewest} move(s), "
                                     f"not proven the fewest)"))
    elif goal is not None:
        lines.append(f"worst topic spread {goal.spread}: "
                     + ("the least any plan of these moves reaches" if goal.exact else
                        "what the search reached, not proven the least"
                        + (f" (no plan of these moves goes below {goal.least})"
                           if goal.least is not None else "")))
    if r.racks is not None:
        lines.append(racks_line(r.racks))
    bound = bound_line(r)
    if bound is not None:
        lines.append(bound)
    if r.over_capacity:
        lines.append(above_capacity("warning: above capacity after the plan: ", r.over_capacity))
    return lines


def bound_line(r: Rebalanced) -> str | None:
    """The lower bound and its parts, where it has more than one (racks, or --topic-spread):
    the moves that balance the brokers racks aside (the rack-free bound), what racks add (or,
    where they keep the brokers uneven, what they spare), and what the topic goal adds. None
    for a bound in bytes, or one with a single part (the first line states it)."""
    goal, racks, total = r.topic_goal, r.racks, r.lower_bound
    topics = goal is not None and goal.asked is not None
    if r.bytes_moved is not None or (racks is None and not topics):
        return None
    # the moves that balance the brokers: the racks' own fewest where they decided them
    # (the topic goal's moves come on top), else the topic goal's plain bound
    brokers = racks.fewest if racks is not None and racks.fewest is not None else \
        goal.plain_bound if topics and goal is not None else total
    parts = []
    if racks is None:
        parts.append(f"{brokers} to balance the brokers")
    elif brokers >= racks.rack_free_bound:
        free = racks.rack_free_bound
        parts.append(f"{free} to balance every broker, racks aside (the rack-free bound)")
        parts.append(f"{brokers - free} more that racks cost" if brokers > free else
                     "none more for racks")
    else:
        parts.append(f"{brokers} to even the brokers as far as racks allow (balancing every "
                     f"broker, which racks forbid, would take {racks.rack_free_bound})")
    if topics and goal is not None:
        # the spread asked, or the smallest reachable where it is not
        within = goal.asked if goal.reachable and goal.asked is not None else goal.spread
        parts.append(f"{total - brokers} more to bring every topic within spread {within}"
                     if total > brokers else
                     f"none more to bring every topic within spread {within}")
    return f"lower bound {total}: " + ", ".join(parts)


def racks_line(racks: RackBalance) -> str:
    """Racks of unequal size: whether every broker was balanced across them, and if not why,
    and how evenly the rule let them end (the moves are the bound line's)."""
    if racks.within is not None:
        return ("racks: every broker balanced, no partition on fewer racks than it had; "
                f"{racks.within:,} partition(s) hold one replica on each rack they must keep "
                f"and can only move within their rack (what racks cost); the fewest moves that "
                "keep every partition's racks, proven")
    if racks.across:
        return ("racks of unequal size: every broker balanced across them, no partition on "
                "fewer racks than it had"
                + ("" if racks.proven else "; not proven the fewest moves (the search's plan "
                   "makes more than the lower bound)"))
    if racks.spread is None:
        return ("racks of unequal size: balanced across racks: no ("
                + ("no plan balances every broker without a partition losing a rack"
                   if racks.proven else "the search found no plan that does without a "
                   "partition losing a rack, and too many partitions for the exact program to "
                   "say whether one exists")
                + "), so each rack is balanced inside")
    why = " and ".join([f"rack(s) {listed(racks.below)} below"] * bool(racks.below)
                       + [f"rack(s) {listed(racks.above)} above"] * bool(racks.above))
    why = f"it keeps {why} a balanced share at best" if why else ""
    return ("racks of unequal size: balanced across racks: no (no plan balances every broker "
            f"without a partition losing a rack{': ' if why else ''}{why}); as "
            f"evenly as the rule allows: brokers' spread {racks.spread}, each rack's within one"
            + ("" if racks.proven else "; not proven the fewest moves (the plan makes more)"))
