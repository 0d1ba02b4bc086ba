"""The ``kadmin`` command: one Typer app per command group, and the error contract.

Every failure reaches the operator as one line (plus one line per partition or problem where
there are several) and an exit code: 1 failed, 2 invalid input (Click's usage errors included),
3 conflict, 130 interrupted. A Python traceback is never shown unless KADMIN_DEBUG=1.
"""

from __future__ import annotations

import os
import sys
from contextlib import suppress
from pathlib import Path
from typing import Annotated, Any

import typer

from kadmin.cli import (
    cluster,
    demo,
    elect,
    plan,
    reassign,
    sandbox,
    spark,
    status,
    throttle,
    topics,
    verify,
    zk,
)
from kadmin.cli.aliases import add_old_spellings
from kadmin.cli.common import OutputClosed, err, use_verbose
from kadmin.model import KadminError, and_more
from kadmin.operations.source import use_security_options
from kadmin.zk.security import SecuritySources

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
app.add_typer(topics.app, name="topics")
app.add_typer(zk.app, name="zk")
app.add_typer(spark.app, name="spark")
app.add_typer(throttle.app, name="throttle")
app.command("status")(status.status)
app.command("reassign")(reassign.reassign)
app.command("verify")(verify.verify)
app.command("elect")(elect.elect)
app.command("sandbox")(sandbox.sandbox)
app.command("demo")(demo.demo)

_SECURITY = "ZooKeeper security (every command that connects)"


def _pem_file(flag: str, envvar: str, help: str) -> Any:
    # Not checked here (exists=True): an unusable file is reported when a command connects,
    # so a stale KADMIN_ZK_CA never stops a command that works offline.
    return typer.Option(flag, envvar=envvar, show_envvar=True, rich_help_panel=_SECURITY,
                        help=help)


@app.callback()
def zookeeper_security(
    auth_file: Annotated[Path | None, typer.Option(
        "--zk-auth-file", rich_help_panel=_SECURITY,
        help="File holding digest:user:password, to authenticate with ZooKeeper's digest scheme "
             "(or put that value in KADMIN_ZK_AUTH). Never a value on the command line: it would "
             "show in ps.")] = None,
    sasl_file: Annotated[Path | None, typer.Option(
        "--zk-sasl-file", rich_help_panel=_SECURITY,
        help='JSON file of SASL options (or put the JSON in KADMIN_ZK_SASL): {"mechanism": '
             '"DIGEST-MD5", "username": ..., "password": ...} or {"mechanism": "GSSAPI", '
             '"service": "zookeeper", "principal": ...} (Kerberos ticket cache).')] = None,
    tls: Annotated[bool, typer.Option(
        "--zk-tls", envvar="KADMIN_ZK_TLS", show_envvar=True, rich_help_panel=_SECURITY,
        help="Connect with TLS (ZooKeeper's secureClientPort); the server's certificate is "
             "verified, host name included.")] = False,
    ca: Annotated[Path | None, _pem_file(
        "--zk-ca", "KADMIN_ZK_CA",
        "PEM CA bundle for the server's certificate (default: the system's).")] = None,
    cert: Annotated[Path | None, _pem_file(
        "--zk-cert", "KADMIN_ZK_CERT",
        "PEM client certificate, for servers that require one (with --zk-key).")] = None,
    key: Annotated[Path | None, _pem_file(
        "--zk-key", "KADMIN_ZK_KEY", "Unencrypted PEM key of --zk-cert.")] = None,
    acl: Annotated[bool, typer.Option(
        "--zk-acl", envvar="KADMIN_ZK_ACL", show_envvar=True, rich_help_panel=_SECURITY,
        help="Create znodes with Kafka's secure ACL (all rights for the creator, read for "
             "everyone). Done anyway under a parent that is not world-writable.")] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", help="Say on stderr what kadmin notices on the way, such as a ZooKeeper "
                          "server before 3.6 that makes it read znode by znode.")] = False,
) -> None:
    use_security_options(SecuritySources(auth_file, sasl_file, tls, ca, cert, key, acl))
    use_verbose(verbose)


def command_tree() -> Any:
    """The Click command Typer builds from ``app``, with the old spellings of renamed options
    (hidden): what ``kadmin`` runs, and what tests walk."""
    root = typer.main.get_command(app)
    add_old_spellings(root)
    return root


def report(error: KadminError) -> int:
    err.print(f"kadmin: error: {error}", markup=False)
    for line in error.details:
        err.print(f"  {line}", markup=False)
    if error.more:
        err.print(f"  {and_more(error.more)}", markup=False)
    return error.exit_code


def _usage_error(error: Exception) -> str | None:
    """One line for a Click usage error (unknown option, bad value, missing argument), or None
    for anything else. Recognised by Click's documented ClickException interface, not by class:
    Typer 0.2x raises the errors of a private copy of Click, earlier releases Click's own."""
    message = getattr(error, "format_message", None)
    if not callable(message) or not isinstance(getattr(error, "exit_code", None), int):
        return None
    ctx = getattr(error, "ctx", None)
    where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    if type(error).__name__ == "NoArgsIsHelpError":  # a group without its command
        text = str(message()).strip()  # empty when Typer has printed the help already
        return text or f"kadmin: error: missing command{where}"
    return f"kadmin: error: {' '.join(str(message()).split())}{where}"


EXIT_OUTPUT_CLOSED = 128 + 13
"""Exit code when the reader of kadmin's output went away (``kadmin status | head -1``): what a
shell reports for a tool killed by SIGPIPE, so ``set -o pipefail`` still sees that kadmin did
not finish (a cut ``plan validate`` must not pass as valid)."""


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: every outcome becomes one of the documented exit codes and,
    for a failure, one line (Click's usage errors included, instead of its boxed usage text).
    A closed output ends quietly with EXIT_OUTPUT_CLOSED."""
    try:
        _main(argv)
    except (OutputClosed, BrokenPipeError):
        # Python flushes stdout once more at exit and would complain on stderr: both go to
        # /dev/null (the recipe of Python's signal documentation)
        devnull = os.open(os.devnull, os.O_WRONLY)
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                os.dup2(devnull, stream.fileno())
        sys.exit(EXIT_OUTPUT_CLOSED)


def _main(argv: list[str] | None) -> None:
    try:
        code = command_tree().main(args=argv, prog_name="kadmin", standalone_mode=False)
    except KadminError as error:
        sys.exit(report(error))
    except KeyboardInterrupt:  # outside the command (Click maps one inside it to exit 130)
        code = 130
    except typer.Abort:  # end of input at a confirmation prompt
        err.print("kadmin: aborted; nothing more was done")
        sys.exit(1)
    except (OutputClosed, BrokenPipeError):
        raise  # not an error: see main
    except Exception as error:  # the last line of defence of the error contract
        usage = _usage_error(error)
        if usage is not None:
            err.print(usage, markup=False)
            sys.exit(getattr(error, "exit_code", 2))
        if os.environ.get("KADMIN_DEBUG"):
            raise
        err.print(f"kadmin: internal error: {type(error).__name__}: {error} "
                  "(set KADMIN_DEBUG=1 for a traceback)", markup=False)
        sys.exit(1)
    if code == 130:  # Ctrl-C
        err.print(interrupted_line(sys.argv[1:] if argv is None else argv), markup=False)
    sys.exit(code if isinstance(code, int) else 0)


_RESUMING = {"reassign": "run the same command again to resume",
             "elect": "run the same command again to finish the election",
             "topics delete": "topics already queued in /admin/delete_topics are deleted all "
                              "the same (see kadmin status)",
             "throttle": "see what is in force with kadmin throttle show"}
"""What Ctrl-C leaves behind for the commands that change the cluster as they go; every other
command writes its files whole or not at all, so an interrupted one wrote nothing."""

_GLOBAL_OPTIONS_WITH_VALUE = frozenset({"--zk-auth-file", "--zk-sasl-file", "--zk-ca",
                                        "--zk-cert", "--zk-key"})


def interrupted_line(argv: list[str]) -> str:
    """The one line for Ctrl-C: what the interrupted command left, and whether running it
    again resumes (only ``reassign`` and ``elect`` do)."""
    words: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg in _GLOBAL_OPTIONS_WITH_VALUE:
            next(args, None)
        elif arg.startswith("-"):
            if words:
                break
        else:
            words.append(arg)
            if len(words) == 2:
                break
    command = " ".join(words)
    for name, advice in _RESUMING.items():
        if command == name or command.startswith(name + " "):
            return f"kadmin: interrupted; {advice}"
    return "kadmin: interrupted; nothing was written"
