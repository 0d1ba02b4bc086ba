"""``kadmin status``: the cluster read live, its health and the admin work in progress."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin.cli.cancel import STUCK_AFTER, StuckAfterOpt
from kadmin.cli.common import (
    CapacityOpt,
    Connection,
    JsonOpt,
    ReadTimeoutOpt,
    connects,
    warn,
)
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
    timeout: ReadTimeoutOpt = None,
) -> None:
    """Controller, live brokers, partition health and admin work in progress (with each
    reassignment that cannot finish, its cause and the command that repairs it); with --capacity
    each broker's capacity and share of the replicas, and with --sizes too the part of its
    capacity in use (brokers above it are named).

    Example: kadmin status -z zk1:2181/kafka --sizes log-dirs.txt --capacity capacity.json
    """
    show(statuses.status(statuses.StatusRequest(zk.within(timeout), sizes_path, capacity,
                                                stuck_after), warn), json_output)
