"""``kadmin plan``: generate, validate and inspect plan files, offline or against a live cluster."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated

import typer

from kadmin import files, placement, plans
from kadmin.cli import render
from kadmin.cli.common import (
    ClusterOpt,
    ConnectTimeoutOpt,
    JsonOpt,
    SessionTimeoutOpt,
    SizesOpt,
    SkipUnreadableOpt,
    ZookeeperOpt,
    info,
    load_cluster,
    out,
    output_path,
    partition_sizes,
    split_ints,
    split_names,
    stdout_is_data,
    write_stdout,
)
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    InvalidInput,
    PartitionMove,
    Plan,
    PlanKind,
    ReassignmentPlan,
    listed,
)
from kadmin.operations.validate import ValidateOptions, validate_plans
from kadmin.plan_folders import batch_files, plan_folder
from kadmin.reports import ReportFormat

app = typer.Typer(help="Generate, validate and inspect plan files.", no_args_is_help=True)

TopicsOpt = Annotated[str | None, typer.Option("--topics", help="Comma-separated topic names.")]
TopicsFileOpt = Annotated[Path | None, typer.Option(
    "--topics-file", help='Kafka\'s topics-to-move file {"version":1,"topics":[{"topic":"foo"}]}.')]
AllTopicsOpt = Annotated[bool, typer.Option("--all-topics", help="Every topic of the cluster.")]
OutOpt = Annotated[Path | None, typer.Option(
    "--out", "-o", parser=output_path,
    help="Plan file to write ('-' for stdout); default plans/<kind>-<UTC time>.json.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite an existing plan file.")]


def select_topics(snapshot: ClusterSnapshot, topics: str | None, topics_file: Path | None,
                  all_topics: bool) -> list[str]:
    """Exactly one of --topics, --topics-file, --all-topics; unknown topics are input errors."""
    if sum([topics is not None, topics_file is not None, all_topics]) != 1:
        raise InvalidInput("choose exactly one of --topics, --topics-file and --all-topics")
    if all_topics:
        return sorted(snapshot.topics)
    if topics_file is not None:
        names = topics_to_move(files.read_json(topics_file), str(topics_file))
    else:
        names = split_names(topics, "--topics")
    unknown = [n for n in names if n not in snapshot.topics]
    if unknown:
        raise InvalidInput(f"unknown topic(s) not in the cluster: {listed(unknown)}")
    return sorted(set(names))


def topics_to_move(doc: object, source: str) -> list[str]:
    entries = doc.get("topics") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InvalidInput(f'{source}: $.topics must be a non-empty list of {{"topic": name}}')
    names = []
    for i, entry in enumerate(entries):
        name = entry.get("topic") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            raise InvalidInput(f"{source}: $.topics[{i}].topic must be a topic name")
        names.append(name)
    return names


def select_brokers(snapshot: ClusterSnapshot, brokers: str | None) -> list[Broker]:
    if brokers is None:
        return [snapshot.brokers[b] for b in sorted(snapshot.brokers)]
    ids = split_ints(brokers, "--brokers")
    unknown = [b for b in ids if b not in snapshot.brokers]
    if unknown:
        raise InvalidInput(f"--brokers: unknown broker id(s) {unknown}; the cluster has "
                           f"{sorted(snapshot.brokers)[:20]}")
    if len(set(ids)) != len(ids):
        raise InvalidInput(f"--brokers: duplicate broker id in {brokers!r}")
    return [snapshot.brokers[b] for b in sorted(ids)]


def proposed_plan(snapshot: ClusterSnapshot, topics: list[str], brokers: list[Broker],
                  options: placement.PlacementOptions) -> tuple[ReassignmentPlan, int]:
    """The placement's target for every selected partition, minus those already in place."""
    target = placement.place(snapshot.topics, topics, brokers, options)
    moves, unchanged = [], 0
    for topic in sorted(target):
        current = snapshot.topics[topic]
        for partition, replicas in sorted(target[topic].items()):
            if current.get(partition) == replicas:
                unchanged += 1
            else:
                moves.append(PartitionMove(topic, partition, replicas))
    return ReassignmentPlan(tuple(moves)), unchanged


def write_plan(plan: Plan, kind: PlanKind, out_path: Path | None, force: bool,
               rollback: ReassignmentPlan | None = None) -> Path | None:
    """Write the plan (and its rollback) atomically; ``-`` prints the plan instead."""
    doc = plans.plan_document(plan)
    if stdout_is_data(out_path):
        write_stdout([json.dumps(doc, separators=(",", ":")), "\n"])
        return None
    if out_path is None:
        out_path, rollback_path = files.plan_paths(kind.value, Path("plans"),
                                                   datetime.now(timezone.utc))
    else:
        rollback_path = files.sibling(out_path, ".rollback.json")
    writes = [(out_path, files.dumps_json(doc))]
    if rollback is not None:  # the two files, or neither: a plan must not lose its rollback
        writes.append((rollback_path, files.dumps_json(plans.plan_document(rollback))))
    files.atomic_write_files(writes, force=force)
    return out_path


@app.command()
def generate(
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsOpt = False,
    brokers: Annotated[str | None, typer.Option(
        "--brokers", help="Target broker ids, comma-separated (default: every broker).")] = None,
    strategy: Annotated[placement.Strategy, typer.Option(
        "--strategy", help="roundrobin: the seed's rule; kafka: AdminUtils (rack-aware).")
    ] = placement.Strategy.ROUNDROBIN,
    replication_factor: Annotated[int | None, typer.Option(
        "--replication-factor", help="Default: every partition keeps its own replica count.")] = None,
    start_index: Annotated[int | None, typer.Option(
        "--start-index", min=0, help="roundrobin: first counter value; kafka: fixedStartIndex.")
    ] = None,
    start_partition: Annotated[int, typer.Option(
        "--start-partition", min=0, help="kafka: startPartitionId.")] = 0,
    disable_rack_aware: Annotated[bool, typer.Option("--disable-rack-aware")] = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Generate a balanced reassignment plan and its rollback file.

    Example: kadmin plan generate --cluster cluster.json --all-topics --strategy kafka
    """
    options = placement.PlacementOptions(
        strategy=strategy, replication_factor=replication_factor, start_index=start_index,
        start_partition=start_partition, rack_aware=not disable_rack_aware)
    with files.gc_paused():  # millions of acyclic tuples and dicts: the collector only slows it
        snapshot = load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                                states=False, skip_unreadable=skip_unreadable)
        selected = select_topics(snapshot, topics, topics_file, all_topics)
        chosen = set(selected)
        plans.refuse_moving(snapshot.reassigning, lambda tp: tp.topic in chosen,
                            "no plan is made for their topics")
        plan, unchanged = proposed_plan(snapshot, selected, select_brokers(snapshot, brokers),
                                        options)
        rollback = plans.current_assignment(plan, snapshot)
        # an empty plan is refused by every command that reads one: none is written
        written = write_plan(plan, PlanKind.REASSIGN, out_path, force, rollback) \
            if plan.moves else None
    # only --replication-factor changes one; the plan must then be run with --allow-rf-change
    rf_changes = 0 if replication_factor is None else sum(
        len(m.replicas) != len(rollback_move.replicas)
        for m, rollback_move in zip(plan.moves, rollback.moves, strict=True))
    to_stdout = stdout_is_data(out_path)
    rollback_path = str(files.sibling(written, ".rollback.json")) if written else None
    if json_output and not to_stdout:
        render.print_json({"plan": str(written) if written else None, "topics": len(selected),
                           "partitions": len(plan.moves), "unchanged": unchanged,
                           "rf_changes": rf_changes, "rollback": rollback_path})
    elif not plan.moves:
        info(f"nothing to move: all {unchanged} partition(s) of {len(selected)} topic(s) are "
             "already in place; no plan written", to_stderr=to_stdout)
    else:
        info(f"{len(plan.moves)} partition(s) to move, {unchanged} already in place, "
             f"{len(selected)} topic(s)" + (f"; plan {written}, rollback {rollback_path}"
                                          if written else "")
             + (f"; {rf_changes} partition(s) change their replication factor (plan validate "
                "and reassign need --allow-rf-change)" if rf_changes else ""),
             to_stderr=to_stdout)


@app.command()
def validate(
    plan_files: Annotated[list[Path], typer.Argument(
        help="Plan files to check; folders of plans (their *.json, journals aside) and `kadmin "
             "spark` output folders (or their manifest.json) too.", show_default=False)],
    kind: Annotated[PlanKind | None, typer.Option(
        "--kind", help="The kind every plan must be (default: detected for each).")] = None,
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    allow_rf_change: Annotated[bool, typer.Option(
        "--allow-rf-change", help="Plans may change a partition's replication factor.")] = False,
    allow_internal: Annotated[bool, typer.Option(
        "--allow-internal", help="Deletion plans may delete internal topics.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too.")] = False,
    report_format: Annotated[ReportFormat, typer.Option(
        "--format", help="text for people; json (one object a plan, one a line); github "
                         "(GitHub Actions annotations); junit (one JUnit XML document).")
    ] = ReportFormat.TEXT,
    json_output: Annotated[bool, typer.Option("--json", help="Short for --format json.")] = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Check plans against their schema and, with --cluster or -z, the cluster (the CI dry
    run): every plan in one run, against one read of the cluster, a verdict each.

    Exit 0 when every plan is valid, 2 when any is not.
    Example: kadmin plan validate plans/ --cluster cluster.json --format github
    """
    if json_output and report_format not in (ReportFormat.TEXT, ReportFormat.JSON):
        raise InvalidInput(f"--json is short for --format json; it cannot go with --format "
                           f"{report_format.value}")
    chosen = ReportFormat.JSON if json_output else report_format
    options = ValidateOptions(kind, allow_rf_change, allow_internal)
    snapshot = (load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                             skip_unreadable=skip_unreadable)
                if cluster is not None or zookeeper else None)
    failed = render.verdicts(validate_plans(plan_files, snapshot, options), chosen,
                             strict=strict)
    if failed:
        raise typer.Exit(2)


@app.command()
def stats(
    plan_file: Annotated[Path, typer.Argument(
        help="Reassignment plan file, or a `kadmin spark` output folder or its manifest.json.")],
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    sizes_path: SizesOpt = None,
    json_output: JsonOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Per-broker replica and leader counts before and after a reassignment plan; with
    partition sizes also bytes moved and bytes per broker.

    Example: kadmin plan stats plans/x.json --cluster cluster.json --sizes log-dirs.txt
    """
    snapshot = load_cluster(cluster, zookeeper, connect_timeout, session_timeout, states=False,
                            skip_unreadable=skip_unreadable)
    # a partition or broker the cluster lacks would be counted as if it existed; a replication
    # factor change is only shown
    plan, _ = load_reassignment(plan_file, snapshot, allow_rf_change=True)
    render.plan_stats(plans.plan_stats(plan, snapshot, partition_sizes(sizes_path, snapshot)),
                      json_output)


@app.command()
def election(
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    topics: TopicsOpt = None,
    all_topics: AllTopicsOpt = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Write a preferred replica election plan for the given topics (or every partition)."""
    snapshot = load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                            skip_unreadable=skip_unreadable)
    selected = select_topics(snapshot, topics, None, all_topics)
    plan = plans.election_plan_for(snapshot, selected)
    if not plan.partitions:
        info("nothing to elect: the selected topics have no partitions; no plan written",
             to_stderr=stdout_is_data(out_path))
        return
    _checked(plan, PlanKind.ELECTION, snapshot)
    written = write_plan(plan, PlanKind.ELECTION, out_path, force)
    if written:
        out.print(f"{len(plan.partitions)} partition(s); plan {written}", markup=False)


@app.command()
def deletion(
    topics: Annotated[str, typer.Option("--topics", help="Comma-separated topics to delete.")],
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    allow_internal: Annotated[bool, typer.Option("--allow-internal")] = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Write a topic deletion plan ({"version":1,"topics":[...]}), validated first."""
    names = split_names(topics, "--topics")
    plan = plans.deletion_plan_for(names)
    snapshot = (load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                             skip_unreadable=skip_unreadable)
                if cluster is not None or zookeeper else None)
    _checked(plan, PlanKind.DELETION, snapshot, allow_internal=allow_internal)
    written = write_plan(plan, PlanKind.DELETION, out_path, force)
    if written:
        out.print(f"{len(plan.topics)} topic(s); plan {written}", markup=False)


def _checked(plan: Plan, kind: PlanKind, snapshot: ClusterSnapshot | None, **options: bool) -> None:
    """Validate a plan kadmin itself built, before it is written: the file must pass
    ``plan validate`` like any other."""
    report = plans.validate(plans.plan_document(plan), kind, snapshot, **options)
    if not report.ok():
        raise report.invalid("the plan is invalid; nothing written")


def load_plan(path: Path, kind: PlanKind, snapshot: ClusterSnapshot | None = None,
              **options: bool) -> Plan:
    """Read and validate a plan file of the kind the command needs (schema and structure, and
    with ``snapshot`` the cluster rules too); any error is an input error naming the file."""
    doc = files.read_json(path)
    wrong_kind = plans.kind_problem(doc, kind)
    if wrong_kind is not None:
        raise InvalidInput(f"{path}: invalid plan: {wrong_kind}")
    with files.gc_paused():
        report = plans.validate(doc, kind, snapshot, **options)
    if report.plan is None:
        raise report.invalid(f"{path}: invalid plan")
    return report.plan


def load_reassignment(path: Path, snapshot: ClusterSnapshot | None = None, **options: bool
                      ) -> tuple[ReassignmentPlan, Path]:
    """A plan file, or the output folder / manifest of ``kadmin spark plan`` or ``kadmin spark
    rebalance`` (its batch files are read in order and make one plan), checked as
    :func:`load_plan` checks. Returns the plan and the file its rollback and journal sit next
    to."""
    manifest = plan_folder(path)
    if manifest is None:
        plan = load_plan(path, PlanKind.REASSIGN, snapshot, **options)
        assert isinstance(plan, ReassignmentPlan)
        return plan, path
    moves: list[PartitionMove] = []
    for batch in batch_files(manifest):
        plan = load_plan(batch, PlanKind.REASSIGN, snapshot, **options)
        assert isinstance(plan, ReassignmentPlan)
        moves.extend(plan.moves)
    merged = ReassignmentPlan(tuple(sorted(moves)))
    if len({m.tp for m in merged.moves}) != len(merged.moves):
        raise InvalidInput(f"{manifest}: a partition appears in more than one batch file")
    return merged, manifest
