"""Benchmark: reading a large cluster from a real ZooKeeper.

A synthetic cluster (default 2,000 topics x 100 partitions = 200,000, RF 3, 30 brokers) is loaded
into an embedded ZooKeeper by the sandbox (``--connect`` reads an already loaded one instead).

- the floor: a bare multiRead client (kazoo's client and protocol classes, kadmin's
  ``MultiRead`` request, 250 reads a request, 8 in flight, ``json.loads`` of every payload, no
  validation, no model) fetching the topic znodes and the state znodes;
- ``read_cluster`` through multiRead, and on the fallback path (pipelined single reads, as on a
  server before 3.6; on a sample of topics), as znodes/s with the CPU of kadmin's thread, kazoo's
  I/O thread and the ZooKeeper JVM;
- ``kadmin cluster snapshot -z ... --out`` and ``kadmin status -z ...`` end to end (process
  start to exit) as subprocesses, as ratios to the floor (target: at most 3x);
- ``--tune``: reads per request x requests in flight, on the state znodes (how MAX_OPS and
  WINDOW were chosen).

Run: python bench/bench_zk_read.py [--topics 2000] [--partitions 100] [--repeat 2] [--tune]
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient
from kazoo.protocol.serialization import GetChildren, GetData

from kadmin.sandbox import Sandbox
from kadmin.snapshots import read_snapshot
from kadmin.synthetic import synthetic_cluster
from kadmin.zk import multiread, paths, reader, session
from kadmin.zk.multiread import MultiRead

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import append_results, describe_machine  # noqa: E402

_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(stat_file: str) -> float:
    """utime + stime of a process or thread from its /proc stat file."""
    with open(stat_file) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _thread_cpu(thread: threading.Thread) -> float:
    return _cpu_seconds(f"/proc/self/task/{thread.native_id}/stat")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def reading_client(connect: str) -> Iterator[tuple[KazooClient, threading.Thread]]:
    """kadmin's client on ``connect`` (chroot included) and its I/O thread."""
    before = set(threading.enumerate())
    client = session.connect(session.ZkSettings(connect))
    io_thread = next(t for t in threading.enumerate() if t not in before and "zk_loop" in t.name)
    try:
        yield client, io_thread
    finally:
        session.close(client)


@dataclass(frozen=True)
class Read:
    seconds: float
    znodes: int
    partitions: int
    main_cpu: float
    io_cpu: float
    jvm_cpu: float


def timed(call: Callable[[], tuple[int, int]], io_thread: threading.Thread,
          jvm_stat: str) -> Read:
    """``call`` returns (znodes read, partitions); with the CPU each side spent."""
    main = threading.main_thread()
    cpu0 = (_thread_cpu(main), _thread_cpu(io_thread), _cpu_seconds(jvm_stat))
    start = time.perf_counter()
    znodes, partitions = call()
    seconds = time.perf_counter() - start
    cpu1 = (_thread_cpu(main), _thread_cpu(io_thread), _cpu_seconds(jvm_stat))
    return Read(seconds, znodes, partitions,
                *(after - before for before, after in zip(cpu0, cpu1, strict=True)))


def read_cluster_counted(client: KazooClient, expected: int | None,
                         topics: Sequence[str] | None = None) -> tuple[int, int]:
    live = reader.read_cluster(client, topics=topics)
    snap = live.snapshot
    states = sum(map(len, snap.states.values()))
    if live.unreadable or (expected is not None and states != expected):
        raise SystemExit(f"incomplete read: {snap.partition_count} partitions, {states} states, "
                         f"unreadable {live.unreadable[:3]}")
    # the first request (7 reads), each broker, each topic, each state
    return 7 + len(snap.brokers) + len(snap.topics) + states, snap.partition_count


def bare_multiread(client: KazooClient, ops: int = 250, window: int = 8,
                   states_only: bool = False) -> tuple[int, int]:
    """The floor: fetch and json.loads the topic znodes, then the state znodes, multiRead only."""
    root = client.chroot or ""

    def fetch(requests: list[Any]) -> Iterator[Any]:
        in_flight: deque[Any] = deque()
        for start in range(0, len(requests), ops):
            result = client.handler.async_result()
            client._call(MultiRead(tuple(requests[start:start + ops]), frozenset()), result)
            in_flight.append(result)
            if len(in_flight) >= window:
                yield from in_flight.popleft().get()[0]
        while in_flight:
            yield from in_flight.popleft().get()[0]

    result = client.handler.async_result()
    client._call(GetChildren(root + paths.BROKER_TOPICS, None), result)
    names = sorted(result.get())
    topics = [json.loads(data) for data in fetch(
        [GetData(root + paths.topic(name), None) for name in names])]
    state_paths = [GetData(root + paths.partition_state(name, int(p)), None)
                   for name, topic in zip(names, topics, strict=True)
                   for p in topic["partitions"]]
    states = [json.loads(data) for data in fetch(state_paths)]
    return 1 + len(topics) + len(states), len(states) if not states_only else 0


def read_line(label: str, reads: Sequence[Read]) -> str:
    best = min(reads, key=lambda r: r.seconds)
    runs = ", ".join(f"{r.seconds:.2f}" for r in reads)
    return (f"- {label}: best of {len(reads)} ({runs} s) **{best.seconds:.2f} s = "
            f"{best.znodes / best.seconds:,.0f} znodes/s**; CPU of that run: kadmin thread "
            f"{best.main_cpu:.1f} s, kazoo I/O thread {best.io_cpu:.1f} s, ZooKeeper JVM "
            f"{best.jvm_cpu:.1f} s")


@dataclass(frozen=True)
class Cli:
    seconds: float
    cpu: float
    jvm_cpu: float


def cli(args: list[str], jvm_stat: str) -> Cli:
    """Wall seconds of ``python -m kadmin ARGS`` (process start to exit) and its CPU."""
    cpu0, jvm0 = _children_cpu(), _cpu_seconds(jvm_stat)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kadmin", *args], check=True,
                   stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    return Cli(seconds, _children_cpu() - cpu0, _cpu_seconds(jvm_stat) - jvm0)


def tune(client: KazooClient, io_thread: threading.Thread, jvm_stat: str) -> list[str]:
    """The floor's state read for reads per request x requests in flight."""
    lines = ["- reads per request x requests in flight (bare multiRead of every topic and "
             "state znode, znodes/s, best of 2):", "",
             "| reads/request | 2 in flight | 4 | 8 | 16 |", "| --- | --- | --- | --- | --- |"]
    for ops in (50, 100, 250, 500, 1000):
        cells = []
        for window in (2, 4, 8, 16):
            runs = [timed(partial(bare_multiread, client, ops, window), io_thread, jvm_stat)
                    for _ in range(2)]
            best = min(runs, key=lambda r: r.seconds)
            cells.append(f"{best.znodes / best.seconds:,.0f}")
        lines.append(f"| {ops} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=2_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--brokers", type=int, default=30)
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--fallback-partitions", type=int, default=50_000,
                        help="partitions read on the fallback path (a sample of topics)")
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--no-record", action="store_true", help="print, do not append to "
                                                                   "RESULTS.md")
    parser.add_argument("--connect", help="an already loaded cluster (host:port/chroot) and "
                                          "the ZooKeeper JVM's pid, as CONNECT@PID")
    args = parser.parse_args()

    total = args.topics * args.partitions
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kadmin-bench-")))
        start = time.perf_counter()
        if args.connect:
            connect, pid = args.connect.rsplit("@", 1)
            jvm = int(pid)
            loaded = "an already loaded server"
        else:
            snapshot = synthetic_cluster(brokers=args.brokers, topics=args.topics,
                                         partitions=args.partitions,
                                         replication_factor=args.replication_factor, seed=1)
            sandbox = stack.enter_context(Sandbox(snapshot))
            assert sandbox.server is not None and sandbox.server.pid is not None
            connect, jvm = sandbox.connect_string, sandbox.server.pid
            loaded = f"embedded ZooKeeper started and loaded in {time.perf_counter() - start:.0f} s"
        jvm_stat = f"/proc/{jvm}/stat"
        lines = [f"- cluster: {args.topics:,} topics x {args.partitions} partitions = {total:,} "
                 f"partitions, RF {args.replication_factor}, {args.brokers} brokers ({loaded}); "
                 f"multiRead: {multiread.MAX_OPS} reads a request, {multiread.WINDOW} in flight"]
        with reading_client(connect) as (client, io_thread):
            floor = [timed(lambda: bare_multiread(client), io_thread, jvm_stat)
                     for _ in range(args.repeat)]
            lines.append(read_line("floor: bare multiRead client, fetch + json.loads of every "
                                   "topic and state znode", floor))
            print(lines[-1], flush=True)
            many = [timed(lambda: read_cluster_counted(client, total), io_thread, jvm_stat)
                    for _ in range(args.repeat)]
            lines.append(read_line("`read_cluster` (brokers, topics, states), multiRead", many))
            print(lines[-1], flush=True)
            sample = sorted(client.get_children(paths.BROKER_TOPICS))[
                :max(1, args.fallback_partitions // args.partitions)]
            multiread._SUPPORT[client] = False
            single = [timed(lambda: read_cluster_counted(client, None, sample), io_thread,
                            jvm_stat)]
            lines.append(read_line(f"same, fallback path (pipelined single reads, a server "
                                   f"before 3.6), {len(sample):,} topics", single))
            print(lines[-1], flush=True)
            multiread._SUPPORT[client] = True
            if args.tune:
                lines += tune(client, io_thread, jvm_stat)
        best_floor = min(r.seconds for r in floor)
        floor_cpu = min(floor, key=lambda r: r.seconds)
        floor_client_cpu = floor_cpu.main_cpu + floor_cpu.io_cpu
        out = tmp / "cluster.json"
        for name, command in (
                ("`kadmin cluster snapshot -z ... --out`",
                 ["cluster", "snapshot", "-z", connect, "--out", str(out), "--force"]),
                ("`kadmin status -z ...`", ["status", "-z", connect])):
            runs = [cli(command, jvm_stat) for _ in range(args.repeat)]
            best = min(runs, key=lambda r: r.seconds)
            ratio = best.seconds / best_floor
            lines.append(
                f"- {name} end to end: best of {len(runs)} "
                f"({', '.join(f'{r.seconds:.2f}' for r in runs)} s) **{best.seconds:.2f} s = "
                f"{ratio:.1f}x the floor** (target <= 3x{'' if total < 1_000_000 else ', < 30 s'}"
                f"): {'PASS' if ratio <= 3 and (total < 1_000_000 or best.seconds < 30) else 'FAIL'}"
                f"; CPU: kadmin process {best.cpu:.1f} s = {best.cpu / floor_client_cpu:.1f}x the "
                f"floor client's {floor_client_cpu:.1f} s, ZooKeeper JVM {best.jvm_cpu:.1f} s")
            print(lines[-1], flush=True)
        written = read_snapshot(out).partition_count
        if written != total:
            raise SystemExit(f"the CLI snapshot has {written} partitions, expected {total}")
    load = os.getloadavg()
    lines.append(f"- load average at the end: {load[0]:.1f} (other helpers share the 2 cores)")
    if not args.no_record:
        append_results(f"ZooKeeper read, {total:,} partitions, multiRead",
                       describe_machine(), lines)


if __name__ == "__main__":
    main()
