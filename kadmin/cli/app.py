"""The ``kadmin`` command: one Typer app per command group, and the error contract.

Every failure reaches the operator as one line (plus one line per partition or problem where
there are several) and an exit code: 1 failed, 2 invalid input (Click's usage errors included),
3 conflict, 130 interrupted. A Python traceback is never shown unless KADMIN_DEBUG=1.
"""

from __future__ import annotations

import importlib
import os
import sys
from contextlib import suppress
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from kadmin import __version__
from kadmin.cli.aliases import add_old_spellings
from kadmin.cli.common import OutputClosed, err, use_verbose
from kadmin.model import KadminError, and_more
from kadmin.operations.source import use_security_options
from kadmin.zk.security import SecuritySources

COMMANDS: dict[str, tuple[str, str, str]] = {
    "status": ("kadmin.cli.status", "status",
               "Controller, live brokers, partition health, admin work in progress and the "
               "spread per broker."),
    "reassign": ("kadmin.cli.reassign", "reassign",
                 "Execute a reassignment plan in batches and wait until the controller has "
                 "finished."),
    "verify": ("kadmin.cli.verify", "verify",
               "Report each partition of a plan as complete, in progress, not started or "
               "failed."),
    "elect": ("kadmin.cli.elect", "elect",
              "Run a preferred replica election and report the partitions still not led by "
              "their preferred replica."),
    "sandbox": ("kadmin.cli.sandbox", "sandbox",
                "Run an embedded ZooKeeper loaded with a cluster and a simulated Kafka "
                "controller, to rehearse plans."),
    "demo": ("kadmin.cli.demo", "demo",
             "The main job end to end on a sandbox cluster that just got a new broker."),
    "plan": ("kadmin.cli.plan", "app", "Generate, validate and inspect plan files."),
    "cluster": ("kadmin.cli.cluster", "app", "Read a cluster."),
    "topics": ("kadmin.cli.topics", "app", "Topic operations."),
    "zk": ("kadmin.cli.zk", "app", "Embedded ZooKeeper."),
    "spark": ("kadmin.cli.spark", "app", "Plan at scale with PySpark."),
    "throttle": ("kadmin.cli.throttle", "app", "Replication throttles: show, set, clear."),
}
"""Every command: name -> (its module, the Typer app or function there, its one-line help).
A command's module is imported when that command runs or shows its help, never for another
one: ``kadmin --help`` and ``kadmin plan validate`` do not pay for kazoo, numpy or Spark."""

_GROUPS = frozenset(name for name, (_, attribute, _) in COMMANDS.items() if attribute != name)
"""The commands that are groups of commands (their module's Typer app): ``plan``, ``cluster``..."""


def load_command(name: str) -> Any:
    """The Click command of ``name`` (one of :data:`COMMANDS`), its module imported now, with
    the old spellings of its renamed options (hidden)."""
    module, attribute, short_help = COMMANDS[name]
    found = getattr(importlib.import_module(module), attribute)
    if isinstance(found, typer.Typer):
        command = typer.main.get_group(found)
    else:
        single = typer.Typer(rich_markup_mode=None)
        single.command(name)(found)
        command = typer.main.get_command(single)
    command.name, command.short_help = name, short_help
    add_old_spellings(command, name)
    return command


class LazyCommands(TyperGroup):
    """The root command: lists :data:`COMMANDS` from the table, loads one when it is used."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(load_command(cmd_name), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        width = formatter.width - 6 - max(len(name) for name in COMMANDS)
        with formatter.section("Commands"):
            formatter.write_dl([(name, _shortened(short, width))
                                for name, (_, _, short) in COMMANDS.items()])


def _shortened(text: str, width: int) -> str:
    """``text`` cut at a word to fit ``width``, as Click shortens a command's help."""
    return text if len(text) <= width else text[:width - 3].rsplit(" ", 1)[0] + "..."


app = typer.Typer(
    name="kadmin",
    cls=LazyCommands,
    help="Plan, validate and execute Kafka admin operations (partition reassignment, preferred "
         "replica election, topic deletion) through ZooKeeper.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_SECURITY = "ZooKeeper security (every command that connects)"


def _pem_file(flag: str, envvar: str, help: str) -> Any:
    # Not checked here (exists=True): an unusable file is reported when a command connects,
    # so a stale KADMIN_ZK_CA never stops a command that works offline.
    return typer.Option(flag, envvar=envvar, show_envvar=True, rich_help_panel=_SECURITY,
                        help=help)


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"kadmin {__version__}")
        raise typer.Exit()


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
    version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_print_version,
        help="Print kadmin's version and exit.")] = False,
) -> None:
    use_security_options(SecuritySources(auth_file, sasl_file, tls, ca, cert, key, acl))
    use_verbose(verbose)


def command_tree(*, every_command: bool = True) -> Any:
    """The Click command Typer builds from ``app``: what ``kadmin`` runs, each command loaded
    when used, or (``every_command``, what tests walk) with every command loaded."""
    root = typer.main.get_command(app)
    if every_command:
        for name in COMMANDS:
            root.get_command(None, name)
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
        return f"kadmin: error: missing command{where}"
    option = getattr(error, "option_name", None)
    if type(error).__name__ == "NoSuchOption" and option in ROOT_OPTIONS and ctx is not None:
        return (f"kadmin: error: {option} is an option of kadmin itself: it goes before the "
                f"command (kadmin {option}{' ...' if option in _GLOBAL_OPTIONS_WITH_VALUE else ''}"
                f" {ctx.command_path.removeprefix('kadmin ')} ...)")
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
        code = command_tree(every_command=False).main(args=argv, prog_name="kadmin",
                                                      standalone_mode=False)
    except KadminError as error:
        sys.exit(report(error))
    except KeyboardInterrupt:  # outside the command (Click maps one inside it to exit 130)
        code = 130
    except typer.Abort:  # end of input at a confirmation prompt
        err.print("kadmin: aborted; nothing more was done")
        sys.exit(1)
    except (OutputClosed, BrokenPipeError):
        raise  # not an error: see main
    except ModuleNotFoundError as error:
        library = (error.name or "").split(".")[0]
        if library not in _EXTRAS:
            raise
        words = " ".join(command_words(sys.argv[1:] if argv is None else argv))
        err.print(f"kadmin: error: {words or 'this command'} needs {library}, which the plain "
                  f"install leaves out: pip install 'kadmin[{_EXTRAS[library]}]'", markup=False)
        sys.exit(1)
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

_EXTRAS = {"scipy": "plan", "ortools": "plan", "pyspark": "spark"}
"""The extras that bring a library a command may need: the plain install (the pre-commit hook's)
leaves them out."""

_GLOBAL_OPTIONS_WITH_VALUE = frozenset({"--zk-auth-file", "--zk-sasl-file", "--zk-ca",
                                        "--zk-cert", "--zk-key"})
ROOT_OPTIONS = _GLOBAL_OPTIONS_WITH_VALUE | {"--zk-tls", "--zk-acl", "--verbose", "--version"}
"""The options of ``kadmin`` itself, which go before the command."""


def command_words(argv: list[str]) -> list[str]:
    """The command's words in ``argv`` (``plan rebalance``), the root's options skipped."""
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
            if len(words) == 2 or arg not in _GROUPS:
                break
    return words


def interrupted_line(argv: list[str]) -> str:
    """The one line for Ctrl-C: what the interrupted command left, and whether running it
    again resumes (only ``reassign`` and ``elect`` do)."""
    command = " ".join(command_words(argv))
    for name, advice in _RESUMING.items():
        if command == name or command.startswith(name + " "):
            return f"kadmin: interrupted; {advice}"
    return "kadmin: interrupted; nothing was written"
