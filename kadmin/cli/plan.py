"""``kadmin plan``: generate, validate and inspect plan files, offline or against a live cluster."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from kadmin import placement
from kadmin.cli.common import (
    RATE_FORMS,
    AllowInternalOpt,
    AllowRfChangeOpt,
    AllTopicsDefaultOpt,
    AllTopicsOpt,
    BatchSizeOpt,
    BrokersOpt,
    CapacityOpt,
    ClusterOpt,
    Connection,
    EvenTopicsOpt,
    ForceOpt,
    JsonOpt,
    LeadersOpt,
    MaxBatchBytesOpt,
    MaxMovesOpt,
    MaxMovesPerBrokerOpt,
    MaxZnodeBytesOpt,
    OutOpt,
    PlacementRfOpt,
    PlanArgument,
    RackOpt,
    ReassignmentPlanOpt,
    RemoveBrokersOpt,
    SizesOpt,
    SkipUnreadableOpt,
    StartIndexOpt,
    StartPartitionOpt,
    StrategyOpt,
    TargetBrokersOpt,
    TopicsFileOpt,
    TopicsOpt,
    TopicSpreadOpt,
    cluster_source,
    connects,
    count,
    named_output,
    one_plan,
    stdout_is_data,
    warn,
    write_stdout,
)
from kadmin.cli.render import summary
from kadmin.cli.render.plan import demoted, generated, plan_stats, replaced, verdicts
from kadmin.cli.render.rebalance import rebalanced
from kadmin.model import DeletionPlan, ElectionPlan, InvalidInput, PlanKind
from kadmin.operations import generate as generating
from kadmin.operations import validate as validating
from kadmin.operations.demote import DemoteRequest, demote_brokers
from kadmin.operations.generate import DeletionRequest, GenerateRequest, Output
from kadmin.operations.rebalance import rebalance
from kadmin.operations.replace import ReplaceRequest, replace
from kadmin.operations.selection import TopicSelection, optional_ints, split_ints
from kadmin.reports import ReportFormat
from kadmin.requests import RebalanceRequest

app = typer.Typer(help="Generate, validate and inspect plan files.", no_args_is_help=True,
                   rich_markup_mode=None)


PlanFilesArgument = Annotated[list[Path] | None, typer.Argument(
    help="Plan files; folders of plans (their *.json, journals aside) and `kadmin spark` output "
         "folders (or their manifest.json) too.", show_default=False)]
PlanFilesOpt = Annotated[list[Path] | None, typer.Option(
    "--plan", help="A plan, as the arguments are (may be given more than once).",
    show_default=False)]


def plans_named(arguments: list[Path] | None, options: list[Path] | None, command: str,
                purpose: str) -> tuple[Path, ...]:
    """The plans of ``plan validate`` and ``plan report``: the arguments, then each --plan."""
    named = (*(arguments or []), *(options or []))
    if not named:
        raise InvalidInput(f"no plan given: name the plans to {purpose} (kadmin plan {command} "
                           "FILE ... or --plan FILE)")
    return named


class Balance(str, Enum):
    """``plan rebalance --balance``: what is balanced over the brokers."""

    REPLICAS = "replicas"
    BYTES = "bytes"


@app.command()
@connects
def generate(
    zk: Connection,
    cluster: ClusterOpt = None,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsOpt = False,
    brokers: TargetBrokersOpt = None,
    strategy: StrategyOpt = placement.Strategy.ROUNDROBIN,
    replication_factor: PlacementRfOpt = None,
    start_index: StartIndexOpt = None,
    start_partition: StartPartitionOpt = 0,
    disable_rack_aware: RackOpt = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Generate a balanced reassignment plan and its rollback file.

    Example: kadmin plan generate --cluster cluster.json --all-topics --strategy kafka
    """
    options = placement.PlacementOptions(
        strategy=strategy, replication_factor=replication_factor, start_index=start_index,
        start_partition=start_partition, rack_aware=not disable_rack_aware)
    made = generating.generate(
        GenerateRequest(TopicSelection(topics, topics_file, all_topics), brokers, options),
        cluster_source(cluster, zk, skip_unreadable), Output(out_path, force, write_stdout), warn)
    # nothing to move: no plan on stdout, so the summary takes its place
    generated(made, json_output, to_stderr=stdout_is_data(out_path) and bool(made.plan.moves))


@app.command()
@connects
def validate(
    zk: Connection,
    plan_files: PlanFilesArgument = None,
    plan_options: PlanFilesOpt = None,
    kind: Annotated[PlanKind | None, typer.Option(
        "--kind", help="The kind every plan must be (default: detected for each).")] = None,
    cluster: ClusterOpt = None,
    allow_rf_change: AllowRfChangeOpt = False,
    allow_internal: AllowInternalOpt = False,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too.")] = False,
    report_format: Annotated[ReportFormat, typer.Option(
        "--format", help="text for people; json (one object a plan, one a line); github "
                         "(GitHub Actions annotations); junit (one JUnit XML document).")
    ] = ReportFormat.TEXT,
    json_output: Annotated[bool, typer.Option("--json", help="Short for --format json.")] = False,
    report_dir: Annotated[Path | None, typer.Option(
        "--report", parser=named_output,
        help="Also write each plan's HTML report (as `plan report` draws it) into this folder, "
             "one <plan path>.html per plan, invalid plans included; needs --cluster or -z "
             "and the report extra.")] = None,
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
    request = validating.ValidateRequest(
        plans_named(plan_files, plan_options, "validate", "check"), kind, allow_rf_change,
        allow_internal)
    source = cluster_source(cluster, zk, skip_unreadable)
    if report_dir is None:
        found = validating.validate_plans(request, source, warn)
    else:  # imported here: the reports need the scheduler (numpy), plain validation does not
        from kadmin.operations import plan_report as reporting
        found = reporting.validate_with_reports(request, report_dir, source, warn)
    if verdicts(found, ReportFormat.JSON if json_output else report_format, strict=strict):
        raise typer.Exit(2)


@app.command()
@connects
def stats(
    zk: Connection,
    plan_path: ReassignmentPlanOpt = None,
    plan_file: PlanArgument = None,
    cluster: ClusterOpt = None,
    sizes_path: SizesOpt = None,
    capacity: CapacityOpt = None,
    disable_rack_aware: RackOpt = False,
    json_output: JsonOpt = False,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Per-broker replica and leader counts before and after a reassignment plan; with
    partition sizes also bytes moved and bytes per broker. The lower bound is the one
    plan rebalance prints for the same plan.

    Example: kadmin plan stats --plan plans/x.json --cluster cluster.json --sizes log-dirs.txt
    """
    request = validating.StatsRequest(one_plan(plan_path, plan_file),
                                      rack_aware=not disable_rack_aware, capacity=capacity)
    plan_stats(validating.stats(request, cluster_source(cluster, zk, skip_unreadable, sizes_path),
                                warn), json_output)


@app.command()
@connects
def election(
    zk: Connection,
    cluster: ClusterOpt = None,
    topics: TopicsOpt = None,
    all_topics: AllTopicsOpt = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Write a preferred replica election plan for the given topics (or every partition)."""
    made = generating.election(TopicSelection(topics, None, all_topics),
                               cluster_source(cluster, zk, skip_unreadable),
                               Output(out_path, force, write_stdout), warn)
    plan, written = made.plan, made.path
    assert isinstance(plan, ElectionPlan)
    if not plan.partitions:
        summary("nothing to elect: the selected topics have no partitions; no plan "
                "written", {"plan": None, "partitions": 0}, json_output,
                to_stderr=stdout_is_data(out_path))
    else:
        summary(f"{len(plan.partitions)} partition(s); plan {written or 'on stdout'}",
                {"plan": written and str(written), "partitions": len(plan.partitions)},
                json_output, to_stderr=stdout_is_data(out_path))


@app.command()
@connects
def deletion(
    zk: Connection,
    topics: Annotated[str, typer.Option("--topics", help="Comma-separated topics to delete.")],
    cluster: ClusterOpt = None,
    allow_internal: AllowInternalOpt = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Write a topic deletion plan ({"version":1,"topics":[...]}), validated first."""
    made = generating.deletion(DeletionRequest(topics, allow_internal),
                               cluster_source(cluster, zk, skip_unreadable),
                               Output(out_path, force, write_stdout), warn)
    plan, written = made.plan, made.path
    assert isinstance(plan, DeletionPlan)
    summary(f"{len(plan.topics)} topic(s); plan {written or 'on stdout'}",
            {"plan": written and str(written), "topics": len(plan.topics)}, json_output,
            to_stderr=stdout_is_data(out_path))


@app.command("rebalance")
@connects
def plan_rebalance(
    zk: Connection,
    cluster: ClusterOpt = None,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsDefaultOpt = False,
    brokers: BrokersOpt = None,
    remove_brokers: RemoveBrokersOpt = None,
    replication_factor: Annotated[int | None, typer.Option(
        "--replication-factor", parser=count(1),
        help="Change the replication factor of the selected topics instead: an increase keeps "
             "every replica and the leader and adds replicas on the least loaded brokers; a "
             "decrease drops followers from the most loaded.")] = None,
    leaders: LeadersOpt = True,
    max_moves: MaxMovesOpt = None,
    max_leader_changes: Annotated[int | None, typer.Option(
        "--max-leader-changes", parser=count(0), help="At most N partitions change preferred leader "
                                            "(moving a leader's replica counts).")] = None,
    disable_rack_aware: RackOpt = False,
    topic_spread: TopicSpreadOpt = None,
    even_topics: EvenTopicsOpt = True,
    capacity: CapacityOpt = None,
    sizes_path: SizesOpt = None,
    balance: Annotated[Balance, typer.Option(
        "--balance", help="replicas: replica counts per broker with the fewest moves (the "
                          "default); bytes: bytes per broker within one largest partition of "
                          "each other, moving as few bytes as it finds (needs sizes).")
    ] = Balance.REPLICAS,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Balance replicas and preferred leaders with the fewest replica moves, and write the plan
    and its rollback file.

    Examples: kadmin plan rebalance -z zk1:2181/kafka (fix skew, or fill new brokers);
    kadmin plan rebalance -z zk1:2181/kafka --remove-brokers 5 (drain broker 5)
    """
    request = RebalanceRequest(
        TopicSelection(topics, topics_file, all_topics),
        optional_ints(brokers, "--brokers"), optional_ints(remove_brokers, "--remove-brokers"),
        replication_factor=replication_factor, leaders=leaders, max_moves=max_moves,
        max_leader_changes=max_leader_changes, rack_aware=not disable_rack_aware,
        by_bytes=balance is Balance.BYTES, topic_spread=topic_spread, even_topics=even_topics,
        capacity=capacity)
    figures = rebalance(request, cluster_source(cluster, zk, skip_unreadable, sizes_path),
                        Output(out_path, force, write_stdout), warn)
    rebalanced(figures, json_output)


@app.command("replace")
@connects
def plan_replace(
    zk: Connection,
    brokers: Annotated[str, typer.Option(
        "--broker", help="The brokers to replace, comma-separated (registered or not: a dead "
                         "broker's replicas move too).")],
    replacements: Annotated[str, typer.Option(
        "--with", help="Their replacements, comma-separated, in the same order: each replica "
                       "on the n-th --broker moves to the n-th --with, in the same position of "
                       "its list.")],
    allow_unregistered: Annotated[bool, typer.Option(
        "--allow-unregistered", help="Plan onto replacements not registered in /brokers/ids "
                                     "yet (the plan then validates as a file only).")] = False,
    cluster: ClusterOpt = None,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Replace brokers one for one: every replica on a replaced broker moves to its
    replacement in the same position of its list (so the replacement leads what it led);
    nothing else moves. Writes the plan and its rollback; a replacement in another rack is a
    warning.

    Example: kadmin plan replace --broker 3 --with 7 -z zk1:2181/kafka -o plans/replace-3.json;
    then kadmin reassign --plan plans/replace-3.json -z zk1:2181/kafka --elect
    """
    request = ReplaceRequest(tuple(split_ints(brokers, "--broker")),
                             tuple(split_ints(replacements, "--with")), allow_unregistered)
    replaced(replace(request, cluster_source(cluster, zk, skip_unreadable),
                     Output(out_path, force, write_stdout), warn), json_output)


@app.command("demote")
@connects
def plan_demote(
    zk: Connection,
    brokers: Annotated[str, typer.Option(
        "--brokers", help="The brokers to demote, comma-separated: no partition that has a "
                          "replica elsewhere keeps one of them as its preferred leader.")],
    cluster: ClusterOpt = None,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsDefaultOpt = False,
    minimal: Annotated[bool, typer.Option(
        "--minimal", help="Change only the partitions the demoted brokers lead (the fewest "
                          "changes; the leader spread it leaves is reported) instead of also "
                          "balancing leaders over the other brokers.")] = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Move preferred leadership off brokers (before a restart, or off a suspect broker) by
    reordering replica lists only, no data moved; write the plan and its rollback (the way
    back).

    Example: kadmin plan demote --brokers 3 -z zk1:2181/kafka -o plans/demote.json; then
    kadmin reassign --plan plans/demote.json -z zk1:2181/kafka --elect
    """
    request = DemoteRequest(split_ints(brokers, "--brokers"),
                            TopicSelection(topics, topics_file, all_topics), minimal)
    figures = demote_brokers(request, cluster_source(cluster, zk, skip_unreadable),
                             Output(out_path, force, write_stdout), warn)
    demoted(figures, json_output)


@app.command("report")
@connects
def plan_report(
    zk: Connection,
    out_path: Annotated[Path, typer.Option(
        "--out", "-o", parser=named_output,
        help="The HTML file to write: one page, every plan a section, opened offline.")],
    plan_files: PlanFilesArgument = None,
    plan_options: PlanFilesOpt = None,
    cluster: ClusterOpt = None,
    sizes_path: SizesOpt = None,
    capacity: CapacityOpt = None,
    throttle: Annotated[str | None, typer.Option(
        "--throttle", help=f"The replication throttle the plan will run at, bytes/s: "
                           f"{RATE_FORMS}. With sizes, each batch's predicted duration.")
    ] = None,
    batch_size: BatchSizeOpt = 1000,
    max_znode_bytes: MaxZnodeBytesOpt = 1_000_000,
    max_batch_bytes: MaxBatchBytesOpt = None,
    max_moves_per_broker: MaxMovesPerBrokerOpt = None,
    disable_rack_aware: RackOpt = False,
    allow_rf_change: AllowRfChangeOpt = False,
    allow_internal: AllowInternalOpt = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing report.")] = False,
    json_output: JsonOpt = False,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Draw plans as one self-contained HTML page for review: the summary and validation
    verdict, per-broker load before and after, where the data goes, topic spreads, and the
    batches as reassign would run them against the lower bound; every chart's numbers as a
    table too. Needs the report extra (pip install 'kadmin[report]').

    Example: kadmin plan report plans/x.json --cluster cluster.json --sizes log-dirs.txt
    --throttle 50MB --out x.html
    """
    from kadmin.operations import plan_report as reporting  # numpy: not for plan validate

    settings = reporting.ReportSettings(
        capacity, throttle, batch_size, max_znode_bytes, max_batch_bytes, max_moves_per_broker,
        rack_aware=not disable_rack_aware)
    written = reporting.report(
        reporting.ReportRequest(plans_named(plan_files, plan_options, "report", "draw"),
                                out_path, force, settings, allow_rf_change, allow_internal),
        cluster_source(cluster, zk, skip_unreadable, sizes_path), warn)
    summary(f"{written.path}: {written.plans} plan(s), {written.invalid} invalid",
            {"report": str(written.path), "plans": written.plans, "invalid": written.invalid},
            json_output)
