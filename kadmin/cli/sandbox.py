"""``kadmin sandbox``: a rehearsal cluster, run until Ctrl-C or SIGTERM."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin.cli.cancel import version_option
from kadmin.cli.common import (
    BrokerCountOpt,
    ClusterOpt,
    LatencyMsOpt,
    LatencyOpt,
    ParallelismOpt,
    PartitionsOpt,
    PortOpt,
    RackCountOpt,
    RfOpt,
    ServingJsonOpt,
    SizesOpt,
    TopicCountOpt,
    err,
    latency_seconds,
    named_output,
    number,
    out,
    print_serving,
    warn,
)
from kadmin.kafka_version import DEFAULT_SANDBOX
from kadmin.operations import sandbox as sandboxes
from kadmin.operations.sandbox import SandboxRequest, SyntheticCluster, stale_moves
from kadmin.operations.selection import optional_ints
from kadmin.stop_signals import held, sleep_while, until_stop_signal
from kadmin.units import human_bytes


def sandbox(
    cluster: ClusterOpt = None,
    brokers: BrokerCountOpt = SyntheticCluster.brokers,
    racks: RackCountOpt = SyntheticCluster.racks,
    topics: TopicCountOpt = SyntheticCluster.topics,
    partitions: PartitionsOpt = SyntheticCluster.partitions,
    replication_factor: RfOpt = SyntheticCluster.replication_factor,
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
    json_output: ServingJsonOpt = False,
    kafka_version: Annotated[str, typer.Option(
        "--kafka-version",
        help="The Kafka release whose controller the sandbox plays, e.g. 2.3 or 2.8: before 2.4 "
             "a reassignment in flight lives in the controller's memory (the topic znode holds "
             "the union of old and new replicas), from 2.4 the topic znode records it "
             "(adding_replicas/removing_replicas) and a controller move resumes it.")
    ] = str(DEFAULT_SANDBOX),
    stuck_brokers: Annotated[str | None, typer.Option(
        "--stuck-brokers",
        help="Brokers, comma-separated, whose new replicas never catch up (never join the "
             "ISR): a reassignment onto them never finishes.")] = None,
    stale_reassignment: Annotated[bool, typer.Option(
        "--stale-reassignment",
        help="Start with a stale /admin/reassign_partitions: every partition of the first "
             "topic, already at its target, in a znode the controller no longer acts on.")
    ] = False,
) -> None:
    """Run an embedded ZooKeeper loaded with a cluster and a simulated Kafka controller, to
    rehearse plans. Runs until Ctrl-C or SIGTERM.

    Partitions have sizes (--sizes, the snapshot's, or a synthetic long-tailed distribution for
    a generated cluster) and a move completes once its bytes are copied at the throttle kadmin
    set (read from the config znodes, as brokers do) or --broker-bandwidth.

    Example: kadmin sandbox --cluster my-cluster.json --port 2181 --time-scale 3600
    """
    request = SandboxRequest(cluster, SyntheticCluster(brokers, racks, topics, partitions,
                                                       replication_factor), port,
                             latency_seconds(latency, latency_ms), parallelism, record,
                             sizes_path, broker_bandwidth, time_scale, version_option(kafka_version)
                             or DEFAULT_SANDBOX,
                             tuple(optional_ints(stuck_brokers, "--stuck-brokers") or ()),
                             stale_reassignment)
    prepared = sandboxes.prepare(request, warn)
    snapshot, bandwidth = prepared.snapshot, prepared.bandwidth
    with until_stop_signal(), sandboxes.running(request, prepared) as box:
        server = box.server
        assert server is not None, "the sandbox command always runs its own ZooKeeper"
        with held():  # a stop now must not cut a line in two (see held)
            if json_output:
                print_serving(box.connect_string, server.pid)
            else:
                out.print(f"sandbox: {len(snapshot.brokers)} broker(s), {len(snapshot.topics)} "
                          f"topic(s), {snapshot.partition_count} partition(s), "
                          f"{human_bytes(prepared.total_bytes)}; controller {box.controller_id} "
                          f"(Kafka {request.kafka_version}); "
                          f"{human_bytes(bandwidth)}/s per broker, time x{time_scale:g}",
                          markup=False)
                if stale_reassignment:
                    out.print(f"stale /admin/reassign_partitions: {len(stale_moves(snapshot))} "
                              f"partition(s) of {min(snapshot.topics)}", markup=False)
                out.print(f"connect string: {box.connect_string}", markup=False)
                out.print(f"try: kadmin status -z {box.connect_string}   (Ctrl-C to stop)",
                          markup=False)
        controller = box.controller
        sleep_while(lambda: server.running and controller.record_failure is None)
        if controller.record_failure is not None:
            with held():
                err.print(f"kadmin: warning: {controller.record_failure}", markup=False)
            sleep_while(lambda: server.running)
        raise server.failure("the sandbox's ZooKeeper stopped unexpectedly")
    if not json_output:
        out.print("sandbox stopped", markup=False)
