"""Running plans against a live cluster.

- :mod:`.common`: settings, outcome, the plan's files, checks before anything is written;
- :mod:`.transfers`: a plan's moves as the schedule's model sees them (pure);
- :mod:`.journal`: the typed journal next to the plan (the schedule and how far it got);
- :mod:`.runner`: one batch - health gate, throttle, submit, wait, clear;
- :mod:`.progress`: the accountant - partitions, bytes, rate, ETA by the model;
- :mod:`.reassign`: a reassignment run (and its dry run), :mod:`.verify`, :mod:`.elect`,
  :mod:`.delete`.
"""

from kadmin.executor.common import ExecutionSettings, Outcome, PlanFiles, run_limit
from kadmin.executor.delete import check_deletion, execute_deletion
from kadmin.executor.elect import (
    ElectionDryRun,
    check_election,
    dry_run_election,
    execute_election,
)
from kadmin.executor.journal import plan_fingerprint, submitted
from kadmin.executor.reassign import (
    DryRun,
    Scheduled,
    dry_run_reassignment,
    execute_reassignment,
    weigh_move,
)
from kadmin.executor.verify import Verification, verify_reassignment

__all__ = ["DryRun", "ElectionDryRun", "ExecutionSettings", "Outcome", "PlanFiles", "Scheduled",
           "Verification", "check_deletion", "check_election", "dry_run_election",
           "dry_run_reassignment", "execute_deletion", "execute_election", "execute_reassignment",
           "plan_fingerprint", "run_limit", "submitted", "verify_reassignment", "weigh_move"]
