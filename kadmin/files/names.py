"""The names of the files that belong to a plan: the plan file made at a moment, and the rollback
and journal files next to it, sharing its name so they travel with it. The one owner of those
names."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from kadmin.model import InvalidInput

ROLLBACK_SUFFIX = ".rollback.json"
"""``plans/x.json`` -> ``plans/x.rollback.json``: the plan that puts back what ``x`` changes."""
JOURNAL_SUFFIX = ".journal.json"
"""``plans/x.json`` -> ``plans/x.journal.json``: how far a run of ``x`` got."""


def plan_paths(kind: str, out_dir: Path, now: datetime) -> tuple[Path, Path]:
    """The plan file and its rollback file for a plan made at ``now`` (naive means UTC).

    The UTC timestamp in the name sorts plans by age and never depends on the machine's zone.
    """
    moment = now.replace(tzinfo=timezone.utc) if now.tzinfo is None else now.astimezone(timezone.utc)
    plan = out_dir / f"{kind}-{moment:%Y%m%dT%H%M%SZ}.json"
    return plan, rollback_of(plan)


def sibling(path: Path, suffix: str) -> Path:
    """``plans/x.json`` + ``.rollback.json`` -> ``plans/x.rollback.json``: files that belong to a
    plan live next to it and share its name, so they travel with it."""
    if path.name in ("", ".", ".."):
        raise InvalidInput(f"{path} is a folder, expected a file name")
    return path.with_name(path.name.removesuffix(".json") + suffix)


def rollback_of(plan: Path) -> Path:
    """The rollback file of the plan file ``plan``."""
    return sibling(plan, ROLLBACK_SUFFIX)


def journal_of(plan: Path) -> Path:
    """The journal of the plan file (or plan folder manifest) ``plan``."""
    return sibling(plan, JOURNAL_SUFFIX)
