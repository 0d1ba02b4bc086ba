"""``kadmin plan rebalance``: the fewest replica moves that balance topics over brokers."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Annotated

import typer

from kadmin import files, plans
from kadmin.balance import metrics, rebalance
from kadmin.balance.replicas import replica_counts
from kadmin.balance.scope import scope_of
from kadmin.balance.table import PartitionTable
from kadmin.balance.weighted import bytes_per_broker
from kadmin.cli import render
from kadmin.cli.common import (
    ClusterOpt,
    ConnectTimeoutOpt,
    JsonOpt,
    SessionTimeoutOpt,
    SizesOpt,
    SkipUnreadableOpt,
    ZookeeperOpt,
    load_cluster,
    partition_sizes,
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
from kadmin.model import (
    ClusterSnapshot,
    InvalidInput,
    PlanKind,
    ReassignmentPlan,
    Replicas,
    TopicPartition,
)
from kadmin.sizes import moved_bytes

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
    sizes_path: SizesOpt = None,
    balance: Annotated[str, typer.Option(
        "--balance", help="replicas: replica counts per broker with the fewest moves (the "
                          "default); bytes: bytes per broker within one largest partition of "
                          "each other, moving as few bytes as it finds (needs sizes).")
    ] = "replicas",
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
    if balance not in ("replicas", "bytes"):
        raise typer.BadParameter("must be replicas or bytes", param_hint="--balance")
    by_bytes = balance == "bytes"
    if by_bytes and (replication_factor is not None or max_moves is not None
                     or max_leader_changes is not None):
        raise InvalidInput("--balance bytes makes a whole plan: it does not combine with "
                           "--replication-factor, --max-moves or --max-leader-changes")
    with files.gc_paused():  # millions of acyclic tuples and dicts: the collector only slows it
        snapshot = load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                                states=False, skip_unreadable=skip_unreadable)
        selected = select_topics(snapshot, topics, topics_file,
                                 all_topics or (topics is None and topics_file is None))
        found = partition_sizes(sizes_path, snapshot)
        if by_bytes and found is None:
            raise InvalidInput("--balance bytes needs partition sizes: give --sizes FILE (or a "
                               "snapshot that carries them)")
        plan, rollback, figures = rebalanced_plan(
            snapshot, selected,
            split_ints(brokers, "--brokers") if brokers is not None else None,
            split_ints(remove_brokers, "--remove-brokers") if remove_brokers is not None else None,
            replication_factor=replication_factor, leaders=leaders,
            limits=rebalance.Limits(max_moves, max_leader_changes),
            rack_aware=not disable_rack_aware, sizes=found, by_bytes=by_bytes)
        written = (write_plan(plan, PlanKind.REASSIGN, out_path, force, rollback)
                   if plan.moves else None)
    render.rebalanced(figures, written, json_output)


def rebalanced_plan(snapshot: ClusterSnapshot, selected: Sequence[str],
                    brokers: Sequence[int] | None = None, remove: Sequence[int] | None = None, *,
                    replication_factor: int | None = None, leaders: bool = True,
                    limits: rebalance.Limits | None = None, rack_aware: bool = True,
                    sizes: Mapping[TopicPartition, int] | None = None, by_bytes: bool = False
                    ) -> tuple[ReassignmentPlan, ReassignmentPlan, render.Rebalanced]:
    """The plan, its rollback and the figures of a rebalance (or replication factor change) of
    ``selected`` topics: what ``plan rebalance`` writes and reports, and the demo shows. With
    ``sizes`` the figures count bytes too; ``by_bytes`` balances bytes instead of replicas."""
    chosen = set(selected)
    plans.refuse_moving(snapshot.reassigning, lambda tp: tp.topic in chosen,
                        "no plan is made for their topics")
    table = PartitionTable.from_topics(snapshot.topics, selected)
    counts = replica_counts(table.replicas)
    scope = scope_of(snapshot.brokers, counts, brokers, remove, rack_aware)
    size_of = None if sizes is None else [sizes[table.tp(i)] for i in range(len(table))]
    if by_bytes:
        assert size_of is not None, "--balance bytes is refused without sizes"
        result = rebalance.rebalance_bytes(table, size_of, scope.targets, scope.rack_of,
                                           leaders=leaders, kept=scope.unregistered)
    elif replication_factor is None:
        result = rebalance.rebalance(table, scope.targets, scope.rack_of, leaders=leaders,
                                     limits=limits or rebalance.Limits(), counts=counts,
                                     kept=scope.unregistered)
    else:
        loads = replica_counts([r for t in snapshot.topics.values() for r in t.values()])
        result = rebalance.change_factor(table, replication_factor, scope.targets, loads,
                                         scope.rack_of, limits or rebalance.Limits(),
                                         kept=scope.unregistered)
    moves, undo = table.moves(result.final)
    after = [result.final.get(i, r) for i, r in enumerate(table.replicas)]
    live, left = scope.live, replica_counts(after)
    limited = limits or rebalance.Limits()
    figures = render.Rebalanced(
        result, len(selected), len(moves),
        metrics.balance(table.replicas, table.topic_of, table.topics, live),
        metrics.balance(after, table.topic_of, table.topics, live),
        replication_factor is not None,
        None if size_of is None else render.ByteFigures(
            sum(moved_bytes(size_of[i], table.replicas[i], r) for i, r in result.final.items()),
            _held(table.replicas, size_of, live), _held(after, size_of, live),
            max(size_of, default=0)),
        {b: (n, left.get(b, 0)) for b, n in sorted(counts.items()) if b not in scope.targets},
        scope.unregistered,
        " and ".join(f"{option} {n}" for option, n in (
            ("--max-moves", limited.max_moves),
            ("--max-leader-changes", limited.max_leader_changes)) if n is not None) or None)
    return ReassignmentPlan(tuple(moves)), ReassignmentPlan(tuple(undo)), figures


def _held(replicas: Sequence[Replicas], sizes: Sequence[int], targets: Collection[int]
          ) -> dict[int, int]:
    """Bytes each target broker holds, 0 for one that holds nothing, in broker order."""
    held = bytes_per_broker(replicas, sizes)
    return {b: held.get(b, 0) for b in sorted(targets)}
