"""``kadmin throttle``: the replication throttles in force, removing them, changing their rate."""

from __future__ import annotations

from typing import Annotated

import typer

from kadmin.cli import render
from kadmin.cli.common import (
    RATE_FORMS,
    ConnectTimeoutOpt,
    JsonOpt,
    SessionTimeoutOpt,
    ZookeeperOpt,
    connection,
    out,
)
from kadmin.model import listed
from kadmin.operations import throttle as throttling
from kadmin.operations.selection import split_ints
from kadmin.units import human_bytes, parse_rate

app = typer.Typer(help="Replication throttles (spec section 5).", no_args_is_help=True)


@app.command()
def show(
    zookeeper: ZookeeperOpt = None,
    json_output: JsonOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
) -> None:
    """Every topic and broker config with a replication throttle, and which kadmin set.

    Example: kadmin throttle show -z zk1:2181/kafka
    """
    render.throttles(throttling.show(connection(zookeeper, connect_timeout, session_timeout)),
                     json_output)


@app.command()
def clear(
    zookeeper: ZookeeperOpt = None,
    all_throttles: Annotated[bool, typer.Option(
        "--all", help="Every replication throttle, whoever set it (as Kafka's tool does on "
                      "--verify); default: only the entries kadmin added.")] = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
) -> None:
    """Remove the throttle entries kadmin added (its record in /kadmin/throttles), or with
    --all every replication throttle; other config keys stay. Example:
    kadmin throttle clear -z zk1:2181/kafka
    """
    changed = throttling.clear(connection(zookeeper, connect_timeout, session_timeout),
                               everything=all_throttles)
    out.print(f"throttles removed from {len(changed)} config(s)"
              + (f": {listed(changed)}" if changed else ""), markup=False)


@app.command("set")
def set_rate(
    rate: Annotated[str, typer.Option("--rate", help=f"Bytes/s: {RATE_FORMS}.")],
    brokers: Annotated[str | None, typer.Option(
        "--brokers", help="Broker ids, comma-separated (default: every broker kadmin "
                          "throttled).")] = None,
    zookeeper: ZookeeperOpt = None,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
) -> None:
    """Change the replication rate of a running reassignment; kadmin records what it set, so
    the batch's cleanup (or throttle clear) puts the previous rate back. Example:
    kadmin throttle set --rate 100MB -z zk1:2181/kafka --brokers 1,2,3
    """
    value = parse_rate(rate, "--rate")
    ids = split_ints(brokers, "--brokers")
    change = throttling.set_rate(connection(zookeeper, connect_timeout, session_timeout), value,
                                 ids)
    out.print(f"replication rate {human_bytes(change.rate)}/s on {change.brokers} broker(s) "
              f"({len(change.changed)} changed)", markup=False)
