"""``spark-submit kadmin/spark/submit.py [plan|rebalance] --cluster DIR ... --out DIR``: the Spark
planners under Spark's own launcher, with the options of ``kadmin spark plan`` (the default) or
``kadmin spark rebalance``.

A leaf: nothing in kadmin imports this module, and executors never load it (they import
:mod:`kadmin.spark.tasks` and the pure core from the shipped zip), so the command line it runs
closes no import circle and stays out of the executors' imports.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

if __name__ == "__main__" and not __package__:
    # spark-submit runs this file as a script: its own folder, not the repository, is on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def launcher_master() -> str | None:
    """spark-submit's ``--master``, when this process was started by spark-submit."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return None
    from pyspark import SparkConf

    return SparkConf().get("spark.master", None)


def main(argv: Sequence[str] | None = None) -> None:
    """Run ``kadmin spark plan|rebalance ARGS``; without ``--master``, spark-submit's master."""
    from kadmin.cli.app import main as kadmin  # the one grammar of the command line

    args = list(sys.argv[1:] if argv is None else argv)
    command = args.pop(0) if args and args[0] in ("plan", "rebalance") else "plan"
    master = launcher_master()
    if master and not any(a == "--master" or a.startswith("--master=") for a in args):
        args += ["--master", master]
    kadmin(["spark", command, *args])


if __name__ == "__main__":
    main()
