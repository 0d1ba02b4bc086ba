"""``kadmin status``: the cluster read live, its health and the admin work in progress."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin.cli.cancel import STUCK_AFTER, StuckAfterOpt
from kadmin.cli.common import CapacityOpt, Connection, JsonOpt, connects, number, warn
from kadmin.cli.render.status import status as show
from kadmin.operations import status as statuses


@connects
def status(
    zk: Connection,
    sizes_path: Annotated[Path | None, typer.Option(
        "--sizes", help="Partition sizes: the output of kafka-log-dirs.sh --describe (header "
                        "lines and all) or its JSON; adds the bytes on each broker.")] = None,
    capacity: CapacityOpt = None,
    json_output: JsonOpt = False,
    stuck_after: StuckAfterOpt = STUCK_AFTER,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", parser=number(0.0),
        help="Seconds the whole read may take, connecting included (default: each ZooKeeper "
             "request bounded on its own).")] = None,
) -> None:
    """Controller, live brokers, partition health and admin work in progress (with each
    reassignment that cannot finish, its cause and the command that repairs it); with --capacity
    each broker's capacity and share of the replicas, and with --sizes too the part of its
    capacity in use (brokers above it are named).

    Example: kadmin status -z zk1:2181/kafka --sizes log-dirs.txt --capacity capacity.json
    """
    show(statuses.status(statuses.StatusRequest(zk, sizes_path, capacity, stuck_after, timeout),
                         warn), json_output)
