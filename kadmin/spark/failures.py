"""Failures that happen on Spark's executors, told to the operator as one line.

A task that fails on an executor reaches the driver as a ``PythonException`` (or a Py4J error
wrapping one) carrying the executor's whole traceback as text. The one such failure an operator
can fix, and must be told how, is an import that the executors' Python cannot satisfy: a
cluster's executors run their own Python, which has pyspark but not what kadmin's driver has.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from kadmin.model import OperationFailed

_MISSING = re.compile(r"ModuleNotFoundError: No module named '([^'\\]+)'")

SHIP_AN_ENVIRONMENT = (
    "ship an environment with the job: pack a virtualenv that has kadmin's dependencies (venv-pack -o "
    "env.tar.gz) and run spark-submit --archives env.tar.gz#env with PYSPARK_PYTHON=./env/bin/"
    "python (README: Spark on a cluster)")


def missing_on_executors(error: BaseException) -> OperationFailed | None:
    """The one-line error for a Spark failure caused by an import that failed on an executor,
    or None for any other error (a driver-side import error included: that is no executor's)."""
    if isinstance(error, ImportError) or not type(error).__module__.startswith(
            ("pyspark", "py4j")):
        return None
    found = _MISSING.search(str(error))
    if found is None:
        return None
    module = found[1]
    return OperationFailed(f"Spark's executors cannot import {module!r}: their Python lacks it; "
                           + SHIP_AN_ENVIRONMENT)


@contextmanager
def executor_imports() -> Iterator[None]:
    """Run Spark jobs in the block; an import that fails on an executor leaves it as the
    :class:`OperationFailed` of :func:`missing_on_executors` (exit 1), never as Spark's
    traceback."""
    try:
        yield
    except Exception as error:
        failure = missing_on_executors(error)
        if failure is None:
            raise
        raise failure from error
