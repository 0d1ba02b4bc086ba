"""What kadmin writes, kadmin reads back and accepts: snapshots (file and folder) read back equal,
and a generated plan passes ``plan validate`` against the cluster it was made from - over generated
clusters with odd names and shapes: every name some Kafka release could create (dots, underscores,
up to 255 characters), mixed replication factors, topics without partitions, one broker, racks on
some brokers only, replicas on unregistered brokers, ids up to Kafka's largest, partitions in
flight.

The plan goes through the same functions ``kadmin plan generate`` runs and the same JSON layout
it writes; the snapshot through the same writers ``kadmin cluster snapshot`` uses.
"""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kadmin import files, plans, snapshots
from kadmin.model import (
    MAX_ID,
    MAX_TOPIC_LENGTH,
    Broker,
    ClusterSnapshot,
    InvalidInput,
    PartitionState,
    PlanKind,
    Reassignment,
    Severity,
    is_topic_name,
)
from kadmin.operations.generate import proposed_plan
from kadmin.placement import PlacementOptions, Strategy

ODD_NAMES = ["t" * MAX_TOPIC_LENGTH, "x" * 249, "_", "-", "...", "a..b", "__consumer_offsets",
             "my.topic", "My_Topic-9", "0", "007", ".hidden", "trailing."]
TOPIC_NAMES = (st.text("abcXYZ019._-", min_size=1, max_size=12) | st.sampled_from(ODD_NAMES)
               ).filter(is_topic_name)
BROKER_IDS = st.integers(0, 40) | st.sampled_from([MAX_ID, MAX_ID - 1, 1000])


@st.composite
def clusters(draw: st.DrawFn, *, in_flight: bool = True) -> ClusterSnapshot:
    ids = draw(st.lists(BROKER_IDS, min_size=1, max_size=8, unique=True))
    racks = draw(st.sampled_from(["none", "all", "some"]))
    brokers = {}
    for b in ids:
        rack = None if racks == "none" or (racks == "some" and draw(st.booleans())) \
            else draw(st.sampled_from(["r1", "r2", "rack-3"]))
        brokers[b] = Broker(b, draw(st.none() | st.just(f"h{b}")),
                            draw(st.none() | st.just(9092)), rack)
    holders = ids + draw(st.lists(st.integers(41, 60), max_size=2, unique=True))  # dead
    topics, states, reassigning = {}, {}, {}
    for name in draw(st.lists(TOPIC_NAMES, max_size=6, unique=True)):
        partition_ids = draw(st.lists(st.integers(0, 30) | st.just(MAX_ID), max_size=6,
                                      unique=True))
        rf = draw(st.integers(1, len(holders)))
        topics[name] = {}
        for p in partition_ids:
            count = rf if draw(st.integers(0, 3)) else draw(st.integers(1, len(holders)))
            replicas = tuple(draw(st.permutations(holders))[:count])  # mixed counts at times
            topics[name][p] = replicas
            if draw(st.booleans()):
                states.setdefault(name, {})[p] = PartitionState(
                    draw(st.sampled_from([-1, *replicas])), replicas[:draw(st.integers(0, count))])
            if in_flight and len(replicas) > 1 and not draw(st.integers(0, 4)):
                # Kafka's full set: target first, then the replicas being removed
                cut = draw(st.integers(1, len(replicas) - 1))
                start = draw(st.integers(1, cut))
                reassigning.setdefault(name, {})[p] = Reassignment(replicas[:cut],
                                                                   replicas[start:])
    return ClusterSnapshot(brokers=brokers, topics=topics, states=states,
                           controller=draw(st.none() | st.sampled_from(ids)),
                           controller_epoch=draw(st.none() | st.integers(0, 9)),
                           reassigning=reassigning)


@settings(max_examples=300)
@given(clusters())
def test_every_snapshot_written_reads_back_equal(snapshot: ClusterSnapshot) -> None:
    with TemporaryDirectory() as tmp:
        for fmt in ("json", "dir"):
            path = Path(tmp) / fmt
            snapshots.write_snapshot(snapshot, path, fmt=fmt)  # type: ignore[arg-type]
            assert snapshots.read_snapshot(path) == snapshot


@st.composite
def options(draw: st.DrawFn, snapshot: ClusterSnapshot) -> tuple[PlacementOptions, list[Broker]]:
    ids = sorted(snapshot.brokers)
    targets = draw(st.lists(st.sampled_from(ids), min_size=1, unique=True))
    return PlacementOptions(
        strategy=draw(st.sampled_from(Strategy)),
        replication_factor=draw(st.none() | st.integers(1, len(targets))),
        start_index=draw(st.none() | st.integers(0, 20)),
        start_partition=draw(st.integers(0, 5)),
        rack_aware=draw(st.booleans()),
    ), [snapshot.brokers[b] for b in sorted(targets)]


@settings(max_examples=300)
@given(st.data())
def test_every_plan_generated_passes_plan_validate(data: st.DataObject) -> None:
    snapshot = data.draw(clusters(in_flight=False))
    assume(snapshot.topics)
    chosen, brokers = data.draw(options(snapshot))
    topics = data.draw(st.lists(st.sampled_from(sorted(snapshot.topics)), min_size=1))
    try:
        plan, _ = proposed_plan(snapshot, topics, brokers, chosen)
    except InvalidInput:
        return  # refused before anything is written (RF above the brokers, racks on some only)
    assume(plan.moves)  # with nothing to move, no plan is written
    rollback = plans.current_assignment(plan, snapshot)
    for written, rf_changes in ((plan, chosen.replication_factor is not None), (rollback, False)):
        doc = files.parse_json(files.dumps_json(plans.plan_document(written)), "plan.json")
        report = plans.validate(doc, PlanKind.REASSIGN, snapshot, allow_rf_change=rf_changes)
        errors = [str(p) for p in report.problems if p.severity is Severity.ERROR
                  # the rollback puts replicas back on brokers that are dead today, which is
                  # for the operator to decide, not a file kadmin cannot read
                  and not (written is rollback and "not registered" in p.message)]
        assert not errors, errors
    assert plans.validate(plans.plan_document(plan), None, snapshot,
                          allow_rf_change=chosen.replication_factor is not None).plan == plan
    if chosen.replication_factor is None:
        # no partition changes its replication factor unless asked to
        for move in plan.moves:
            assert len(move.replicas) == len(snapshot.topics[move.topic][move.partition])
