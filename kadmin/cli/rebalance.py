"""``kadmin plan rebalance``: the fewest replica moves that balance topics over brokers."""

from __future__ import annotations

from typing import Annotated

import typer

from kadmin import files, plans
from kadmin.balance import metrics, rebalance
from kadmin.balance.replicas import replica_counts
from kadmin.balance.scope import scope_of
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
from kadmin.cli.plan import (
    ForceOpt,
    OutOpt,
    TopicsFileOpt,
    TopicsOpt,
    select_topics,
    write_plan,
)
from kadmin.model import PlanKind, ReassignmentPlan

AllTopicsOpt = Annotated[bool, typer.Option(
    "--all-topics", help="Every topic of the cluster (the default).")]
BrokersOpt = Annotated[str | None, typer.Option(
    "--brokers", help="The target brokers, comma-separated; replicas on any other broker "
                      "move (default: every registered broker).")]
RemoveBrokersOpt = Annotated[str | None, typer.Option(
    "--remove-brokers", help="Brokers to drain, comma-separated (every replica of the "
                             "selected topics moves off them).")]
LeadersOpt = Annotated[bool, typer.Option(
    "--leaders/--no-leaders", help="Balance preferred leaders by reordering replica lists "
                                   "(no data moves).")]
MaxMovesOpt = Annotated[int | None, typer.Option(
    "--max-moves", min=0, help="A partial plan of at most N replica moves, the most loaded "
                               "brokers relieved first; run again to continue.")]
RackOpt = Annotated[bool, typer.Option("--disable-rack-aware", help="Ignore racks.")]
"""Options ``kadmin spark rebalance`` shares."""


def plan_rebalance(
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsOpt = False,
    brokers: BrokersOpt = None,
    remove_brokers: RemoveBrokersOpt = None,
    replication_factor: Annotated[int | None, typer.Option(
        "--replication-factor", min=1,
        help="Change the replication factor of the selected topics instead: an increase keeps "
             "every replica and the leader and adds replicas on the least loaded brokers; a "
             "decrease drops followers from the most loaded.")] = None,
    leaders: LeadersOpt = True,
    max_moves: MaxMovesOpt = None,
    max_leader_changes: Annotated[int | None, typer.Option(
        "--max-leader-changes", min=0, help="At most N partitions change preferred leader "
                                            "(moving a leader's replica counts).")] = None,
    disable_rack_aware: RackOpt = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Balance replicas and preferred leaders with the fewest replica moves, and write the plan
    and its rollback file.

    Examples: kadmin plan rebalance -z zk1:2181/kafka (fix skew, or fill new brokers);
    kadmin plan rebalance -z zk1:2181/kafka --remove-brokers 5 (drain broker 5)
    """
    with files.gc_paused():  # millions of acyclic tuples and dicts: the collector only slows it
        snapshot = load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                                states=False, skip_unreadable=skip_unreadable)
        selected = select_topics(snapshot, topics, topics_file,
                                 all_topics or (topics is None and topics_file is None))
        chosen = set(selected)
        plans.refuse_moving(snapshot.reassigning, lambda tp: tp.topic in chosen,
                            "no plan is made for their topics")
        table = PartitionTable.from_topics(snapshot.topics, selected)
        counts = replica_counts(table.replicas)
        scope = scope_of(snapshot.brokers, counts,
                         split_ints(brokers, "--brokers") if brokers is not None else None,
                         split_ints(remove_brokers, "--remove-brokers")
                         if remove_brokers is not None else None, not disable_rack_aware)
        limits = rebalance.Limits(max_moves, max_leader_changes)
        if replication_factor is None:
            result = rebalance.rebalance(table, scope.targets, scope.rack_of, leaders=leaders,
                                         limits=limits, counts=counts)
        else:
            loads = replica_counts([r for t in snapshot.topics.values() for r in t.values()])
            result = rebalance.change_factor(table, replication_factor, scope.targets, loads,
                                             scope.rack_of, limits)
        moves, undo = table.moves(result.final)
        plan = ReassignmentPlan(tuple(moves))
        after = [result.final.get(i, r) for i, r in enumerate(table.replicas)]
        figures = render.Rebalanced(
            result, len(selected), len(plan.moves),
            metrics.balance(table.replicas, table.topic_of, table.topics, scope.targets),
            metrics.balance(after, table.topic_of, table.topics, scope.targets),
            replication_factor is not None)
        if not plan.moves:
            render.rebalanced(figures, None, json_output)
            return
        written = write_plan(plan, PlanKind.REASSIGN, out_path, force,
                             ReassignmentPlan(tuple(undo)))
    render.rebalanced(figures, written, json_output)

