"""Plan documents: parse, schema and semantic validation, diff, batching and stats. Pure.

One module per concern; this package re-exports their public names, so ``plans.validate`` and
``plans.batches`` read as before. Importing the package (or :mod:`.batching`, which Spark
executors run) does not import jsonschema: :mod:`.structure` loads it when a document is first
validated.

- :mod:`.documents`  the kind of a document, plan documents, rollback and diff, plans from a cluster
- :mod:`.report`     ValidationReport: problems, sampled, and the plan when valid
- :mod:`.structure`  a document on its own: the schema's rules, fast, with jsonschema's messages
- :mod:`.semantic`   a plan against a cluster; whole-document and batch-folder validation
- :mod:`.batching`   znode-sized batches
- :mod:`.stats`      per-broker figures before and after a reassignment
"""

from kadmin.plans.batching import (
    JUTE_MAXBUFFER,
    REQUEST_HEADROOM,
    batches,
    check_znode_limit,
    deletion_batches,
    election_batches,
    reassignment_batches,
)
from kadmin.plans.documents import (
    changed_moves,
    current_assignment,
    deletion_plan_for,
    detect_kind,
    election_plan_for,
    kind_problem,
    plan_document,
)
from kadmin.plans.report import ValidationReport, with_problems
from kadmin.plans.semantic import (
    INTERNAL_TOPICS,
    refuse_moving,
    validate,
    validate_against_cluster,
    validate_batches,
)
from kadmin.plans.stats import BrokerLoad, PlanStats, plan_stats
from kadmin.plans.structure import SCHEMAS, VALUE_KEYWORDS, parse_plan, validate_document

__all__ = [
    "INTERNAL_TOPICS", "JUTE_MAXBUFFER", "REQUEST_HEADROOM", "SCHEMAS", "VALUE_KEYWORDS",
    "BrokerLoad", "PlanStats", "ValidationReport", "batches", "changed_moves",
    "check_znode_limit", "current_assignment", "deletion_batches", "deletion_plan_for",
    "detect_kind", "election_batches", "election_plan_for", "kind_problem", "parse_plan",
    "plan_document", "plan_stats", "reassignment_batches", "refuse_moving", "validate",
    "validate_against_cluster", "validate_batches", "validate_document", "with_problems",
]
