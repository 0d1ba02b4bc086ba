"""``kadmin sandbox`` (a rehearsal cluster) and ``kadmin demo`` (the whole main job on it)."""

from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

from kadmin import executor, health, plans, synthetic
from kadmin.cli import render
from kadmin.cli.common import ClusterOpt, finite, named_output, out
from kadmin.cli.plan import proposed_plan, write_plan
from kadmin.model import ClusterSnapshot, DeletionPlan, PlanKind
from kadmin.placement import PlacementOptions, Strategy
from kadmin.sandbox import Sandbox
from kadmin.snapshots import read_snapshot
from kadmin.zk import reader, session

BrokersOpt = Annotated[int, typer.Option("--brokers", min=1, help="Synthetic cluster: brokers.")]
RacksOpt = Annotated[int, typer.Option("--racks", min=0, help="Synthetic cluster: racks (0 = none).")]
TopicsOpt = Annotated[int, typer.Option("--topics", min=1, help="Synthetic cluster: topics.")]
PartitionsOpt = Annotated[int, typer.Option("--partitions", min=1, help="Partitions per topic.")]
RfOpt = Annotated[int, typer.Option("--replication-factor", min=1, help="Replicas per partition.")]
PortOpt = Annotated[int, typer.Option("--port", min=0, max=65535, help="0 picks a free port.")]
LatencyOpt = Annotated[float, typer.Option(
    "--latency-ms", min=0.0, callback=finite, help="Simulated time for one partition to catch up.")]
ParallelismOpt = Annotated[int, typer.Option(
    "--parallelism", min=1, help="Partitions the simulated controller moves at once.")]


def _cluster(cluster: Path | None, brokers: int, racks: int, topics: int, partitions: int,
             replication_factor: int) -> ClusterSnapshot:
    if cluster is not None:
        return read_snapshot(cluster)
    return synthetic.synthetic_cluster(brokers=brokers, topics=topics, partitions=partitions,
                                       replication_factor=replication_factor, racks=racks)


def sandbox(
    cluster: ClusterOpt = None,
    brokers: BrokersOpt = 6,
    racks: RacksOpt = 3,
    topics: TopicsOpt = 20,
    partitions: PartitionsOpt = 12,
    replication_factor: RfOpt = 3,
    port: PortOpt = 2181,
    latency_ms: LatencyOpt = 50.0,
    parallelism: ParallelismOpt = 100,
    record: Annotated[Path | None, typer.Option(
        "--record", parser=named_output,
        help="Append every controller action to this JSON-lines file.")] = None,
) -> None:
    """Run an embedded ZooKeeper loaded with a cluster and a simulated Kafka controller, to
    rehearse plans. Runs until Ctrl-C or SIGTERM.

    Example: kadmin sandbox --cluster my-cluster.json --port 2181
    """
    snapshot = _cluster(cluster, brokers, racks, topics, partitions, replication_factor)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with Sandbox(snapshot, port=port, latency=latency_ms / 1000, parallelism=parallelism,
                 record_path=record) as box:
        out.print(f"sandbox: {len(snapshot.brokers)} broker(s), {len(snapshot.topics)} topic(s), "
                  f"{snapshot.partition_count} partition(s); controller {box.controller_id}",
                  markup=False)
        out.print(f"connect string: {box.connect_string}", markup=False)
        out.print(f"try: kadmin status -z {box.connect_string}   (Ctrl-C to stop)", markup=False)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    out.print("sandbox stopped", markup=False)


def demo(
    brokers: BrokersOpt = 6,
    racks: RacksOpt = 3,
    topics: TopicsOpt = 20,
    partitions: PartitionsOpt = 12,
    replication_factor: RfOpt = 3,
    latency_ms: LatencyOpt = 150.0,
    parallelism: ParallelismOpt = 25,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1)] = 60,
    strategy: Annotated[Strategy, typer.Option("--strategy")] = Strategy.KAFKA,
    out_dir: Annotated[Path, typer.Option("--out-dir", parser=named_output,
                                          help="Where the plans go.")] = Path("plans"),
) -> None:
    """The main job end to end on the embedded default: start a sandbox cluster, generate a
    balanced plan, validate it, execute it with progress, run a preferred replica election,
    delete a topic, and print the status."""
    snapshot = synthetic.synthetic_cluster(brokers=brokers, topics=topics, partitions=partitions,
                                           replication_factor=replication_factor, racks=racks)
    with Sandbox(snapshot, port=0, latency=latency_ms / 1000, parallelism=parallelism) as box:
        zk = box.connect_string
        out.rule("1. sandbox cluster")
        out.print(f"embedded ZooKeeper + simulated controller at {zk}", markup=False)
        with session.session(session.ZkSettings(connect=zk)) as client:
            live = reader.read_cluster(client).snapshot
            _show_health("before", live)

            out.rule("2. plan generate")
            options = PlacementOptions(strategy=strategy)
            plan, unchanged = proposed_plan(live, sorted(live.topics),
                                            [live.brokers[b] for b in sorted(live.brokers)],
                                            options)
            path = write_plan(plan, PlanKind.REASSIGN, out_dir / "demo-reassign.json", True,
                              plans.current_assignment(plan, live))
            assert path is not None
            out.print(f"{len(plan.moves)} partition(s) to move, {unchanged} in place -> {path}",
                      markup=False)
            render.plan_stats(plans.plan_stats(plan, live), as_json=False)

            out.rule("3. plan validate (against the live cluster)")
            report = plans.validate(plans.plan_document(plan), None, live)
            render.validation_report(report, str(path), as_json=False)

            out.rule("4. reassign")
            files = executor.PlanFiles(path)
            files.journal.unlink(missing_ok=True)
            settings = executor.ExecutionSettings(batch_size=batch_size, timeout=600)
            with render.progress(as_json=False) as emit:
                outcome = executor.execute_reassignment(client, plan, files, settings, emit)
            out.print(f"reassignment ok: {outcome.ok}", markup=False)

            out.rule("5. elect (preferred replicas)")
            after = reader.read_cluster(client).snapshot
            with render.progress(as_json=False) as emit:
                elected = executor.execute_election(
                    client, plans.election_plan_for(after, None), settings, emit)
            out.print(f"election ok: {elected.ok}", markup=False)

            out.rule("6. topics delete")
            victim = sorted(after.topics)[-1]
            with render.progress(as_json=False) as emit:
                deleted = executor.execute_deletion(client, DeletionPlan((victim,)), settings,
                                                    emit)
            out.print(f"deleted {victim}: {deleted.ok}", markup=False)

            out.rule("7. status")
            final = reader.read_cluster(client)
            render.status(health.cluster_health(final.snapshot), final.in_flight,
                          final.snapshot.controller, final.snapshot.controller_epoch,
                          [(b, final.snapshot.brokers[b].rack)
                           for b in sorted(final.snapshot.brokers)],
                          final.unreadable, as_json=False)
    if not (outcome.ok and elected.ok and deleted.ok):
        raise typer.Exit(1)


def _show_health(label: str, snapshot: ClusterSnapshot) -> None:
    h = health.cluster_health(snapshot)
    out.print(f"{label}: {h.brokers} brokers, {h.topics} topics, {h.partitions} partitions, "
              f"{len(h.not_preferred)} not led by their preferred replica", markup=False)
