"""``kadmin throttle``: the replication throttles in force, removing them, changing their rate."""

from __future__ import annotations

from typing import Annotated

import typer

from kadmin.cli.common import RATE_FORMS, Connection, JsonOpt, ReadTimeoutOpt, connects
from kadmin.cli.render import summary
from kadmin.cli.render.throttle import throttles
from kadmin.model import listed
from kadmin.operations import throttle as throttling
from kadmin.units import human_bytes

app = typer.Typer(help="Replication throttles (docs/execution.md).", no_args_is_help=True,
                   rich_markup_mode=None)


@app.command()
@connects
def show(
    zk: Connection,
    json_output: JsonOpt = False,
    timeout: ReadTimeoutOpt = None,
) -> None:
    """Every topic and broker config with a replication throttle, and which kadmin set.

    Example: kadmin throttle show -z zk1:2181/kafka
    """
    throttled = throttling.show(zk.within(timeout))
    throttles(throttled.in_force, json_output, unreadable=throttled.unreadable)


@app.command()
@connects
def clear(
    zk: Connection,
    all_throttles: Annotated[bool, typer.Option(
        "--all-throttles", help="Every replication throttle, whoever set it (as Kafka's tool "
                                "does on --verify); default: only the entries kadmin added.")
    ] = False,
    json_output: JsonOpt = False,
) -> None:
    """Remove the throttle entries kadmin added (its record in /kadmin/throttles), or with
    --all-throttles every replication throttle; other config keys stay. A config or record
    kadmin cannot decode is left as it is and named (exit 1) once the others are cleared. Example:
    kadmin throttle clear -z zk1:2181/kafka
    """
    changed = throttling.clear(throttling.ClearRequest(zk, everything=all_throttles)).changed
    summary(f"throttles removed from {len(changed)} config(s)"
            + (f": {listed(changed)}" if changed else ""), {"cleared": list(changed)},
            json_output)


@app.command("set")
@connects
def set_rate(
    zk: Connection,
    rate: Annotated[str, typer.Option(
        "--throttle", help=f"The replication throttle, bytes/s: {RATE_FORMS}.")],
    brokers: Annotated[str | None, typer.Option(
        "--brokers", help="Broker ids, comma-separated (default: every broker kadmin "
                          "throttled).")] = None,
    json_output: JsonOpt = False,
) -> None:
    """Change the replication rate of a running reassignment; kadmin records what it set, so
    the batch's cleanup (or throttle clear) puts the previous rate back. Example:
    kadmin throttle set --throttle 100MB -z zk1:2181/kafka --brokers 1,2,3
    """
    change = throttling.set_rate(throttling.SetRateRequest(zk, rate, brokers))
    summary(f"replication rate {human_bytes(change.rate)}/s on {change.brokers} "
            f"broker(s) ({len(change.changed)} changed)",
            {"rate": change.rate, "brokers": change.brokers, "changed": list(change.changed)},
            json_output)
