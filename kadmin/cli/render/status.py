"""What ``kadmin status`` shows (and ``demo`` at its start and end)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain

from rich.table import Table

from kadmin.cli.common import err, out, print_sampled
from kadmin.cli.render import above_capacity, cell, over_capacity_doc, print_json
from kadmin.cli.render.throttle import throttle_doc
from kadmin.model import TopicPartition, and_more, listed, sample_of
from kadmin.operations.status import Status
from kadmin.units import human_bytes
from kadmin.zk import paths


def status(st: Status, as_json: bool) -> None:
    """What ``kadmin status`` shows: a table of the cluster, one of its brokers, and a warning
    per znode that cannot be decoded; or all of it as one JSON document."""
    if as_json:
        print_json(_status_doc(st))
        return
    table = Table(show_header=False, title="cluster status")
    table.add_column(style="bold")
    table.add_column()
    for label, value in chain(_overview_rows(st), _health_rows(st), _work_rows(st)):
        table.add_row(label, cell(value))  # rack and topic names come from ZooKeeper
    out.print(table)
    _shares_table(st)
    print_sampled(err, (f"cannot decode {path}: {reason}" for path, reason in st.unreadable),
                  "kadmin: warning: ")
    if st.over_capacity:
        err.print(above_capacity("kadmin: warning: above capacity: ", st.over_capacity),
                  markup=False)


def _status_doc(st: Status) -> dict[str, object]:
    health, shares, in_flight = st.health, st.shares, st.in_flight
    use = {u.broker: u for u in st.use}
    warnings = sample_of(st.unreadable)
    return {
        "controller": st.controller, "controller_epoch": st.epoch,
        "brokers": [{"id": s.broker, "rack": s.rack, "replicas": s.replicas,
                     "preferred_leaders": s.preferred, "leaders": s.leading,
                     "bytes": None if st.held is None else st.held.get(s.broker, 0),
                     "capacity": use[s.broker].capacity if use else None,
                     "replica_share": round(use[s.broker].share, 3) if use else None,
                     "used": use[s.broker].used if use else None}
                    for s in shares.brokers],
        "over_capacity": over_capacity_doc(st.over_capacity),
        "replica_spread": shares.replica_spread, "preferred_leader_spread": shares.preferred_spread,
        "leader_spread": shares.leader_spread, "worst_topic_spread": shares.worst_topic_spread,
        "worst_topic": shares.worst_topic,
        "topics": health.topics, "partitions": health.partitions,
        "under_replicated": [str(tp) for tp in health.under_replicated],
        "offline": [str(tp) for tp in health.offline],
        "not_preferred_leader": [str(tp) for tp in health.not_preferred],
        "reassignment_in_progress": None if in_flight.reassignment is None
        else [str(m.tp) for m in in_flight.reassignment],
        "reassigning": [{"partition": str(tp), "target": list(m.target),
                         "original": list(m.original)} for tp, m in health.reassigning],
        "election_in_progress": None if in_flight.election is None
        else [str(tp) for tp in in_flight.election],
        "deletions_in_progress": list(in_flight.deletions),
        "unreadable": [{"path": p, "reason": r} for p, r in warnings.items],
        "unreadable_count": warnings.total,
        "throttles": [throttle_doc(t) for t in st.throttles],
        "stuck": [{"partition": None if s.tp is None else str(s.tp), "cause": s.cause,
                   "repair": s.repair} for s in st.stuck],
    }


Rows = Iterator[tuple[str, str]]


def _overview_rows(st: Status) -> Rows:
    """The controller, the live brokers, the counts and the spreads."""
    shares = st.shares
    yield ("controller", f"{st.controller} (epoch {st.epoch})" if st.controller is not None
           else "none")
    yield ("live brokers", listed(f"{s.broker}" + (f" ({s.rack})" if s.rack else "")
                                  for s in shares.brokers) or "none")
    yield ("topics / partitions", f"{st.health.topics} / {st.health.partitions}")
    yield ("spread", f"replicas {shares.replica_spread}, preferred leaders "
                     f"{shares.preferred_spread}, leaders {shares.leader_spread}, worst topic "
                     f"{shares.worst_topic_spread}"
                     + (f" ({shares.worst_topic})" if shares.worst_topic else "")
                     # racks may keep brokers uneven: rebalance then says nothing can move
                     + (" (kadmin plan rebalance evens them out as far as racks allow, or says "
                        "why nothing can move)"
                        if max(shares.replica_spread, shares.preferred_spread) > 1 and not st.use
                        else ""))
    if st.use:
        counts = {s.broker: s.replicas for s in shares.brokers}
        off = [u.broker for u in st.use if not u.low <= counts.get(u.broker, 0) <= u.high]
        yield ("capacity shares", f"{len(off)} broker(s) off their replica share: "
               f"{listed(off)} (kadmin plan rebalance --capacity FILE evens them out)" if off
               else "every broker at its replica share")


def _health_rows(st: Status) -> Rows:
    """Partitions under-replicated, offline, or not led by their preferred replica."""
    for label, tps in (("under-replicated", st.health.under_replicated),
                       ("offline", st.health.offline),
                       ("not led by preferred replica", st.health.not_preferred)):
        yield (label, f"{len(tps)}" + (f": {listed(tps)}" if tps else ""))


def _work_rows(st: Status) -> Rows:
    """The admin work in progress and the throttles in force. An admin znode that exists but
    cannot be decoded is not "none": that would invite a second operation while one may be
    running."""
    in_flight, moving = st.in_flight, st.health.reassigning
    broken = {path for path, _ in st.unreadable}
    yield ("reassignment", _in_flight([m.tp for m in in_flight.reassignment])
           if in_flight.reassignment is not None else
           _absent(paths.REASSIGN_PARTITIONS, broken))
    yield ("moving (topic znodes)", f"{len(moving)}" + (
        ": " + listed(f"{tp} {list(m.original)} -> {list(m.target)}" for tp, m in moving)
        if moving else ""))
    yield ("preferred election", _in_flight(in_flight.election)
           if in_flight.election is not None else
           _absent(paths.PREFERRED_REPLICA_ELECTION, broken))
    yield ("topic deletions", listed(in_flight.deletions) if in_flight.deletions else "none")
    yield ("stuck", f"{len(st.stuck)}" + (": " + listed(map(str, st.stuck)) if st.stuck else ""))
    yield ("replication throttles",
           f"{len(st.throttles)} config(s): {listed(f'/config/{t.entity}' for t in st.throttles)}"
           if st.throttles else "none")


def _shares_table(st: Status) -> None:
    """Replicas and leaderships per broker, the busiest first (with capacities and sizes, the
    fullest first), so skew shows at the top; with sizes the bytes on each, with capacities
    each broker's capacity, its share of the replicas (docs/balancing.md) and the part in use."""
    shares, held = st.shares, st.held
    if not shares.brokers:
        return
    use = {u.broker: u for u in st.use}
    used = bool(use) and held is not None
    table = Table(title="per broker")
    for column in ("broker", "rack", "replicas", "preferred leaders", "leaders",
                   *(("bytes",) if held is not None else ()),
                   *(("capacity", "replica share") if use else ()), *(("used",) if used else ())):
        table.add_column(column, justify="right")
    shown = sample_of(sorted(shares.brokers, key=lambda s: (
        -(use[s.broker].used or 0) if used else 0, -s.replicas, s.broker)))
    for s in shown.items:
        u = use.get(s.broker)
        table.add_row(str(s.broker), cell(s.rack or ""), str(s.replicas), str(s.preferred),
                      str(s.leading), *((human_bytes(held.get(s.broker, 0)),)
                                        if held is not None else ()),
                      *((human_bytes(u.capacity), f"{u.share:.1f}") if u else ()),
                      *((f"{u.used or 0:.0%}",) if u and used else ()))
    if shown.rest:
        table.add_row(and_more(shown.rest))
    out.print(table)


def _absent(path: str, unreadable: set[str]) -> str:
    return f"unreadable ({path} exists, see the warning)" if path in unreadable else "none"


def _in_flight(tps: Sequence[TopicPartition]) -> str:
    return f"in progress, {len(tps)} partition(s) remaining: {listed(tps)}"
