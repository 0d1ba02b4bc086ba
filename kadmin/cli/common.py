"""Options and small adapters every command group shares: the cluster source, the ZooKeeper
connection and its security, the consoles, and parsing of comma-separated lists."""

from __future__ import annotations

import functools
import inspect
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import typer
from rich.console import Console

from kadmin import units
from kadmin.model import InvalidInput, and_more, printable, sample_of
from kadmin.operations.planfiles import to_stdout
from kadmin.operations.source import ClusterSource, Connection
from kadmin.placement import Strategy


class OutputClosed(Exception):
    """Whoever read kadmin's output has gone (``kadmin ... | head -1``): the command ends
    quietly, as a Unix tool killed by SIGPIPE does (exit 141, see ``app.main``)."""


class _Console(Console):
    """rich's Console, with every string it prints passed through :func:`printable`: messages
    carry paths, names and option values the operator typed or ZooKeeper held, and a control
    character in one must not forge a line or drive the terminal. Strings inside tables are
    escaped where the table is built (:func:`kadmin.cli.render.cell`)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(printable(o) if isinstance(o, str) else o for o in objects), **kwargs)

    def on_broken_pipe(self) -> None:
        """rich's hook for a closed output (its own exits 1): ended as every closed output is."""
        raise OutputClosed


def write_stdout(chunks: Iterable[str]) -> None:
    """Data (JSON) on stdout, written as it comes; a reader that has gone is OutputClosed.
    Every write of data to stdout goes through here or the consoles, so a closed pipe never
    reaches Click, which would turn it into exit 1."""
    try:
        for chunk in chunks:
            # in pieces: one write of a large string that the pipe takes only in part loses
            # the EPIPE of the rest (the reader got 64 KiB, kadmin would report success)
            for start in range(0, len(chunk), STDOUT_PIECE):
                sys.stdout.write(chunk[start:start + STDOUT_PIECE])
        sys.stdout.flush()
    except BrokenPipeError:
        raise OutputClosed from None


STDOUT_PIECE = 1 << 16
"""Characters written to stdout at a time (see :func:`write_stdout`)."""


out = _Console(soft_wrap=True, highlight=False)
err = _Console(stderr=True, soft_wrap=True, highlight=False)


def print_sampled(console: Console, lines: Iterable[str], prefix: str) -> None:
    """One line per item of a list, sampled like every list kadmin shows: the first
    LIST_LIMIT, then ``(and N more)``; each line starts with ``prefix``."""
    shown = sample_of(lines)
    for line in shown.items:
        console.print(f"{prefix}{line}", markup=False)
    if shown.rest:
        console.print(f"{prefix}{and_more(shown.rest)}", markup=False)

ZookeeperOpt = Annotated[str | None, typer.Option(
    "--zookeeper", "-z", envvar="KADMIN_ZOOKEEPER", show_envvar=True,
    # no [brackets]: Typer's rich markup would read "[/chroot]" as a closing tag
    help="ZooKeeper connect string: host:port, comma-separated for an ensemble, then an "
         "optional /chroot (zk1:2181,zk2:2181/kafka).")]


def number(minimum: float | None = None, maximum: float | None = None, unit: str = "seconds"
           ) -> Callable[[str], float]:
    """Typer parser for every option that takes a number that is not a count: the one rule of
    :func:`kadmin.units.parse_number` (finite, decimal, within range), one message for ``inf``,
    ``nan`` and a value out of range alike."""
    def parse(text: str) -> float:
        if isinstance(text, float):  # a default Typer passes through the parser
            return text
        try:
            return units.parse_number(text, minimum=minimum, maximum=maximum, unit=unit)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    return parse


def count(minimum: int | None = None, maximum: int | None = None) -> Callable[[str], int]:
    """Typer parser for every option that takes a count: the one rule of
    :func:`kadmin.units.parse_count` (ASCII decimal digits, within range), as :func:`number`
    is for the rest (``1_000`` and ``١٢`` refused by both)."""
    def parse(text: str) -> int:
        if isinstance(text, int):  # a default Typer passes through the parser
            return text
        try:
            return units.parse_count(text, minimum=minimum, maximum=maximum)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    return parse


def output_path(text: str) -> Path:
    """Typer parser for options naming a file to write: Path('') is the current folder, so an
    empty value would be taken for "." instead of a mistake. ``-`` is stdout for the options
    that say so (:func:`stdout_is_data`)."""
    if isinstance(text, Path):  # a default Typer passes through the parser
        return text
    if not text:
        raise typer.BadParameter("must name a file, not be empty")
    if text != "/" and text.endswith(("/", os.sep)):
        return FolderSyntax(text)
    return Path(text)


class FolderSyntax(type(Path())):  # type: ignore[misc]
    """A path typed with a trailing slash (``--out newdir/``): the operator named a folder,
    which pathlib forgets (``Path("newdir/")`` is ``newdir``)."""


def file_output(text: str) -> Path:
    """:func:`output_path` for options that write one file: a name ending in ``/`` or naming
    no file (``.``, ``/``) is refused, never written as a file of the folder's name."""
    path = output_path(text)
    if isinstance(text, Path):  # a default Typer passes through the parser
        return path
    if text != "-" and (text.endswith(("/", os.sep)) or path.name in ("", ".", "..")):
        raise typer.BadParameter(f"{printable(text)} names a folder; name the file to write")
    return path


def named_output(text: str) -> Path:
    """:func:`output_path` for options that write a folder or a file kept open: ``-`` there
    would make a file literally named ``-``."""
    if text == "-":
        raise typer.BadParameter("'-' (stdout) is not possible here: name a file or folder")
    return output_path(text)


MAX_ZK_SECONDS = 3600.0
"""Longest connect or session timeout: ZooKeeper caps sessions at 20 ticks (40 s by default) and
sends the timeout as a 32-bit count of milliseconds."""

ConnectTimeoutOpt = Annotated[float, typer.Option(
    "--connect-timeout", parser=number(0.1, MAX_ZK_SECONDS),
    help="Seconds to wait for a ZooKeeper session to be established.")]
SessionTimeoutOpt = Annotated[float, typer.Option(
    "--session-timeout", parser=number(1.0, MAX_ZK_SECONDS),
    help="ZooKeeper session timeout in seconds.")]
MaxZnodeBytesOpt = Annotated[int, typer.Option(
    "--max-znode-bytes", parser=count(1024),
    help="Largest znode (or transaction of deletion markers) written; at most --jute-maxbuffer "
         "less 1 KB.")]
JuteMaxBufferOpt = Annotated[int, typer.Option(
    "--jute-maxbuffer", parser=count(2048),
    help="The ZooKeeper servers' jute.maxbuffer in bytes, if they run with more than the "
         "default 1048575 (-Djute.maxbuffer).")]
ClusterOpt = Annotated[Path | None, typer.Option(
    "--cluster", help="Cluster snapshot: a JSON file or a snapshot folder.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
SERVING_JSON_HELP = ("Once serving, print one JSON line: the connect string, the process ids "
                     "(kadmin's, ZooKeeper's) and how to stop; nothing else on stdout.")
"""``--json`` of the commands that start a ZooKeeper (sandbox, zk serve, demo)."""
ServingJsonOpt = Annotated[bool, typer.Option("--json", help=SERVING_JSON_HELP)]


def print_serving(connect_string: str, zookeeper_pid: int | None) -> None:
    """The one line ``--json`` of a command that serves until stopped prints once it serves:
    what a script needs to use it and to stop it, without reading the text."""
    me = os.getpid()
    write_stdout([json.dumps({"connect_string": connect_string,
                              "pids": {"kadmin": me, "zookeeper": zookeeper_pid},
                              "stop": f"kill -TERM {me} (or Ctrl-C): ZooKeeper stops with it"})
                  + "\n"])
SkipUnreadableOpt = Annotated[bool, typer.Option(
    "--skip-unreadable",
    help="With -z: go on without the znodes kadmin cannot decode, each named on stderr (without "
         "it they stop the command with exit 1). A broker whose registration is unreadable is "
         "still a live broker: it is kept, with its id only.")]
RATE_FORMS = "50MB (10^6 bytes), 10MiB (2^20), 1.5G, 500k or plain bytes"
"""How a byte rate may be typed, for option help (kadmin.units parses them)."""
SizesOpt = Annotated[Path | None, typer.Option(
    "--sizes", help="Partition sizes: the output of kafka-log-dirs.sh --describe (header lines "
                    "and all) or its JSON. Default: the snapshot's own sizes, if any.")]


_CONNECTION_OPTIONS = (
    inspect.Parameter("zookeeper", inspect.Parameter.KEYWORD_ONLY, default=None,
                      annotation=ZookeeperOpt),
    inspect.Parameter("connect_timeout", inspect.Parameter.KEYWORD_ONLY, default=10.0,
                      annotation=ConnectTimeoutOpt),
    inspect.Parameter("session_timeout", inspect.Parameter.KEYWORD_ONLY, default=30.0,
                      annotation=SessionTimeoutOpt),
)
Command = TypeVar("Command", bound=Callable[..., Any])


def connects(command: Command) -> Command:
    """The ZooKeeper connection options, declared once for every command that connects:
    ``command`` takes one parameter ``zk: Connection`` (first, as it has no default), and
    Typer sees -z/--zookeeper in its place and --connect-timeout and --session-timeout last
    (the signature Typer reads is rewritten; the command gets the three as one value)."""
    signature = inspect.signature(command, eval_str=True)
    params = list(signature.parameters.values())
    at = next(i for i, p in enumerate(params) if p.name == "zk")
    keyword = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
    zookeeper, *timeouts = _CONNECTION_OPTIONS  # -z where zk is, the timeouts last
    shown = [*keyword[:at], zookeeper, *keyword[at + 1:], *timeouts]

    @functools.wraps(command)
    def with_connection(*, zookeeper: str | None, connect_timeout: float,
                        session_timeout: float, **options: Any) -> Any:
        return command(zk=Connection(zookeeper, connect_timeout, session_timeout), **options)

    del with_connection.__wrapped__  # Typer must read the signature below, not command's
    with_connection.__signature__ = signature.replace(parameters=shown)  # type: ignore[attr-defined]
    with_connection.__annotations__ = {p.name: p.annotation for p in shown}
    return cast(Command, with_connection)


def warn(line: str, details: Iterable[str] = ()) -> None:
    """A warning line on stderr, then a line for each item it names (sampled)."""
    err.print(f"kadmin: warning: {line}", markup=False)
    print_sampled(err, details, "  ")


class _Notices(logging.Handler):
    """kadmin's own notices (its ``kadmin.*`` loggers: a ZooKeeper server that makes it read
    znode by znode, ...) as ``kadmin: ...`` lines on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        err.print(f"kadmin: {record.getMessage()}", markup=False)


def use_verbose(verbose: bool) -> None:
    """Show kadmin's notices on stderr for this invocation (``--verbose``), or not."""
    logger = logging.getLogger("kadmin")
    for handler in [h for h in logger.handlers if isinstance(h, _Notices)]:
        logger.removeHandler(handler)
    logger.setLevel(logging.INFO if verbose else logging.NOTSET)
    if verbose:
        logger.addHandler(_Notices())


stdout_is_data = to_stdout
"""True when the output file is ``-``: then human messages go to stderr."""


def info(message: str, *, to_stderr: bool = False) -> None:
    (err if to_stderr else out).print(message, markup=False)


# --- options several command groups share ---------------------------------------------------------

TopicsOpt = Annotated[str | None, typer.Option("--topics", help="Comma-separated topic names.")]
TopicsFileOpt = Annotated[Path | None, typer.Option(
    "--topics-file", help='Kafka\'s topics-to-move file {"version":1,"topics":[{"topic":"foo"}]}.')]
AllTopicsOpt = Annotated[bool, typer.Option("--all-topics", help="Every topic of the cluster.")]
OutOpt = Annotated[Path | None, typer.Option(
    "--out", "-o", parser=file_output,
    help="Plan file to write ('-' for stdout); default plans/<kind>-<UTC time>.json.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite an existing plan file.")]
BatchSizeOpt = Annotated[int, typer.Option("--batch-size", parser=count(1),
                                           help="Partitions per znode.")]
MaxBatchBytesOpt = Annotated[str | None, typer.Option(
    "--max-batch-bytes", help="With --sizes: the most bytes one batch copies (50GB, ...).")]
MaxMovesPerBrokerOpt = Annotated[int | None, typer.Option(
    "--max-moves-per-broker", parser=count(1),
    help="Per batch, the most new replicas one broker receives and the most moving "
         "partitions it sends for as leader (Cruise Control's per-broker concurrency; "
         "default: no limit). Fewer simultaneous fetches per broker, the same lower "
         "bound.")]

# the options of `plan rebalance` that `spark rebalance` shares
AllTopicsDefaultOpt = Annotated[bool, typer.Option(
    "--all-topics", help="Every topic of the cluster (the default).")]
BrokersOpt = Annotated[str | None, typer.Option(
    "--brokers", help="The target brokers, comma-separated; replicas on any other broker "
                      "move (default: every registered broker).")]
RemoveBrokersOpt = Annotated[str | None, typer.Option(
    "--remove-brokers", help="Brokers to drain, comma-separated (every replica of the "
                             "selected topics moves off them).")]
LeadersOpt = Annotated[bool, typer.Option(
    "--leaders/--no-leaders", help="Balance preferred leaders by reordering replica lists "
                                   "(no data moves).")]
MaxMovesOpt = Annotated[int | None, typer.Option(
    "--max-moves", parser=count(0), help="A partial plan of at most N replica moves, the most loaded "
                               "brokers relieved first; run again to continue.")]
RackOpt = Annotated[bool, typer.Option("--disable-rack-aware", help="Ignore racks.")]
CapacityOpt = Annotated[Path | None, typer.Option(
    "--capacity", help="Broker capacities: Cruise Control's capacity.json (brokerCapacities, "
                       "brokerId -1 the default, DISK in MB or a map of log dirs to MB) or a "
                       "plain {\"<broker id>\": <bytes>}; shares of replicas, leaders and "
                       "bytes follow them.")]
TopicSpreadOpt = Annotated[int | None, typer.Option(
    "--topic-spread", parser=count(0), help="Every selected topic ends with at most N more replicas on "
                                  "one broker than on another, brokers still balanced, with "
                                  "the fewest moves that allow it (printed as the lower "
                                  "bound). Default: the least spread the fewest moves allow.")]
EvenTopicsOpt = Annotated[bool, typer.Option(
    "--even-topics/--no-even-topics",
    help="Among the plans with the fewest moves, return one whose worst topic spread is the "
         "least (the default). --no-even-topics: the fewest moves and balanced brokers only, "
         "no topic looked at (the fastest on large clusters).")]
PriceRoundsOpt = Annotated[int, typer.Option(
    "--price-rounds", parser=count(0),
    help="With --topic-spread: rounds of Spark tasks, each about one linear program per chunk, "
         "that price the brokers' counts to bring the moves and the printed lower bound towards "
         "the exact minimum; fewer rounds plan faster on very large clusters (0: none, the "
         "chunks' first plan and their own bound).")]
ReassignmentPlanOpt = Annotated[Path | None, typer.Option(
    "--plan", help="Reassignment plan file, or a `kadmin spark` output folder or its "
                   "manifest.json.")]
PlanArgument = Annotated[Path | None, typer.Argument(
    hidden=True, help="The plan file as a bare argument: the old spelling of --plan.")]


def one_plan(option: Path | None, argument: Path | None) -> Path:
    """The plan a command reads: ``--plan FILE``, or the bare argument of its old spelling."""
    if option is not None and argument is not None:
        raise InvalidInput(f"give the plan once: --plan {option} or {argument}, not both")
    if option is None and argument is None:
        raise InvalidInput("which plan? give --plan FILE")
    return cast(Path, option or argument)


def cluster_source(cluster: Path | None, zk: Connection, skip_unreadable: bool = False,
                   sizes: Path | None = None) -> ClusterSource:
    """The cluster a command reads, as its ``--cluster``, ``-z``, ``--skip-unreadable`` and
    ``--sizes`` options give it."""
    return ClusterSource(cluster, zk, skip_unreadable, sizes)


PlanOpt = Annotated[Path | None, typer.Option("--plan", help="Plan file.")]
TimeoutOpt = Annotated[float | None, typer.Option(
    "--timeout", parser=number(0.0),
    help="Seconds to wait for the controller in all (default: no limit).")]
ReadTimeoutOpt = Annotated[float | None, typer.Option(
    "--timeout", parser=number(0.0),
    help="Seconds the whole command may take, connecting included (default: each ZooKeeper "
         "request bounded on its own).")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Show what would be done; write nothing.")]
AllowRfChangeOpt = Annotated[bool, typer.Option(
    "--allow-rf-change", help="Accept partitions whose replica count the plan changes.")]
AllowInternalOpt = Annotated[bool, typer.Option(
    "--allow-internal", help="Accept deleting Kafka's internal topics (__consumer_offsets, "
                             "__transaction_state).")]

# the options of `plan generate` that `spark plan` shares
TargetBrokersOpt = Annotated[str | None, typer.Option(
    "--brokers", help="Target broker ids, comma-separated (default: every broker).")]
StrategyOpt = Annotated[Strategy, typer.Option(
    "--strategy", help="roundrobin: the round-robin rule; kafka: AdminUtils (rack-aware).")]
PlacementRfOpt = Annotated[int | None, typer.Option(
    "--replication-factor", parser=count(1), help="Default: every partition keeps its own replica count.")]
StartIndexOpt = Annotated[int | None, typer.Option(
    "--start-index", parser=count(0), help="roundrobin: first counter value; kafka: fixedStartIndex.")]
StartPartitionOpt = Annotated[int, typer.Option(
    "--start-partition", parser=count(0), help="kafka: startPartitionId.")]


# the options of `sandbox` that `demo` shares
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


def latency_seconds(latency: float, latency_ms: float | None) -> float:
    """--latency, or its old spelling --latency-ms converted to seconds."""
    return latency if latency_ms is None else latency_ms / 1000
