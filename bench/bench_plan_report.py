"""Benchmark: the HTML report of a plan of 1,000,000 partitions (`kadmin plan report`).

Targets: the page stays under 20 MB and renders in headless chromium in under 5 s, measured
from the request of the page to the moment plotly.js has drawn its last chart. The floor,
measured in the same run, is a page of plotly.js and one bar chart (what any Plotly page costs);
the ratio says what the report's own charts add. Also timed: writing the report end to end
(process start to exit), against the floor of reading the snapshot and the plan with json.load.

Cluster: 100,000 topics x 10 partitions, RF 3, 1,000 brokers in 10 racks, long-tailed sizes;
the plan moves one replica of every partition it can (``synthetic_moves(..., "random")``).

Run: python bench/bench_plan_report.py [--partitions 1000000]   (needs chromium, chromedriver)
Appends a section to bench/RESULTS.md. ``--keep DIR`` keeps the cluster, plan and report in DIR;
``--page DIR`` times only the rendering of a report kept that way (to time the browser on a quiet
machine apart from the minutes it takes to build a 1M plan).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from machine import publish  # noqa: E402

from kadmin import snapshots, synthetic  # noqa: E402

TARGET_MB = 20.0
TARGET_SECONDS = 5.0


def browser():  # type: ignore[no-untyped-def]
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1400,2000", "--disable-gpu"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(300)
    return driver


def render_seconds(driver, page: Path) -> float:  # type: ignore[no-untyped-def]
    """From the request of ``page`` to every chart drawn (plotly marks a drawn chart's div)."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    start = time.perf_counter()
    driver.get(page.as_uri())
    count = len(driver.find_elements("css selector", "div.plotly-graph-div"))
    WebDriverWait(driver, 300, poll_frequency=0.02).until(lambda d: len(d.find_elements(
        "css selector", "div.plotly-graph-div.js-plotly-plot")) == count)
    return time.perf_counter() - start


def floor_page(path: Path) -> None:
    import plotly.graph_objects as go
    import plotly.io as pio

    fig = go.Figure(go.Bar(x=[1, 2, 3], y=[3, 1, 2]))
    path.write_text(pio.to_html(fig, include_plotlyjs=True, full_html=True))


def render_only(folder: Path, rounds: int) -> None:
    """Time the rendering of ``folder/report.html`` against the floor page, as :func:`main`."""
    floor_page(folder / "floor.html")
    driver = browser()
    try:
        floor = min(render_seconds(driver, folder / "floor.html") for _ in range(rounds))
        render = min(render_seconds(driver, folder / "report.html") for _ in range(rounds))
    finally:
        driver.quit()
    size_mb = (folder / "report.html").stat().st_size / 1e6
    verdict = "PASS" if size_mb < TARGET_MB and render < TARGET_SECONDS else "FAIL"
    publish("plan report, rendering a kept 1M-partition report", [
        f"- page: {size_mb:.2f} MB (target < {TARGET_MB:.0f} MB)",
        f"- render in headless chromium, request to the last chart drawn, best of {rounds}: "
        f"{render:.2f} s (target < {TARGET_SECONDS:.0f} s); floor (plotly.js and one bar "
        f"chart): {floor:.2f} s; ratio {render / floor:.1f}x: **{verdict}**",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3, help="Page loads timed (best kept).")
    parser.add_argument("--keep", type=Path, help="Keep the cluster, plan and report here.")
    parser.add_argument("--page", type=Path,
                        help="Only time the rendering of the report kept in this folder.")
    args = parser.parse_args()
    if args.page is not None:
        render_only(args.page, args.rounds)
        return
    topics = args.partitions // 10
    with tempfile.TemporaryDirectory(prefix="bench-report-") as scratch:
        folder = Path(scratch) if args.keep is None else args.keep
        folder.mkdir(parents=True, exist_ok=True)
        made = time.perf_counter()
        cluster = synthetic.synthetic_cluster(brokers=1000, topics=topics, partitions=10,
                                              replication_factor=3, racks=10, seed=1)
        cluster = dataclasses.replace(cluster, sizes=synthetic.synthetic_sizes(cluster, seed=1))
        cluster, moves = synthetic.synthetic_moves(cluster, "random", args.partitions, seed=1)
        snapshots.write_snapshot(cluster, folder / "cluster.json")
        (folder / "plan.json").write_text(json.dumps({"version": 1, "partitions": [
            {"topic": m.topic, "partition": m.partition, "replicas": list(m.replicas)}
            for m in sorted(moves)]}))
        made = time.perf_counter() - made
        del cluster

        start = time.perf_counter()
        for name in ("cluster.json", "plan.json"):
            json.loads((folder / name).read_bytes())
        read_floor = time.perf_counter() - start

        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "kadmin", "plan", "report", "plan.json",
                              "--cluster", "cluster.json", "--throttle", "100MB", "-o",
                              "report.html"], cwd=folder, capture_output=True, text=True,
                             check=False, env={**os.environ, "PYTHONPATH": str(HERE.parent)})
        written = time.perf_counter() - start
        if run.returncode != 0:
            raise SystemExit(f"plan report failed ({run.returncode}): {run.stderr}")
        size_mb = (folder / "report.html").stat().st_size / 1e6
        floor_page(folder / "floor.html")
        driver = browser()
        try:
            floor = min(render_seconds(driver, folder / "floor.html") for _ in range(args.rounds))
            render = min(render_seconds(driver, folder / "report.html")
                         for _ in range(args.rounds))
        finally:
            driver.quit()
    verdict = "PASS" if size_mb < TARGET_MB and render < TARGET_SECONDS else "FAIL"
    publish(f"plan report, a plan of {len(moves):,} partitions", [
        f"- cluster: {topics:,} topics x 10 = {topics * 10:,} partitions, RF 3, 1,000 brokers, "
        f"10 racks, synthetic sizes; plan: {len(moves):,} entries, one replica moved each "
        f"(generated in {made:.0f} s)",
        f"- `kadmin plan report plan.json --cluster cluster.json --throttle 100MB -o "
        f"report.html`: {written:.1f} s end to end; floor (json.loads of the snapshot and the "
        f"plan): {read_floor:.1f} s; ratio {written / read_floor:.1f}x",
        f"- page: {size_mb:.2f} MB (target < {TARGET_MB:.0f} MB)",
        f"- render in headless chromium, request to the last chart drawn, best of "
        f"{args.rounds}: {render:.2f} s (target < {TARGET_SECONDS:.0f} s); floor (plotly.js "
        f"and one bar chart): {floor:.2f} s; ratio {render / floor:.1f}x: **{verdict}**",
    ])


if __name__ == "__main__":
    main()
