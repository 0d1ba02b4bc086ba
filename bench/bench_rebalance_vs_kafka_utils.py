"""Benchmark: `kadmin plan rebalance` against Yelp's kafka-utils on the same clusters.

Each scenario's cluster is loaded into a real ZooKeeper (kadmin's sandbox); both tools read it
from there and write a plan file, and both plans are judged with kadmin's own metrics (spec
section 7) against the same snapshot: wall time (process start to exit, reading ZooKeeper
included), replica moves against the lower bound, replica / preferred-leader / worst-topic spread
before and after, leader changes, and whether the plan is valid (no broker twice, replication
factors kept, every replica on a target broker, no partition losing rack diversity).

kafka-utils (PyPI ``kafka-utils``, pinned below) is installed into its own virtualenv under
bench/out/ (git-ignored) on the first run; it runs on Python 3.11 unpatched. It is run as an
operator would, with ``--max-partition-movements`` and ``--max-leader-changes`` raised so that its
plan is complete (their defaults, 1 and 5, make a plan of a few partitions), without ``--apply``
(it only writes the plan file), and with a replication-group parser that reads each broker's rack
from its znode when the cluster has racks (its default puts every broker in one group).

Brokers of different sizes (scenario ``capacity``): kadmin reads them with ``--capacity``;
kafka-utils has no notion of broker capacity (it balances replica counts evenly), so its plan
is judged by how far each broker's replicas and preferred leaders end from the floor or ceiling
of the broker's capacity share (docs/balancing.md: ``R * w_b / sum(w)``), the "share error"; its
spreads are not the goal there and are not judged.

Run: python bench/bench_rebalance_vs_kafka_utils.py
       [--scenarios add,drain,...] [--partitions 2000] [--big-partitions 10000]
       [--kafka-utils-timeout 1200] [--no-append]
Appends a section to bench/RESULTS.md (unless --no-append) and prints the same tables.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from pathlib import Path

from kadmin import files, plans, synthetic
from kadmin.balance.metrics import Balance, balance, leader_changes, replica_moves
from kadmin.balance.rebalance import replica_quota
from kadmin.balance.table import PartitionTable
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    PartitionMove,
    PlanKind,
    ReassignmentPlan,
    Replicas,
    TopicAssignment,
)
from kadmin.placement import PlacementOptions, Strategy, place
from kadmin.sandbox import Sandbox

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import append_results, describe_machine  # noqa: E402

KAFKA_UTILS_VERSION = "4.1.0"
VENV = HERE / "out" / "kafka-utils-venv"
MANAGER = VENV / "bin" / "kafka-cluster-manager"
UNLIMITED = str(10**9)
"""--max-partition-movements / --max-leader-changes: no partial plans."""

RACK_PARSER = '''\
"""Written by bench_rebalance_vs_kafka_utils.py: a broker's replication group is its rack."""
from kafka_utils.kafka_cluster_manager.cluster_info.replication_group_parser import (
    ReplicationGroupParser,
)


class RackGroupParser(ReplicationGroupParser):
    def get_replication_group(self, broker):
        return (broker.metadata or {}).get("rack")
'''


# --- kafka-utils -------------------------------------------------------------------------------


def ensure_kafka_utils() -> Path:
    """kafka-cluster-manager from its own virtualenv, installed on the first run."""
    stamp = VENV / "kafka-utils-version"
    if MANAGER.exists() and stamp.exists() and stamp.read_text().strip() == KAFKA_UTILS_VERSION:
        return MANAGER
    print(f"installing kafka-utils {KAFKA_UTILS_VERSION} into {VENV} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run([str(VENV / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                    f"kafka-utils=={KAFKA_UTILS_VERSION}"], check=True)
    # it needs no patch on Python 3.11: a --help run proves the imports work
    subprocess.run([str(MANAGER), "--help"], check=True, stdout=subprocess.DEVNULL)
    stamp.write_text(KAFKA_UTILS_VERSION + "\n")
    return MANAGER


def kafka_utils_command(work: Path, zk: str, scenario: Scenario, plan: Path) -> list[str]:
    (work / "bench.yaml").write_text(
        "clusters:\n"
        "  sandbox:\n"
        "    broker_list: ['localhost:9092']\n"
        f"    zookeeper: '{zk}'\n"
        "local_config:\n"
        "  cluster: sandbox\n")
    command = [str(MANAGER), "--cluster-type", "bench", "--cluster-name", "sandbox",
               "--discovery-base-path", str(work), "--write-to-file", str(plan)]
    if scenario.racks:
        (work / "rack_group_parser.py").write_text(RACK_PARSER)
        command += ["--group-parser", f"{work}:rack_group_parser"]
    if scenario.remove:
        command += ["decommission", *map(str, scenario.remove)]
    else:
        command += ["rebalance", "--replication-groups", "--brokers", "--leaders"]
    return [*command, "--max-partition-movements", UNLIMITED, "--max-leader-changes", UNLIMITED]


def kadmin_command(zk: str, scenario: Scenario, plan: Path) -> list[str]:
    command = [sys.executable, "-m", "kadmin", "plan", "rebalance", "-z", zk, "--out", str(plan),
               "--force", "--json"]
    if scenario.capacities is not None:
        capacity = plan.with_name("capacity.json")
        capacity.write_text(json.dumps({str(b): w for b, w in scenario.capacities.items()}))
        command += ["--capacity", str(capacity)]
    if scenario.remove:
        command += ["--remove-brokers", ",".join(map(str, scenario.remove))]
    return [*command, *scenario.kadmin_args]


# --- scenarios ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    snapshot: ClusterSnapshot
    remove: tuple[int, ...] = ()
    """Brokers to drain (kafka-utils ``decommission``, kadmin ``--remove-brokers``)."""
    kadmin_args: tuple[str, ...] = ()
    """Options kadmin gets beyond the common ones (kafka-utils has no equivalent)."""
    capacities: Mapping[int, int] | None = None
    """Bytes of disk per broker: kadmin gets them as ``--capacity``, and plans are judged by
    their share error instead of their spreads."""

    @property
    def racks(self) -> bool:
        return any(b.rack is not None for b in self.snapshot.brokers.values())

    @property
    def targets(self) -> list[int]:
        return sorted(set(self.snapshot.brokers) - set(self.remove))

    @property
    def rack_of(self) -> dict[int, str] | None:
        if not self.racks:
            return None
        return {b.id: b.rack for b in self.snapshot.brokers.values() if b.rack is not None}


def brokers(count: int, racks: int = 0) -> dict[int, Broker]:
    return {b: Broker(b, f"broker-{b}", 9092, f"r{b % racks}" if racks else None)
            for b in range(count)}


def kafka_placed(registered: Mapping[int, Broker], holders: Sequence[int],
                 shape: Mapping[str, tuple[int, int]]) -> ClusterSnapshot:
    """Topics ``name -> (partitions, replication factor)`` placed by Kafka's own rule
    (AdminUtils, rack-aware when the brokers have racks) over ``holders`` only, as topics created
    before the other registered brokers joined: a balanced cluster as Kafka makes them."""
    current = {name: {p: (0,) * rf for p in range(n)} for name, (n, rf) in shape.items()}
    topics = place(current, sorted(current), [registered[b] for b in holders],
                   PlacementOptions(strategy=Strategy.KAFKA))
    return ClusterSnapshot(brokers=dict(registered), topics=topics, controller=0,
                           controller_epoch=1)


def uniform(topics: int, partitions: int, rf: int = 3) -> dict[str, tuple[int, int]]:
    return {f"topic-{i:05d}": (partitions, rf) for i in range(topics)}


def mixed_rf(partitions_total: int, n_brokers: int) -> ClusterSnapshot:
    """Skewed (kadmin.synthetic) topics of replication factors 1 to 5, a fifth of each."""
    per_rf = partitions_total // 5 // 20
    topics: dict[str, TopicAssignment] = {}
    for rf in range(1, 6):
        part = synthetic.synthetic_cluster(brokers=n_brokers, topics=per_rf, partitions=20,
                                           replication_factor=rf, seed=rf, topic_prefix=f"rf{rf}")
        topics.update(part.topics)
    return ClusterSnapshot(brokers=brokers(n_brokers), topics=topics, controller=0,
                           controller_epoch=1)


def scenarios(partitions: int, big: int) -> dict[str, Callable[[], Scenario]]:
    """The clusters of the comparison, built lazily (the big one takes a while to load)."""
    topics, big_topics = partitions // 20, big // 20
    return {
        "add": lambda: Scenario(
            "add", f"add 1 broker: {partitions:,} partitions (RF 3) balanced on 11 brokers, "
                   "broker 11 new",
            kafka_placed(brokers(12), range(11), uniform(topics, 20))),
        "drain": lambda: Scenario(
            "drain", f"drain 1 broker: {partitions:,} partitions (RF 3) balanced on 12 brokers, "
                     "decommission broker 11",
            kafka_placed(brokers(12), range(12), uniform(topics, 20)), remove=(11,)),
        "skew": lambda: Scenario(
            "skew", f"skewed: kadmin.synthetic, {partitions:,} partitions (RF 3) on 12 brokers "
                    "(topics created as the cluster grew)",
            synthetic.synthetic_cluster(brokers=12, topics=topics, partitions=20,
                                        replication_factor=3, seed=1)),
        "grown": lambda: Scenario(
            "grown", f"grown 3x: {partitions:,} partitions (RF 3) balanced on 4 brokers, "
                     "8 new (4 -> 12)",
            kafka_placed(brokers(12), range(4), uniform(topics, 20))),
        "mixed-rf": lambda: Scenario(
            "mixed-rf", f"mixed replication factors 1..5: {partitions:,} skewed partitions "
                        "(kadmin.synthetic), 12 brokers",
            mixed_rf(partitions, 12)),
        "mixed-rf-spread1": lambda: Scenario(
            "mixed-rf-spread1", f"mixed replication factors 1..5: {partitions:,} partitions "
                                "(100 topics, Kafka-placed) on 8 brokers, 4 new; kadmin with "
                                "--topic-spread 1 (docs/balancing.md: 2,000 moves reach spread 1)",
            kafka_placed(brokers(12), range(8), {f"topic-{i:05d}": (partitions // 100, 1 + i % 5)
                                                 for i in range(100)}),
            kadmin_args=("--topic-spread", "1")),
        "racks": lambda: Scenario(
            "racks", f"racks: {partitions:,} partitions (RF 3) balanced rack-aware on 9 brokers "
                     "in 3 racks, 3 new (one per rack)",
            kafka_placed(brokers(12, racks=3), range(9), uniform(topics, 20))),
        "capacity": lambda: Scenario(
            "capacity", f"brokers of two sizes: {partitions:,} partitions (RF 3) balanced on 8 "
                        "brokers of 1 TB, 4 new of 2 TB; kadmin with --capacity (kafka-utils "
                        "has no capacity notion)",
            kafka_placed(brokers(12), range(8), uniform(topics, 20)),
            capacities={b: (2 if b >= 8 else 1) * 10**12 for b in range(12)}),
        "big": lambda: Scenario(
            "big", f"time: skewed like skew, {big:,} partitions (RF 3) on 12 brokers",
            synthetic.synthetic_cluster(brokers=12, topics=big_topics, partitions=20,
                                        replication_factor=3, seed=1)),
    }


# --- judging a plan ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    seconds: float | None
    """Wall time; None when the tool failed or timed out (``failure`` says which)."""
    moves: int = 0
    leader_changes: int = 0
    partitions: int = 0
    """Partitions in the plan file."""
    after: Balance | None = None
    problems: tuple[str, ...] = ()
    failure: str | None = None
    reported: Mapping[str, object] | None = None
    """kadmin's own --json summary."""
    share_error: tuple[int, int] | None = None
    """With capacities: replicas and preferred leaders of the broker furthest from the floor
    or ceiling of its capacity share (0: every broker within its share)."""


def evaluate(scenario: Scenario, table: PartitionTable, plan_file: Path | None) -> Figures:
    """A plan file (Kafka's reassignment format, which both tools write) applied to the
    snapshot, judged over the scenario's target brokers. No file means no change."""
    moves: tuple[PartitionMove, ...] = ()
    problems: list[str] = []
    if plan_file is not None and plan_file.exists():
        doc = files.read_json(plan_file)
        # the document's own errors stop here; the cluster's (a changed replication factor,
        # an unregistered broker) are counted as problems of a plan still worth measuring
        parsed = plans.parse_plan(doc, PlanKind.REASSIGN)
        assert isinstance(parsed, ReassignmentPlan)
        moves = parsed.moves
        problems += [str(p) for p in plans.validate(doc, PlanKind.REASSIGN,
                                                    scenario.snapshot).errors]
    index = {table.tp(i): i for i in range(len(table))}
    changed: dict[int, Replicas] = {index[m.tp]: m.replicas for m in moves if m.tp in index}
    after = list(table.replicas)
    for i, members in changed.items():
        after[i] = members
    targets = set(scenario.targets)
    off_target = sum(1 for i in changed if not targets.issuperset(after[i]))
    if off_target:
        problems.append(f"{off_target} partition(s) keep a replica off the target brokers")
    rack_of = scenario.rack_of
    if rack_of:
        lost = sum(1 for i, members in changed.items()
                   if len({rack_of.get(b) for b in members})
                   < len({rack_of.get(b) for b in table.replicas[i]}))
        if lost:
            problems.append(f"{lost} partition(s) lose rack diversity")
    figures = balance(after, table.topic_of, table.topics, scenario.targets)
    return Figures(
        seconds=None, moves=replica_moves(table.replicas, changed),
        leader_changes=leader_changes(table.replicas, changed), partitions=len(moves),
        after=figures, problems=tuple(problems),
        share_error=None if scenario.capacities is None else (
            share_error(figures.replicas, scenario.capacities),
            share_error(figures.leaders, scenario.capacities)))


def share_error(counts: Mapping[int, int], capacities: Mapping[int, int]) -> int:
    """How far the broker furthest from its capacity share ends from it: the distance of its
    count from the floor..ceiling of ``total * w_b / sum(w)`` (docs/balancing.md)."""
    total, whole = sum(counts.values()), sum(capacities[b] for b in counts)
    worst = 0
    for b, n in counts.items():
        share = Fraction(total * capacities[b], whole)
        worst = max(worst, math.floor(share) - n, n - math.ceil(share))
    return worst


@dataclass(frozen=True)
class Run:
    seconds: float | None
    failure: str | None


def timed(command: list[str], log: Path, timeout: float, env: Mapping[str, str] | None = None
          ) -> Run:
    """Run ``command`` with stdout to ``log`` and stderr to ``log``.err (kafka-utils logs the
    whole plan there: files, not pipes, so a big plan never blocks it)."""
    errors = log.with_suffix(".err")
    start = time.perf_counter()
    with log.open("w") as out, errors.open("w") as err:
        try:
            done = subprocess.run(command, stdout=out, stderr=err, timeout=timeout, env=env,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return Run(None, f"timed out after {timeout:.0f} s")
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        text = log.read_text(errors="replace") + errors.read_text(errors="replace")
        tail = [line[:200] for line in text.strip().splitlines()[-3:]]
        return Run(None, f"exit {done.returncode}: " + " / ".join(tail))
    return Run(elapsed, None)


def run_tool(name: str, command: list[str], scenario: Scenario, table: PartitionTable, work: Path,
             plan: Path, timeout: float, env: Mapping[str, str] | None = None) -> Figures:
    print(f"  {name}: {' '.join(command)}", flush=True)
    run = timed(command, work / f"{name}.log", timeout, env)
    if run.failure is not None:
        print(f"  {name}: {run.failure}", flush=True)
        return Figures(None, failure=run.failure)
    figures = evaluate(scenario, table, plan)
    reported = None
    if name == "kadmin":  # its --json summary, shown beside the figures measured here
        try:
            reported = json.loads((work / f"{name}.log").read_text())
        except ValueError:
            reported = None
    print(f"  {name}: {run.seconds:.1f} s, {figures.moves} moves", flush=True)
    return Figures(run.seconds, figures.moves, figures.leader_changes, figures.partitions,
                   figures.after, figures.problems, None, reported, figures.share_error)


@dataclass(frozen=True)
class Outcome:
    scenario: Scenario
    lower_bound: int
    before: Balance
    results: dict[str, Figures]


def run_scenario(scenario: Scenario, timeout: float) -> Outcome:
    snapshot = scenario.snapshot
    table = PartitionTable.of(snapshot.topics.items())
    lower_bound = replica_quota(table.replicas, scenario.targets, scenario.rack_of,
                                weights=scenario.capacities).units
    before = balance(table.replicas, table.topic_of, table.topics, scenario.targets)
    print(f"{scenario.key}: {scenario.title}; lower bound {lower_bound}", flush=True)
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    results: dict[str, Figures] = {}
    with tempfile.TemporaryDirectory(prefix=f"kadmin-vs-ku-{scenario.key}-") as tmp, \
            Sandbox(snapshot) as sandbox:
        work = Path(tmp)
        zk = sandbox.connect_string
        ku_plan = work / "kafka-utils-plan.json"
        results["kafka-utils"] = run_tool(
            "kafka-utils", kafka_utils_command(work, zk, scenario, ku_plan), scenario, table,
            work, ku_plan, timeout)
        if sandbox.client.exists("/admin/reassign_partitions"):  # no --apply: it must not
            raise RuntimeError("kafka-utils submitted its plan to the sandbox; the comparison "
                               "needs the plan file only")
        kadmin_plan = work / "kadmin-plan.json"
        results["kadmin"] = run_tool("kadmin", kadmin_command(zk, scenario, kadmin_plan),
                                     scenario, table, work, kadmin_plan, timeout, env)
    return Outcome(scenario, lower_bound, before, results)


# --- report ------------------------------------------------------------------------------------


TOOL_NAMES = {"kafka-utils": f"kafka-utils {KAFKA_UTILS_VERSION}", "kadmin": "kadmin"}
COLUMNS = ("tool", "wall time", "replica moves", "lower bound", "replica spread",
           "leader spread", "worst topic spread", "leader changes", "valid")


def row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"


def scenario_lines(outcome: Outcome) -> list[str]:
    b = outcome.before
    lines = [f"### {outcome.scenario.key}: {outcome.scenario.title}", "",
             row(COLUMNS), row(["---"] * len(COLUMNS)),
             row(["before", "", "", outcome.lower_bound, b.replica_spread, b.leader_spread,
                  b.worst_topic_spread, "", ""])]
    for name, f in outcome.results.items():
        if f.failure is not None or f.after is None:
            lines.append(row([TOOL_NAMES[name], f.failure] + [""] * (len(COLUMNS) - 2)))
            continue
        valid = "yes" if not f.problems else "NO: " + "; ".join(f.problems[:3])
        lines.append(row([TOOL_NAMES[name], f"{f.seconds:.1f} s", f.moves, outcome.lower_bound,
                          f.after.replica_spread, f.after.leader_spread,
                          f.after.worst_topic_spread, f.leader_changes, valid]))
    if outcome.scenario.capacities is not None:
        lines += ["", "Share error (replicas / preferred leaders of the broker furthest from the "
                      "floor or ceiling of its capacity share; 0 is balanced by capacity): "
                  + ", ".join(f"{TOOL_NAMES[name]} {f.share_error[0]} / {f.share_error[1]}"
                              for name, f in outcome.results.items()
                              if f.share_error is not None)]
    kadmin = outcome.results.get("kadmin")
    if kadmin is not None and kadmin.failure is None:
        lines += ["", cross_check(kadmin, outcome.lower_bound)]
    return [*lines, ""]


def cross_check(f: Figures, lower_bound: int) -> str:
    """kadmin's own --json summary against what this benchmark measured from its plan file."""
    if f.reported is None or f.after is None:
        return "kadmin's --json summary: missing or not JSON"
    after = f.reported.get("after")
    after = after if isinstance(after, dict) else {}
    pairs = {"replica_moves": (f.reported.get("replica_moves"), f.moves),
             "lower_bound": (f.reported.get("lower_bound"), lower_bound),
             "leader_changes": (f.reported.get("leader_changes"), f.leader_changes),
             "replica_spread": (after.get("replica_spread"), f.after.replica_spread),
             "leader_spread": (after.get("leader_spread"), f.after.leader_spread),
             "worst_topic_spread": (after.get("worst_topic_spread"),
                                    f.after.worst_topic_spread)}
    wrong = [f"{k} says {said}, measured {measured}" for k, (said, measured) in pairs.items()
             if said != measured]
    return ("kadmin's --json summary agrees with the measured figures" if not wrong
            else "kadmin's --json summary DISAGREES: " + "; ".join(wrong))


def _pair(outcome: Outcome, cell: Callable[[Figures], str], time_cell: bool = False) -> str:
    """A failed run shows as "-", and in the time column as why (its table has the detail)."""
    def one(f: Figures) -> str:
        if f.failure is None:
            return cell(f)
        if not time_cell:
            return "-"
        return f.failure if f.failure.startswith("timed out") else "failed"
    return " / ".join(one(outcome.results[name]) for name in ("kafka-utils", "kadmin"))


def summary_lines(outcomes: Sequence[Outcome]) -> list[str]:
    """One row per scenario, each cell "kafka-utils / kadmin" (what the README quotes)."""
    shares = any(o.scenario.capacities is not None for o in outcomes)
    head = ("scenario", "lower bound", "replica moves", "replica spread", "leader spread",
            "worst topic spread", "wall time", *(("capacity share error",) if shares else ()))
    lines = [row(head), row(["---"] * len(head))]
    for o in outcomes:
        pair = partial(_pair, o)
        lines.append(row([
            o.scenario.key, o.lower_bound, pair(lambda f: str(f.moves)),
            pair(lambda f: str(f.after.replica_spread if f.after else "")),
            pair(lambda f: str(f.after.leader_spread if f.after else "")),
            pair(lambda f: str(f.after.worst_topic_spread if f.after else "")),
            pair(lambda f: f"{f.seconds:.1f} s", time_cell=True),
            *((pair(lambda f: "" if f.share_error is None else
                    f"{f.share_error[0]} (leaders {f.share_error[1]})")
               if o.scenario.capacities is not None else "",) if shares else ())]))
    return [*lines, ""]


FIGURES: tuple[tuple[str, Callable[[Figures, Outcome], float]], ...] = (
    ("wall time", lambda f, o: f.seconds or 0.0),
    ("replica moves", lambda f, o: f.moves),
    ("replica spread", lambda f, o: f.after.replica_spread if f.after else 0),
    ("leader spread", lambda f, o: f.after.leader_spread if f.after else 0),
    ("worst topic spread", lambda f, o: f.after.worst_topic_spread if f.after else 0),
)


SHARE_FIGURES: tuple[tuple[str, Callable[[Figures, Outcome], float]], ...] = (
    ("replica share error", lambda f, o: f.share_error[0] if f.share_error else 0),
    ("leader share error", lambda f, o: f.share_error[1] if f.share_error else 0),
)
"""With capacities, what replaces the spreads: how far from its capacity share a broker ends."""


def verdicts(outcome: Outcome) -> tuple[list[str], list[str]]:
    """The figures on which kadmin does not beat kafka-utils: losses and ties that leave room
    (first), and ties where neither tool can do better (second: moves at the lower bound, a
    replica or leader spread of at most 1, which the spec calls balanced, a topic spread of 0).
    """
    ku, ka = outcome.results["kafka-utils"], outcome.results["kadmin"]
    key = outcome.scenario.key
    if ka.failure is not None:
        return [f"{key}: kadmin failed ({ka.failure})"], []
    notes = [f"{key}: kadmin's plan is invalid: {'; '.join(ka.problems)}"] if ka.problems else []
    if ka.moves > outcome.lower_bound:
        notes.append(f"{key}: kadmin moves {ka.moves} > lower bound {outcome.lower_bound}")
    optimal: list[str] = []
    if ku.failure is not None:
        return notes, optimal  # kafka-utils made no plan: nothing to compare the figures with
    figures = FIGURES if outcome.scenario.capacities is None else (
        *(f for f in FIGURES if f[0] not in ("replica spread", "leader spread")),
        *SHARE_FIGURES)
    missed = (ku.share_error or (0, 0))[0]
    if outcome.scenario.capacities is not None and missed:
        # kafka-utils' plan misses the capacity shares: moves and topic spreads of a plan that
        # does not reach the goal are no yardstick (kadmin's moves are held to the bound above)
        notes.append(f"{key}: kafka-utils' plan leaves a broker {missed} replica(s) off its "
                     "capacity share: its moves and topic spread are not compared")
        figures = tuple(f for f in figures
                        if f[0] not in ("replica moves", "worst topic spread"))
    for name, value in figures:
        mine, theirs = value(ka, outcome), value(ku, outcome)
        if name == "wall time":
            if mine >= theirs:
                notes.append(f"{key}: {name}: kadmin {mine:.1f} s, kafka-utils {theirs:.1f} s "
                             "(LOSS)")
        elif mine > theirs:
            notes.append(f"{key}: {name}: kadmin {mine}, kafka-utils {theirs} (LOSS)")
        elif mine == theirs:
            best = (mine == outcome.lower_bound if name == "replica moves"
                    else mine <= 1 if name in ("replica spread", "leader spread") else mine == 0)
            (optimal if best else notes).append(f"{key} {name} {mine}" if best
                                                else f"{key}: {name}: tie at {mine}")
    return notes, optimal


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenarios",
                        default="add,drain,skew,grown,mixed-rf,mixed-rf-spread1,racks,capacity,big",
                        help="comma-separated, from: add, drain, skew, grown, mixed-rf, "
                             "mixed-rf-spread1, racks, capacity, big")
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--big-partitions", type=int, default=10000)
    parser.add_argument("--kafka-utils-timeout", type=float, default=1200.0,
                        help="seconds either tool may take on one scenario")
    parser.add_argument("--no-append", action="store_true", help="print only; RESULTS.md untouched")
    args = parser.parse_args()

    builders = scenarios(args.partitions, args.big_partitions)
    chosen = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in builders]
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)}")
    ensure_kafka_utils()
    start = time.perf_counter()
    outcomes = [run_scenario(builders[key](), args.kafka_utils_timeout) for key in chosen]
    total = time.perf_counter() - start

    lines = [f"kafka-utils {KAFKA_UTILS_VERSION} (`kafka-cluster-manager rebalance "
             "--replication-groups --brokers --leaders`, or `decommission` for the drain, "
             "limits raised so the plan is complete; a rack group parser when there are racks) "
             "against `kadmin plan rebalance -z` (with `--remove-brokers` for the drain), each "
             "reading the same cluster from a sandbox ZooKeeper. Wall time is process start to "
             "exit; both plans are judged by kadmin's metrics over the target brokers. Spreads "
             "are max - min per broker; the worst topic spread is the largest over topics. "
             "kafka-utils' plans differ from run to run (it iterates sets of objects that hash "
             "by address), so its figures can move by a few percent between runs; each scenario "
             "shows one run.", ""]
    lines += ["Summary, each cell kafka-utils / kadmin:", "", *summary_lines(outcomes)]
    for outcome in outcomes:
        lines += scenario_lines(outcome)
    judged = [verdicts(o) for o in outcomes]
    notes = [n for found, _ in judged for n in found]
    optimal = [n for _, tied in judged for n in tied]
    lines += ["Where kadmin does not win: " + ("nowhere" if not notes else ""), ""]
    lines += [f"- {n}" for n in notes] + ([""] if notes else [])
    if optimal:
        lines += ["Ties where neither tool can do better: " + ", ".join(optimal) + ".", ""]
    lines.append(f"Whole benchmark: {total:.0f} s.")
    if not args.no_append:
        append_results("plan rebalance vs kafka-utils", describe_machine(), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
