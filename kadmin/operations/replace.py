"""``plan replace``: every replica on some brokers moved to their replacements, one for one,
written with its rollback after the plan validates against the cluster."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kadmin import files, plans
from kadmin.balance.replace import Replacement, pairs_of, replace_brokers
from kadmin.model import InvalidInput, PlanKind, sample_of
from kadmin.operations.generate import Output
from kadmin.operations.planfiles import checked, write_plan
from kadmin.operations.source import ClusterSource, Warn, read_cluster


@dataclass(frozen=True)
class ReplaceRequest:
    brokers: tuple[int, ...]
    replacements: tuple[int, ...]
    allow_unregistered: bool = False


@dataclass(frozen=True)
class Replaced:
    result: Replacement
    pairs: dict[int, int]
    unregistered: tuple[int, ...]
    """Replacements not registered (allowed with --allow-unregistered)."""
    written: Path | None
    """The plan file (None: on stdout, or nothing to move)."""


def replace(request: ReplaceRequest, source: ClusterSource, output: Output, warn: Warn
            ) -> Replaced:
    """``plan replace``: the plan of ``request`` over the cluster ``source`` names, written with
    its rollback unless nothing moves."""
    snapshot = read_cluster(source, warn, states=False)
    pairs = pairs_of(request.brokers, request.replacements)
    unregistered = tuple(b for b in pairs.values() if b not in snapshot.brokers)
    if unregistered and not request.allow_unregistered:
        raise InvalidInput(f"--with: broker(s) {list(unregistered)} not registered in "
                           "/brokers/ids (--allow-unregistered plans onto them anyway)")
    with files.gc_paused():
        result = replace_brokers(snapshot, pairs)
        if result.clashes:
            shown = sample_of(result.clashes)
            raise InvalidInput(f"{shown.total} partition(s) already hold a replacement broker "
                               "(it would hold two replicas); nothing written",
                               details=shown.items, more=shown.rest)
        plan = result.plan
        tps = {m.tp for m in plan.moves}
        plans.refuse_moving(snapshot.reassigning, lambda tp: tp in tps, "no plan was written")
        # the plan must pass `plan validate` against the cluster (without the brokers not yet
        # registered: then the file alone)
        checked(plan, PlanKind.REASSIGN, None if unregistered else snapshot)
        written = None
        if plan.moves:
            written = write_plan(plan, PlanKind.REASSIGN, output.path, output.force,
                                 plans.current_assignment(plan, snapshot), stdout=output.stdout)
    return Replaced(result, pairs, unregistered, written)
