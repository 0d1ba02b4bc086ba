"""``plan demote``: preferred leadership off some brokers, by reordering replica lists only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kadmin import files, plans
from kadmin.balance.demote import Demotion, demote
from kadmin.balance.table import PartitionTable
from kadmin.model import (
    ClusterSnapshot,
    InvalidInput,
    PlanKind,
    ReassignmentPlan,
    Sample,
    listed,
    sample_of,
)
from kadmin.operations.generate import Output
from kadmin.operations.planfiles import refuse_below_min_insync, write_plan
from kadmin.operations.selection import TopicSelection, select_topics
from kadmin.operations.source import ClusterSource, Warn, read_cluster


@dataclass(frozen=True)
class DemoteRequest:
    """The brokers to demote, over which topics (none given: every topic)."""

    brokers: Sequence[int]
    topics: TopicSelection = field(default_factory=TopicSelection)
    minimal: bool = False
    """Change only the partitions the demoted brokers lead."""


@dataclass(frozen=True)
class Demoted:
    """What ``plan demote`` reports."""

    result: Demotion
    demoted: tuple[int, ...]
    topics: int
    minimal: bool
    all_demoted: Sample[str]
    """Partitions whose every replica is on a demoted broker: they stay."""
    no_live_replica: Sample[str]
    """Partitions whose other replicas are all unregistered: they stay."""
    dead_led: Sample[str]
    """Partitions led by an unregistered broker that is not demoted: left as they are."""
    down: tuple[int, ...] = ()
    """Demoted brokers that are not registered."""
    written: Path | None = None
    """The plan file (None: on stdout, or nothing to change)."""


def demote_brokers(request: DemoteRequest, source: ClusterSource, output: Output, warn: Warn
                   ) -> Demoted:
    """``plan demote``: the plan of ``request`` over the cluster ``source`` names, written with
    its rollback (the way back) unless nothing changes."""
    snapshot = read_cluster(source, warn, states=False)
    with files.gc_paused():
        selected = select_topics(snapshot, request.topics, default_all=True)
        plan, rollback, figures = demoted_plan(snapshot, selected, request.brokers,
                                               minimal=request.minimal)
        refuse_below_min_insync(plan, snapshot)
        written = (write_plan(plan, PlanKind.REASSIGN, output.path, output.force, rollback,
                              stdout=output.stdout) if plan.moves else None)
    return replace(figures, written=written)


def demoted_plan(snapshot: ClusterSnapshot, selected: Sequence[str], demoted: Sequence[int], *,
                 minimal: bool = False) -> tuple[ReassignmentPlan, ReassignmentPlan, Demoted]:
    """The plan, its rollback and the figures of demoting ``demoted`` over ``selected``
    topics."""
    repeated = sorted({b for b in demoted if demoted.count(b) > 1})
    if repeated:
        raise InvalidInput(f"--brokers: broker id {listed(repeated)} is given more than once")
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

    def named(found: Sequence[int]) -> Sample[str]:
        return sample_of(str(table.tp(i)) for i in found)

    return (ReassignmentPlan(tuple(moves)), ReassignmentPlan(tuple(undo)),
            Demoted(result, tuple(sorted(demoted)), len(selected), minimal,
                    named(result.all_demoted), named(result.no_live_replica),
                    named(result.dead_led),
                    tuple(b for b in sorted(demoted) if b not in snapshot.brokers)))
