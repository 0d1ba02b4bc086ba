"""``kadmin sandbox`` (a rehearsal cluster) and ``kadmin demo`` (the whole main job on it)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from kadmin import synthetic
from kadmin.cli import render
from kadmin.cli.common import ClusterOpt, SizesOpt, count, named_output, number, out, partition_sizes
from kadmin.model import ClusterSnapshot, TopicPartition
from kadmin.operations.demo import DemoRequest, Executed, Started, Validated, run_demo
from kadmin.operations.rebalance import Rebalanced
from kadmin.sandbox import Sandbox, ScaledClock
from kadmin.snapshots import read_snapshot
from kadmin.stop_signals import held, sleep_while, until_stop_signal
from kadmin.units import human_bytes, parse_rate

BrokerCountOpt = Annotated[int, typer.Option(
    "--broker-count", parser=count(1), help="Synthetic cluster: how many brokers.")]
RackCountOpt = Annotated[int, typer.Option(
    "--rack-count", parser=count(0), help="Synthetic cluster: how many racks (0 = none).")]
TopicCountOpt = Annotated[int, typer.Option(
    "--topic-count", parser=count(1), help="Synthetic cluster: how many topics.")]
PartitionsOpt = Annotated[int, typer.Option("--partitions", parser=count(1), help="Partitions per topic.")]
RfOpt = Annotated[int, typer.Option("--replication-factor", parser=count(1), help="Replicas per partition.")]
PortOpt = Annotated[int, typer.Option("--port", parser=count(0, 65535), help="0 picks a free port.")]
LatencyOpt = Annotated[float, typer.Option(
    "--latency", parser=number(0.0),
    help="Simulated seconds for one partition to catch up.")]
LatencyMsOpt = Annotated[float | None, typer.Option(
    "--latency-ms", parser=number(0.0, unit="milliseconds"), hidden=True,
    help="--latency in milliseconds (its old spelling).")]
ParallelismOpt = Annotated[int, typer.Option(
    "--parallelism", parser=count(1), help="Partitions the simulated controller moves at once.")]


def _seconds(latency: float, latency_ms: float | None) -> float:
    """--latency, or its old spelling --latency-ms converted to seconds."""
    return latency if latency_ms is None else latency_ms / 1000


def _cluster(cluster: Path | None, brokers: int, racks: int, topics: int, partitions: int,
             replication_factor: int, sizes_path: Path | None) -> ClusterSnapshot:
    """The snapshot with partition sizes: --sizes, else the snapshot's own, else (for a
    generated cluster) a synthetic long-tailed distribution."""
    if cluster is not None:
        snapshot = read_snapshot(cluster)
    else:
        snapshot = synthetic.synthetic_cluster(
            brokers=brokers, topics=topics, partitions=partitions,
            replication_factor=replication_factor, racks=racks)
        if sizes_path is None:
            return dataclasses.replace(snapshot, sizes=synthetic.synthetic_sizes(snapshot))
    found = partition_sizes(sizes_path, snapshot)
    if found is None:
        return snapshot
    complete = {t: {p: found[TopicPartition(t, p)] for p in partitions}
                for t, partitions in snapshot.topics.items()}  # the median where unknown
    return dataclasses.replace(snapshot, sizes=complete)


def sandbox(
    cluster: ClusterOpt = None,
    brokers: BrokerCountOpt = 6,
    racks: RackCountOpt = 3,
    topics: TopicCountOpt = 20,
    partitions: PartitionsOpt = 12,
    replication_factor: RfOpt = 3,
    port: PortOpt = 2181,
    latency: LatencyOpt = 0.05,
    latency_ms: LatencyMsOpt = None,
    parallelism: ParallelismOpt = 100,
    record: Annotated[Path | None, typer.Option(
        "--record", parser=named_output,
        help="Append every controller action to this JSON-lines file.")] = None,
    sizes_path: SizesOpt = None,
    broker_bandwidth: Annotated[str, typer.Option(
        "--broker-bandwidth", help="Bytes/s each broker sends and receives when not throttled "
                                   "(100MB = 10^8).")] = "100MB",
    time_scale: Annotated[float, typer.Option(
        "--time-scale", parser=number(1e-3, unit=""),
        help="Simulated seconds per real second: 3600 rehearses an hour of copying in a "
             "second.")] = 1.0,
) -> None:
    """Run an embedded ZooKeeper loaded with a cluster and a simulated Kafka controller, to
    rehearse plans. Runs until Ctrl-C or SIGTERM.

    Partitions have sizes (--sizes, the snapshot's, or a synthetic long-tailed distribution for
    a generated cluster) and a move completes once its bytes are copied at the throttle kadmin
    set (read from the config znodes, as brokers do) or --broker-bandwidth.

    Example: kadmin sandbox --cluster my-cluster.json --port 2181 --time-scale 3600
    """
    bandwidth = parse_rate(broker_bandwidth, "--broker-bandwidth")
    snapshot = _cluster(cluster, brokers, racks, topics, partitions, replication_factor,
                        sizes_path)
    with until_stop_signal(), Sandbox(snapshot, port=port, latency=_seconds(latency, latency_ms),
                                      parallelism=parallelism, record_path=record,
                                      bandwidth=bandwidth, clock=ScaledClock(time_scale)) as box:
        total = sum(sum(p.values()) for p in snapshot.sizes.values())
        with held():  # a stop now must not cut a line in two (see held)
            out.print(f"sandbox: {len(snapshot.brokers)} broker(s), {len(snapshot.topics)} "
                      f"topic(s), {snapshot.partition_count} partition(s), {human_bytes(total)}; "
                      f"controller {box.controller_id}; {human_bytes(bandwidth)}/s per broker, "
                      f"time x{time_scale:g}", markup=False)
            out.print(f"connect string: {box.connect_string}", markup=False)
            out.print(f"try: kadmin status -z {box.connect_string}   (Ctrl-C to stop)",
                      markup=False)
        server = box.server
        assert server is not None, "the sandbox command always runs its own ZooKeeper"
        sleep_while(lambda: server.running)
        raise server.failure("the sandbox's ZooKeeper stopped unexpectedly")
    out.print("sandbox stopped", markup=False)


def demo(
    brokers: BrokerCountOpt = 6,
    racks: RackCountOpt = 3,
    topics: TopicCountOpt = 20,
    partitions: PartitionsOpt = 12,
    replication_factor: RfOpt = 3,
    latency: LatencyOpt = 0.15,
    latency_ms: LatencyMsOpt = None,
    parallelism: ParallelismOpt = 25,
    batch_size: Annotated[int, typer.Option(
        "--batch-size", parser=count(1), help="Partitions per znode when the plan runs.")] = 60,
    out_dir: Annotated[Path, typer.Option("--out", "-o", parser=named_output,
                                          help="Folder the plans go to.")] = Path("plans"),
) -> None:
    """The main job end to end on the embedded default, as an operator lives it: a cluster that
    just got a new broker, a retired topic deleted, a rebalance plan with the fewest moves, its
    validation, its execution with progress and a preferred replica election at the end, and the
    status showing the new broker carrying its share and every topic even."""
    request = DemoRequest(brokers, racks, topics, partitions, replication_factor,
                          _seconds(latency, latency_ms), parallelism, batch_size, out_dir)
    failed = False
    for heading, result in run_demo(request, lambda: render.progress(as_json=False)):
        if heading is not None:
            out.rule(heading)
        if isinstance(result, Started):
            out.print(f"embedded ZooKeeper + simulated controller at {result.connect_string}",
                      markup=False)
        elif isinstance(result, Executed):
            out.print(f"{result.what} ok: {result.ok}", markup=False)
            failed = failed or not result.ok
        elif isinstance(result, Rebalanced):
            render.rebalanced(result, as_json=False)
        elif isinstance(result, Validated):
            render.validation_report(result.report, str(result.path), as_json=False)
        else:
            render.status(result, as_json=False)
    if failed:
        raise typer.Exit(1)
