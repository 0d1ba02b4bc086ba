"""``kadmin throttle``: the replication throttles in force, removing them, changing their rate."""

from __future__ import annotations

from functools import partial
from typing import Annotated

import typer

from kadmin import throttles
from kadmin.cli import render
from kadmin.cli.common import (
    RATE_FORMS,
    ConnectTimeoutOpt,
    JsonOpt,
    SessionTimeoutOpt,
    ZookeeperOpt,
    connected,
    out,
    split_ints,
    zk_settings,
)
from kadmin.model import InvalidInput, listed
from kadmin.units import human_bytes, parse_rate
from kadmin.zk import config, reader

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
    with connected(zookeeper, connect_timeout, session_timeout) as client:
        throttled = config.read_throttles(client)
    render.throttles(throttled.in_force, json_output, unreadable=throttled.unreadable)


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
    --all every replication throttle; other config keys stay. A config or record kadmin cannot
    decode is left as it is and named (exit 1) once the others are cleared. Example:
    kadmin throttle clear -z zk1:2181/kafka
    """
    with connected(zookeeper, connect_timeout, session_timeout) as client:
        if all_throttles:
            entities = config.read_throttles(client).entities()
            edit: config.Edit = throttles.remove_all
        else:
            entities = config.recorded_entities(client)
            edit = throttles.remove_own
        changed = config.update(client, dict.fromkeys(entities, edit), skip_unreadable=True)
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
    value = str(parse_rate(rate, "--rate"))
    ids = split_ints(brokers, "--brokers")
    zk_settings(zookeeper)
    with connected(zookeeper, connect_timeout, session_timeout) as client:
        if ids:
            live = reader.read_cluster(client, topics=(), states=False).snapshot.brokers
            unknown = [b for b in ids if b not in live]
            if unknown:
                raise InvalidInput(f"--brokers: broker(s) {unknown} not registered in "
                                   "/brokers/ids")
            entities = [throttles.broker_entity(b) for b in ids]
        else:
            entities = [e for e in config.recorded_entities(client) if e.startswith("brokers/")]
            if not entities:
                raise InvalidInput("no broker throttled by kadmin: name them with --brokers")
        edit = partial(throttles.add, replicas={},
                       rates={throttles.LEADER_RATE: value, throttles.FOLLOWER_RATE: value})
        changed = config.update(client, dict.fromkeys(entities, edit))
    out.print(f"replication rate {human_bytes(int(value))}/s on {len(entities)} broker(s) "
              f"({len(changed)} changed)", markup=False)
