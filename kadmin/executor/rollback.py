"""``<plan>.rollback.json``: the replicas before the run of every partition a run changes.

Written once (by ``plan generate`` or a plan's first run) and kept, so that a rerun after a
crash never replaces the pre-change assignment with a half-applied one. Kept, but never taken on
trust: a rollback file that is unreadable or names partitions outside the plan (another plan's)
is refused, and a partition the run changes that it lacks (one an operator added to a generated
plan) is added with its replicas as the run finds them, before anything is submitted.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from kadmin import files, plans
from kadmin.model import (
    ClusterSnapshot,
    InvalidInput,
    PlanKind,
    ReassignmentPlan,
    TopicPartition,
)

WAY_OUT = "move it away and run again (kadmin then records the replicas the cluster has now)"


def covering(path: Path, plan: ReassignmentPlan, snapshot: ClusterSnapshot,
             changed: Collection[TopicPartition]) -> ReassignmentPlan | None:
    """The rollback to write at ``path`` so that it covers every partition of ``changed`` (those
    the run changes), or None when the file there already does. InvalidInput for a file that is
    not a rollback of ``plan``."""
    if not path.exists() and not path.is_symlink():
        return plans.current_assignment(plan, snapshot)
    try:
        kept = plans.parse_plan(files.read_json(path), PlanKind.REASSIGN)
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: not a readable rollback of this plan ({exc}); {WAY_OUT}"
                           ) from None
    assert isinstance(kept, ReassignmentPlan)
    in_plan = {m.tp for m in plan.moves}
    foreign = [str(m.tp) for m in kept.moves if m.tp not in in_plan]
    if foreign:
        raise InvalidInput(
            f"{path}: names {len(foreign):,} partition(s) that are not in the plan (the first "
            f"{foreign[0]}): the rollback of another plan; {WAY_OUT}")
    recorded = {m.tp for m in kept.moves}
    missing = ReassignmentPlan(tuple(m for m in plan.moves
                                     if m.tp in changed and m.tp not in recorded))
    if not missing.moves:
        return None
    added = plans.current_assignment(missing, snapshot)
    return ReassignmentPlan(tuple(sorted((*kept.moves, *added.moves))))

