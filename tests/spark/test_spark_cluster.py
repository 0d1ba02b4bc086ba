"""Both Spark commands on a real Spark cluster: a standalone master and worker on this machine
(loopback, random ports), whose executors run a Python that has pyspark and nothing else, as a
cluster's executors do. kadmin reaches them only through the zip it ships; the plans they make
are byte for byte those of ``local[2]``. An import that fails on an executor reaches the
operator as one line saying how to ship an environment.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import py4j
import pyspark
import pytest
from pyspark.sql import SparkSession

from kadmin import snapshots
from kadmin.model import Broker, ClusterSnapshot, OperationFailed
from kadmin.spark.failures import SHIP_AN_ENVIRONMENT, executor_imports
from kadmin.spark.session import spark_session
from kadmin.synthetic import synthetic_cluster
from tests.helpers import KadminProcesses, eventually

pytestmark = pytest.mark.spark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
START_TIMEOUT = 120.0
"""Seconds a master or worker may take to start on a loaded 2-core machine."""


@pytest.fixture(scope="module")
def executor_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python whose packages are pyspark and py4j alone: a virtualenv without pip and
    without the system's site-packages, the two packages linked into it."""
    venv = tmp_path_factory.mktemp("executor-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True).stdout.strip())
    for package in (pyspark, py4j):
        source = Path(str(package.__file__)).resolve().parent
        (purelib / source.name).symlink_to(source)
    bare = subprocess.run([python, "-c", "import pyspark, py4j\nimport jsonschema"],
                          capture_output=True, text=True, env=_spark_env())
    assert "No module named 'jsonschema'" in bare.stderr, bare.stderr  # pyspark alone
    return python


def _spark_env() -> dict[str, str]:
    """The environment of the cluster's JVMs: this one's without anything that would let a
    Python see this test run's packages, Spark on loopback."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME") and not k.startswith(("PYSPARK_", "KADMIN_"))}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1")
    return env


def _start(log: Path, cls: str, *args: str, cwd: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), cls, *args], cwd=cwd,
                                env=_spark_env(), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the launcher's whole process group (spark-class execs java), then SIGKILL."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _logged(log: Path, pattern: str, process: subprocess.Popen[bytes]) -> re.Match[str]:
    def found() -> re.Match[str] | None:
        assert process.poll() is None, f"{log.name} ended: {log.read_text()[-3000:]}"
        return re.search(pattern, log.read_text(errors="replace"))

    return eventually(found, f"{pattern!r} in {log}", timeout=START_TIMEOUT)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark standalone master and one worker (2 cores) on 127.0.0.1; its master URL."""
    folder = tmp_path_factory.mktemp("standalone")
    conf = folder / "spark.properties"
    conf.write_text("spark.master.rest.enabled false\n")
    started = []
    try:
        master = _start(folder / "master.log", "org.apache.spark.deploy.master.Master",
                        "--host", "127.0.0.1", "--port", "0", "--webui-port", "0",
                        "--properties-file", str(conf), cwd=folder)
        started.append(master)
        url = _logged(folder / "master.log", r"Starting Spark master at (spark://\S+)",
                      master)[1]
        worker = _start(folder / "worker.log", "org.apache.spark.deploy.worker.Worker",
                        "--host", "127.0.0.1", "--port", "0", "--webui-port", "0",
                        "--cores", "2", "--memory", "2g", "--work-dir", str(folder / "work"),
                        "--properties-file", str(conf), url, cwd=folder)
        started.append(worker)
        _logged(folder / "worker.log", r"Successfully registered with master", worker)
        yield url
    finally:
        for process in reversed(started):
            _stop(process)


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot folder: 3,000 partitions on eight brokers, four more brokers just added."""
    old = synthetic_cluster(brokers=8, topics=60, partitions=50, replication_factor=3, racks=0,
                            seed=18)
    brokers = {**old.brokers, **{b: Broker(b, f"broker-{b}", 9092) for b in range(8, 12)}}
    folder = tmp_path_factory.mktemp("grown") / "snap"
    snapshots.write_snapshot(ClusterSnapshot(brokers, old.topics, old.states, old.controller,
                                             old.controller_epoch), folder, fmt="dir")
    return folder


def _folder(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


@pytest.mark.parametrize("command", [
    ("plan", "--all-topics", "--brokers", ",".join(map(str, range(12)))),
    ("rebalance",),
], ids=["plan", "rebalance"])
def test_a_standalone_cluster_whose_executors_have_pyspark_alone_plans_as_local(
        command: tuple[str, ...], standalone: str, executor_python: Path, grown: Path,
        kadmin_process: KadminProcesses, tmp_path: Path) -> None:
    def run(master: str, out: Path, **env: str) -> dict[str, bytes]:
        done = kadmin_process.run("spark", *command, "--cluster", str(grown), "--master",
                                  master, "--out", str(out), timeout=900,
                                  env={"SPARK_LOCAL_IP": "127.0.0.1", **env})
        assert done.returncode == 0, done.stderr[-3000:]
        assert "internal error" not in done.stderr
        return _folder(out)

    on_cluster = run(standalone, tmp_path / "cluster", PYSPARK_PYTHON=str(executor_python))
    # the same executors' Python, and none of this test run's packages (PYTHONPATH): spark
    # rebalance's default objective runs the exact topic program only where the executors
    # have scipy (tests/spark/test_spark_rebalance.py)
    local = run("local[2]", tmp_path / "local", **BARE_LOCAL, PYSPARK_PYTHON=str(executor_python))
    assert on_cluster == local
    assert len(on_cluster) > 1  # the manifest and some batch files: there was work to do


def test_an_import_that_fails_on_an_executor_is_one_line(spark: SparkSession) -> None:
    """What the driver gets from an executor that cannot import a module: one line naming it
    and how to ship an environment, not Spark's traceback."""
    job = spark.sparkContext.parallelize([0], 1).map(
        lambda _: importlib.import_module("kadmin_absent_module"))
    with pytest.raises(OperationFailed) as failed, executor_imports():
        job.collect()
    assert str(failed.value) == (
        "Spark's executors cannot import 'kadmin_absent_module': their Python lacks it; "
        + SHIP_AN_ENVIRONMENT)
    assert "\n" not in str(failed.value)


def test_the_spark_commands_say_it_so(spark: SparkSession) -> None:
    """Every Spark command runs its jobs in ``spark_session``, which reports it."""
    with pytest.raises(OperationFailed, match=r"^Spark's executors cannot import 'kadmin_absent"), \
            spark_session("local[2]") as session:
        session.sparkContext.parallelize([0], 1).map(
            lambda _: importlib.import_module("kadmin_absent_module")).collect()


def test_other_failures_pass_through(spark: SparkSession) -> None:
    with pytest.raises(ModuleNotFoundError), executor_imports():  # the driver's own
        importlib.import_module("kadmin_absent_module")
    job = spark.sparkContext.parallelize([0], 1).map(lambda x: 1 // x)
    with pytest.raises(Exception, match="ZeroDivisionError") as failed, executor_imports():
        job.collect()
    assert not isinstance(failed.value, OperationFailed)


BARE_LOCAL = {"PYTHONPATH": ""}
"""Local workers inherit the driver's environment: without this test run's PYTHONPATH they see
the executor Python's packages alone (the driver, this venv's Python, finds kadmin itself)."""


def test_topic_spread_needs_scipy_on_the_executors(executor_python: Path, grown: Path,
                                                  kadmin_process: KadminProcesses,
                                                  tmp_path: Path) -> None:
    """``--topic-spread`` runs the exact program in the tasks: executors whose Python lacks
    numpy and scipy stop it before any plan, with one line saying how to ship an environment
    (exit 1, nothing written); the default objective goes on with the local topic search and
    says so."""
    env = {"SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": str(executor_python), **BARE_LOCAL}
    out = tmp_path / "out"
    done = kadmin_process.run("spark", "rebalance", "--cluster", str(grown), "--master",
                              "local[2]", "--topic-spread", "1", "--out", str(out),
                              timeout=900, env=env)
    assert done.returncode == 1, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last == ("kadmin: error: --topic-spread runs an exact program (scipy's HiGHS) in "
                    "Spark's tasks, and the executors cannot import 'numpy': "
                    + SHIP_AN_ENVIRONMENT), done.stderr[-3000:]
    assert "Traceback" not in done.stderr and not out.exists()
    done = kadmin_process.run("spark", "rebalance", "--cluster", str(grown), "--master",
                              "local[2]", "--out", str(out), timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert ("the executors cannot import 'numpy': topics are evened by the local search, not "
            "the exact program") in done.stderr
    assert json.loads((out / "manifest.json").read_text())["topic_goal"] is None
