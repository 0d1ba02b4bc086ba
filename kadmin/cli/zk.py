"""``kadmin zk serve``: a real ZooKeeper server from PySpark's bundled jars."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin.cli.common import ServingJsonOpt, count, out, print_serving
from kadmin.operations.zookeeper import ServeRequest, serving
from kadmin.stop_signals import held, until_stop_signal

app = typer.Typer(help="Embedded ZooKeeper.", no_args_is_help=True,
                   rich_markup_mode=None)


@app.command()
def serve(
    port: Annotated[int, typer.Option("--port", parser=count(0, 65535), help="0 picks a free port.")]
    = 2181,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", help="Keep the data here (default: a temporary folder).")] = None,
    json_output: ServingJsonOpt = False,
) -> None:
    """Run ZooKeeper on 127.0.0.1 until Ctrl-C or SIGTERM. Needs Java 17+.

    Example: kadmin zk serve --port 2181 --data-dir /tmp/zk
    """
    # Ctrl-C or SIGTERM before serve_forever takes over (while the server starts, or just after
    # it printed its address) ends as it does later: the server stopped, its temporary folder
    # removed (by leaving the with block), exit 0
    with until_stop_signal(), serving(ServeRequest(port, data_dir)) as up:
        with held():  # a stop now must not cut the line in two (see held)
            if json_output:
                print_serving(up.connect_string, up.zookeeper_pid)
            else:
                out.print(f"ZooKeeper listening on {up.connect_string} (Ctrl-C to stop)",
                          markup=False)
        up.server.serve_forever()
