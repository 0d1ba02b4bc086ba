"""The ``kadmin`` command: one Typer app per command group, and the error contract.

Every failure reaches the operator as one line (plus one line per partition or problem where
there are several) and an exit code: 1 failed, 2 invalid input, 3 conflict. A Python traceback is
never shown unless KADMIN_DEBUG=1.
"""

from __future__ import annotations

import os
import sys

import click
import typer

from kadmin.cli import cluster, execute, plan, sandbox, spark, zk
from kadmin.cli.common import err
from kadmin.model import KadminError

app = typer.Typer(
    name="kadmin",
    help="Plan, validate and execute Kafka admin operations (partition reassignment, preferred "
         "replica election, topic deletion) through ZooKeeper.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(plan.app, name="plan")
app.add_typer(cluster.app, name="cluster")
app.add_typer(execute.topics_app, name="topics")
app.add_typer(zk.app, name="zk")
app.add_typer(spark.app, name="spark")
app.command("status")(cluster.status)
app.command("reassign")(execute.reassign)
app.command("verify")(execute.verify)
app.command("elect")(execute.elect)
app.command("sandbox")(sandbox.sandbox)
app.command("demo")(sandbox.demo)


def report(error: KadminError) -> int:
    err.print(f"kadmin: error: {error}", markup=False)
    for line in error.details:
        err.print(f"  {line}", markup=False)
    return error.exit_code


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: runs the app in standalone mode off, so that kadmin's own
    exceptions map to the documented exit codes instead of Click's defaults."""
    try:
        code = app(args=argv, standalone_mode=False)
    except KadminError as error:
        sys.exit(report(error))
    except click.exceptions.Abort:
        err.print("kadmin: aborted")
        sys.exit(130)
    except click.ClickException as error:  # usage errors: unknown option, bad value (exit 2)
        error.show()
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        err.print("kadmin: interrupted; run the same command again to resume")
        sys.exit(130)
    except Exception as error:  # the last line of defence of the error contract
        if os.environ.get("KADMIN_DEBUG"):
            raise
        err.print(f"kadmin: internal error: {type(error).__name__}: {error} "
                  "(set KADMIN_DEBUG=1 for a traceback)", markup=False)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
