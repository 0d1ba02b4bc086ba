"""What runs on a Spark executor imports only the standard library, PySpark and kadmin's pure
core: a cluster's executors have PySpark and the shipped kadmin.zip, not jsonschema, kazoo, typer,
or rich. Each module is imported in a fresh interpreter where those raise ImportError."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

BLOCKED = ("jsonschema", "kazoo", "typer", "rich", "click", "numpy", "scipy")

EXECUTOR_SIDE = (
    "kadmin.spark.tasks",  # every function the planners hand to Spark
    "kadmin.balance.chunks",  # the rebalancer's rounds, run per chunk in the tasks
    "kadmin.balance.quotas",
    "kadmin.placement",  # the broadcast BrokerRing and the placement a task runs
    "kadmin.snapshots",  # the topics.jsonl line parser the scan runs
    "kadmin.zk.codec",  # the znode entries a task encodes
    "kadmin.plans",  # the package, and its batching, without jsonschema until a document is validated
    "kadmin.plans.batching",
)

_BLOCKER = textwrap.dedent("""
    import importlib.abc
    import sys

    BLOCKED = {blocked!r}

    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{{name}} is not installed on this executor")
            return None

    sys.meta_path.insert(0, Blocker())
""")


def import_blocked(module: str) -> subprocess.CompletedProcess[str]:
    code = _BLOCKER.format(blocked=BLOCKED) + textwrap.dedent(f"""
        import importlib
        importlib.import_module({module!r})
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        assert not loaded, loaded
        print("imported", {module!r})
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("module", EXECUTOR_SIDE)
def test_executor_side_modules_import_without_the_driver_libraries(module: str) -> None:
    run = import_blocked(module)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"imported {module}"


@pytest.mark.parametrize("module", ["kadmin.schema", "kadmin.zk.session", "kadmin.cli.app"])
def test_the_blocker_refuses_what_only_the_driver_imports(module: str) -> None:
    """The control: modules that need the blocked libraries fail under the same finder, so a
    pass above is not the finder letting everything through."""
    run = import_blocked(module)
    assert run.returncode != 0
    assert "is not installed on this executor" in run.stderr
