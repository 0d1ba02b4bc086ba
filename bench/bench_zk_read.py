"""Benchmark: reading a 200,000-partition cluster from a real ZooKeeper (issue 3).

A synthetic cluster (2,000 topics x 100 partitions, RF 3, 30 brokers) is loaded into an embedded
ZooKeeper by the sandbox (``load_cluster``, with the heap the sandbox sizes for it). Then:

- ``kadmin.zk.reader.read_cluster`` (topics + partition states), ``--repeat`` times, as znodes
  and partitions per second, with the CPU seconds of each side: kadmin's thread (the reader,
  decoding, kazoo's request calls), kazoo's I/O thread, and the ZooKeeper JVM;
- ``kadmin cluster snapshot -z ... --out`` end to end as a subprocess (start-up, read, write);
- one synchronous ``get`` per znode against the same pipelined read, on a sample of state
  znodes: what pipelining buys;
- the same read on a client with kazoo's default handler, which creates a new epoll object per
  ``select`` (kadmin's client uses select(2)): the main cost found by profiling the read.

Run: python bench/bench_zk_read.py [--topics 2000] [--partitions 100] [--brokers 30] [--repeat 3]
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kazoo.client import KazooClient

from kadmin.model import TopicPartition
from kadmin.sandbox import Sandbox
from kadmin.snapshots import read_snapshot
from kadmin.synthetic import synthetic_cluster
from kadmin.zk import codec, paths, reader, session

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


@contextmanager
def reading_client(connect: str, kadmins: bool) -> Iterator[tuple[KazooClient, threading.Thread]]:
    """A started client, kadmin's (``session.new_client``) or kazoo's default, and its I/O
    thread (the thread that appeared when it connected)."""
    before = set(threading.enumerate())
    client = session.new_client(connect, 30) if kadmins else KazooClient(hosts=connect, timeout=30)
    client.start(timeout=30)
    io_thread = next(t for t in threading.enumerate() if t not in before and "zk_loop" in t.name)
    try:
        yield client, io_thread
    finally:
        client.stop()
        client.close()


@dataclass(frozen=True)
class Read:
    seconds: float
    requests: int
    partitions: int
    main_cpu: float
    io_cpu: float
    jvm_cpu: float


def timed_read(client: KazooClient, io_thread: threading.Thread, jvm_pid: int,
               expected_partitions: int) -> Read:
    """One ``read_cluster`` with the CPU each side spent; checks that everything was read."""
    jvm_stat = f"/proc/{jvm_pid}/stat"
    main = threading.main_thread()
    cpu0 = (_thread_cpu(main), _thread_cpu(io_thread), _cpu_seconds(jvm_stat))
    start = time.perf_counter()
    live = reader.read_cluster(client)
    seconds = time.perf_counter() - start
    cpu1 = (_thread_cpu(main), _thread_cpu(io_thread), _cpu_seconds(jvm_stat))
    snap = live.snapshot
    states = sum(map(len, snap.states.values()))
    if live.unreadable or snap.partition_count != expected_partitions or states != expected_partitions:
        raise SystemExit(f"incomplete read: {snap.partition_count} partitions, {states} states, "
                         f"unreadable {live.unreadable[:3]}")
    # 3 child listings (/brokers/ids, /brokers/topics, /admin/delete_topics), each broker, the
    # controller and its epoch, each topic, each state, the two single admin znodes
    requests = 3 + len(snap.brokers) + 2 + len(snap.topics) + states + 2
    return Read(seconds, requests, snap.partition_count,
                *(after - before for before, after in zip(cpu0, cpu1, strict=True)))


def read_line(label: str, reads: Sequence[Read]) -> str:
    best = min(reads, key=lambda r: r.seconds)
    runs = ", ".join(f"{r.seconds:.1f}" for r in reads)
    return (f"- {label}: best of {len(reads)} runs ({runs} s) {best.seconds:.1f} s = "
            f"**{best.requests / best.seconds:,.0f} znodes/s, "
            f"{best.partitions / best.seconds:,.0f} partitions/s**; CPU of that run: kadmin thread "
            f"{best.main_cpu:.1f} s, kazoo I/O thread {best.io_cpu:.1f} s, ZooKeeper JVM "
            f"{best.jvm_cpu:.1f} s")


def rate(call: Callable[[], object], count: int) -> float:
    start = time.perf_counter()
    call()
    return count / (time.perf_counter() - start)


def naive_vs_pipelined(client: KazooClient, sample: list[TopicPartition]) -> tuple[float, float]:
    """State znodes per second, one synchronous get (and decode) at a time vs ``read_states``."""
    def one_by_one() -> None:
        for tp in sample:
            codec.decode_state(client.get(paths.partition_state(tp.topic, tp.partition))[0])

    return rate(one_by_one, len(sample)), rate(lambda: reader.read_states(client, sample),
                                               len(sample))


def cli_snapshot(connect: str, out: Path) -> tuple[float, float]:
    """Wall seconds of `kadmin cluster snapshot -z ... --out` and its peak RSS (MB)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kadmin", "cluster", "snapshot", "-z", connect,
                    "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=2_000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--brokers", type=int, default=30)
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--naive-sample", type=int, default=5_000)
    args = parser.parse_args()

    snapshot = synthetic_cluster(brokers=args.brokers, topics=args.topics,
                                 partitions=args.partitions,
                                 replication_factor=args.replication_factor, seed=1)
    total = snapshot.partition_count
    sample = [TopicPartition(t, p) for t in sorted(snapshot.topics)
              for p in sorted(snapshot.topics[t])][:args.naive_sample]
    start = time.perf_counter()
    with Sandbox(snapshot) as sandbox, tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        loaded = time.perf_counter() - start
        assert sandbox.server is not None and sandbox.server.pid is not None
        jvm = sandbox.server.pid
        with reading_client(sandbox.connect_string, kadmins=True) as (client, io_thread):
            reads = [timed_read(client, io_thread, jvm, total) for _ in range(args.repeat)]
            naive, pipelined = naive_vs_pipelined(client, sample)
        with reading_client(sandbox.connect_string, kadmins=False) as (client, io_thread):
            default_reads = [timed_read(client, io_thread, jvm, total) for _ in range(args.repeat)]
        out = Path(tmp) / "cluster.json"
        cli_seconds, cli_rss = cli_snapshot(sandbox.connect_string, out)
        written = read_snapshot(out).partition_count
        size_mb = out.stat().st_size / 1e6
    if written != total:
        raise SystemExit(f"the CLI snapshot has {written} partitions, expected {total}")

    requests = reads[0].requests
    lines = [
        f"- cluster: {args.topics:,} topics x {args.partitions} partitions = {total:,} "
        f"partitions, RF {args.replication_factor}, {args.brokers} brokers; one read = "
        f"{requests:,} ZooKeeper requests; embedded ZooKeeper started and loaded "
        f"(`load_cluster`) in {loaded:.1f} s",
        read_line("`read_cluster` (topics + states) on kadmin's client (select(2) handler)", reads),
        read_line("same on a client with kazoo's default handler (a new epoll object per select)",
                  default_reads),
        f"- `kadmin cluster snapshot -z ... --out` end to end (process start to exit): "
        f"{cli_seconds:.1f} s = {total / cli_seconds:,.0f} partitions/s, peak RSS "
        f"{cli_rss:.0f} MB, {size_mb:.0f} MB written",
        f"- {len(sample):,} state znodes one synchronous get at a time: {naive:,.0f} znodes/s "
        f"(a full read would take {requests / naive:.0f} s); pipelined `read_states` on the "
        f"same znodes: {pipelined:,.0f} znodes/s = {pipelined / naive:.1f}x",
    ]
    append_results("ZooKeeper read, 200k partitions (issue 3)", describe_machine(), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
