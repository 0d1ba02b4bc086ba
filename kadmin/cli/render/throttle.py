"""What ``kadmin throttle`` shows: the replication throttles in force (``status`` lists them
too)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from kadmin.cli.common import err, out, print_sampled
from kadmin.cli.render import cell, print_json
from kadmin.model import and_more, listed, sample_of
from kadmin.zk.config import EntityThrottle


def throttles(in_force: Sequence[EntityThrottle], as_json: bool, title: str = "throttles",
              unreadable: Sequence[tuple[str, str]] = ()) -> None:
    """Replication throttles per config entity, kadmin's own marked; the table is sampled like
    every list, and so is each throttled-replicas value (one entry per partition replica). The
    config znodes and kadmin records that cannot be decoded are warnings (sampled too)."""
    warnings = sample_of(unreadable)
    print_sampled(err, (f"cannot decode {path}: {reason}" for path, reason in unreadable),
                  "kadmin: warning: ")
    if as_json:
        print_json({"throttles": [throttle_doc(t) for t in in_force],
                    "unreadable": [{"path": p, "reason": r} for p, r in warnings.items],
                    "unreadable_count": warnings.total})
        return
    if not in_force:
        out.print(f"{title}: none", markup=False)
        return
    shown = sample_of(in_force)
    table = Table(title=f"{title}: {shown.total} config(s)")
    for column in ("config", "throttle", "set by kadmin"):
        table.add_column(column)
    for entity in shown.items:
        table.add_row(cell(f"/config/{entity.entity}"),
                      Text("\n").join(cell(f"{k}={listed(v.split(','))}")
                                       for k, v in entity.values.items()) or "-",
                      _set_by_kadmin(entity))
    if shown.rest:
        table.add_row(and_more(shown.rest))
    out.print(table)


def _set_by_kadmin(entity: EntityThrottle) -> str:
    if entity.record_error:
        return "unreadable record"
    return "yes" if entity.own else "no"


def throttle_doc(entity: EntityThrottle) -> dict[str, object]:
    return {"config": f"/config/{entity.entity}", "values": entity.values,
            "kadmin": entity.own.to_json() if entity.own else None,
            "kadmin_record_error": entity.record_error}
