"""``kadmin plan demote``: preferred leadership off some brokers, by reordering replica lists."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from kadmin import files, plans
from kadmin.balance.demote import demote
from kadmin.balance.table import PartitionTable
from kadmin.cli import render
from kadmin.cli.common import (
    ClusterOpt,
    ConnectTimeoutOpt,
    JsonOpt,
    SessionTimeoutOpt,
    SkipUnreadableOpt,
    ZookeeperOpt,
    load_cluster,
    split_ints,
)
from kadmin.cli.plan import ForceOpt, OutOpt, TopicsFileOpt, TopicsOpt, select_topics, write_plan
from kadmin.cli.rebalance import AllTopicsOpt
from kadmin.model import (
    ClusterSnapshot,
    InvalidInput,
    PlanKind,
    ReassignmentPlan,
    listed,
    sample_of,
)


def plan_demote(
    brokers: Annotated[str, typer.Option(
        "--brokers", help="The brokers to demote, comma-separated: no partition that has a "
                          "replica elsewhere keeps one of them as its preferred leader.")],
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsOpt = False,
    minimal: Annotated[bool, typer.Option(
        "--minimal", help="Change only the partitions the demoted brokers lead (the fewest "
                          "changes; the leader spread it leaves is reported) instead of also "
                          "balancing leaders over the other brokers.")] = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Move preferred leadership off brokers (before a restart, or off a suspect broker) by
    reordering replica lists only, no data moved; write the plan and its rollback (the way
    back).

    Example: kadmin plan demote --brokers 3 -z zk1:2181/kafka -o plans/demote.json; then
    kadmin reassign --plan plans/demote.json -z zk1:2181/kafka and kadmin elect --all -z ...
    """
    demoted = split_ints(brokers, "--brokers")
    with files.gc_paused():
        snapshot = load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                                states=False, skip_unreadable=skip_unreadable)
        selected = select_topics(snapshot, topics, topics_file,
                                 all_topics or (topics is None and topics_file is None))
        plan, rollback, figures = demoted_plan(snapshot, selected, demoted, minimal=minimal)
        written = (write_plan(plan, PlanKind.REASSIGN, out_path, force, rollback)
                   if plan.moves else None)
    render.demoted(figures, written, json_output)


def demoted_plan(snapshot: ClusterSnapshot, selected: Sequence[str], demoted: Sequence[int], *,
                 minimal: bool = False
                 ) -> tuple[ReassignmentPlan, ReassignmentPlan, render.Demoted]:
    """The plan, its rollback and the figures of demoting ``demoted`` over ``selected``
    topics."""
    repeated = sorted({b for b in demoted if demoted.count(b) > 1})
    if repeated:
        raise InvalidInput(f"--brokers: broker(s) {listed(repeated)} listed twice")
    chosen = set(selected)
    plans.refuse_moving(snapshot.reassigning, lambda tp: tp.topic in chosen,
                        "no plan is made for their topics")
    table = PartitionTable.from_topics(snapshot.topics, selected)
    holding = {b for members in table.replicas for b in members}
    unknown = sorted(set(demoted) - holding - set(snapshot.brokers))
    if unknown:
        raise InvalidInput(f"--brokers: broker(s) {listed(unknown)} are neither registered nor "
                           f"hold replicas of these topics")
    result = demote(table.replicas, demoted, snapshot.brokers, minimal=minimal)
    if not result.targets and table.replicas:
        raise InvalidInput(f"no broker is left to lead: every registered broker holding "
                           f"replicas of these topics is in --brokers ({listed(sorted(demoted))})")
    moves, undo = table.moves(result.final)
    return (ReassignmentPlan(tuple(moves)), ReassignmentPlan(tuple(undo)),
            render.Demoted(result, tuple(sorted(demoted)), len(selected), minimal,
                           *(sample_of(str(table.tp(i)) for i in found) for found in (
                               result.all_demoted, result.no_live_replica, result.dead_led)),
                           tuple(b for b in sorted(demoted) if b not in snapshot.brokers)))
