"""`kadmin plan report` and `plan validate --report`: the HTML page opened by a real headless
browser (Debian's chromium through selenium), offline, and held to the plan's own numbers.

The browser is part of the test tools (tools/install.sh --test installs chromium and its
driver): where it is missing these tests fail, saying so, rather than skip.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image, ImageStat

import kadmin.plan_report as kadmin_plan_report
from kadmin import snapshots, synthetic
from kadmin.model import ClusterSnapshot, ReassignmentPlan
from kadmin.operations.capacity import read_capacities
from kadmin.operations.validate import stats_of
from kadmin.sizes import snapshot_sizes
from tests.helpers import write_plan

CHROMIUM = ("chromium", "chromedriver")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless chromium that may reach nothing: every host resolves nowhere and every proxied
    request goes to a closed port, and the Network domain's events are logged to be checked."""
    found = {name: shutil.which(name) for name in CHROMIUM}
    if None in found.values():
        pytest.fail(f"{', '.join(n for n, p in found.items() if p is None)} not found: the report "
                    "tests need Debian's chromium and chromium-driver (bash tools/install.sh "
                    "--test installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = found["chromium"] or ""
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1400,2000", "--proxy-server=127.0.0.1:9",
                     "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-gpu"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(found["chromedriver"] or ""), options=options)
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver, page: Path, *, charts: bool = True) -> None:
    """Load ``page`` and wait until plotly.js has drawn every chart in it."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("performance")  # what came before this page
    driver.get_log("browser")
    driver.get(page.as_uri())
    count = len(driver.find_elements("css selector", "div.plotly-graph-div"))
    assert bool(count) == charts
    # plotly.js marks a chart's div once it has drawn it
    WebDriverWait(driver, 60).until(lambda d: len(d.find_elements(
        "css selector", "div.plotly-graph-div.js-plotly-plot")) == count)


def assert_offline_and_clean(driver, page: Path) -> None:
    """No console message of level SEVERE or WARNING; no request but the page itself (and
    data: or blob: URLs, which never leave it)."""
    problems = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert not problems, problems
    requested = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requested.append(message["params"]["request"]["url"])
    assert page.as_uri() in requested
    assert [u for u in requested if u != page.as_uri()
            and not u.startswith(("data:", "blob:"))] == []


def text_of(driver, element_id: str) -> str:
    return driver.find_element("id", element_id).get_attribute("textContent")


def table_rows(driver, table_id: str) -> list[list[str]]:
    rows = driver.find_elements("css selector", f"#{table_id} tbody tr")
    return [[c.get_attribute("data-v") for c in r.find_elements("css selector", "td")]
            for r in rows]


def sized_cluster() -> ClusterSnapshot:
    cluster = synthetic.synthetic_cluster(brokers=12, topics=40, partitions=12,
                                          replication_factor=3, racks=3, seed=1)
    return dataclasses.replace(cluster, sizes=synthetic.synthetic_sizes(cluster, seed=1,
                                                                        median=2e9))


def test_report_opens_offline_and_shows_the_plans_numbers(kadmin, browser, tmp_path):
    cluster, moves = synthetic.synthetic_moves(sized_cluster(), "add", 300, seed=1)
    snapshots.write_snapshot(cluster, tmp_path / "cluster.json")
    write_plan(tmp_path / "p.json", moves)
    # broker 0 gets a small disk: over capacity after the plan
    (tmp_path / "cap.json").write_text(json.dumps(
        {str(b): (10**12 if b == 0 else 10**14) for b in cluster.brokers}))
    run = kadmin("plan", "report", "p.json", "--cluster", "cluster.json", "--throttle", "50MB",
                 "--capacity", "cap.json", "--batch-size", "40", "-o", "r.html", "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out) == {"report": "r.html", "plans": 1, "invalid": 0}
    page = tmp_path / "r.html"
    assert page.stat().st_size < 8_000_000

    sizes = snapshot_sizes(cluster)
    plan = ReassignmentPlan(tuple(sorted(moves)))
    stats = stats_of(plan, cluster, sizes, capacities=read_capacities(tmp_path / "cap.json"))
    open_page(browser, page)
    assert_offline_and_clean(browser, page)
    assert text_of(browser, "summary-verdict-0") == "valid"
    assert text_of(browser, "summary-moves-0") == f"{stats.replica_moves:,}"
    assert stats.lower_bound is not None
    assert text_of(browser, "summary-bound-0") == f"{stats.lower_bound:,}"
    assert text_of(browser, "summary-bytes-0") == f"{stats.bytes_moved:,}"
    assert text_of(browser, "summary-leader-changes-0") == f"{stats.leader_changes:,}"
    batch_count = int(text_of(browser, "summary-batches-0"))
    assert batch_count >= -(-len(moves) // 40)
    assert "over capacity" in text_of(browser, "over-capacity-0")
    rows = table_rows(browser, "brokers-table-0")
    assert [[int(v) for v in r[:1] + r[2:8]] for r in rows] == [
        [b.broker, b.replicas_before, b.replicas_after, b.leaders_before, b.leaders_after,
         b.bytes_before, b.bytes_after] for b in stats.brokers]
    assert [r[1] for r in rows] == [cluster.brokers[b.broker].rack or "" for b in stats.brokers]
    # the flow matrix holds every byte copied; the batches every partition that changes
    flows = table_rows(browser, "flows-0-table")
    assert sum(float(v) for r in flows for v in r[1:]) == stats.bytes_moved
    batches = table_rows(browser, "batches-table-0")
    assert len(batches) == batch_count
    assert sum(int(r[1]) for r in batches) == stats.partitions - stats.unchanged
    assert sum(int(r[2]) for r in batches) == stats.bytes_moved
    # the broker table sorts by a column on a click on its header
    browser.execute_script("document.querySelector('#brokers-table-0').closest('details')"
                           ".open = true")
    browser.find_element("css selector", "#brokers-table-0 th:nth-child(4)").click()
    after = [int(r[3]) for r in table_rows(browser, "brokers-table-0")]
    assert after == sorted(after)

    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot))
    image = Image.open(io.BytesIO(shot.read_bytes())).convert("L")
    assert image.size[0] >= 1000
    assert max(ImageStat.Stat(image).var) > 500, "the screenshot is (nearly) blank"


def test_invalid_plans_show_their_errors_bounded(kadmin, browser, tmp_path):
    cluster = sized_cluster()
    snapshots.write_snapshot(cluster, tmp_path / "cluster.json")
    # 150 partitions the cluster lacks: errors, of which the page lists 100
    write_plan(tmp_path / "bad.json", {("topic-000000", p): [0, 1, 2] for p in range(12, 162)})
    run = kadmin("plan", "report", "bad.json", "--cluster", "cluster.json", "-o", "bad.html")
    assert run.code == 0, run.err
    assert "1 plan(s), 1 invalid" in run.out
    page = tmp_path / "bad.html"
    open_page(browser, page, charts=False)
    assert_offline_and_clean(browser, page)
    assert text_of(browser, "summary-verdict-0") == "invalid"
    assert text_of(browser, "summary-errors-0") == "150"
    items = browser.find_elements("css selector", "#plan-0 ul.problems li")
    assert len(items) == 101 and items[-1].get_attribute("textContent") == "(and 50 more)"


def test_validate_report_writes_one_page_per_plan(kadmin, browser, tmp_path):
    cluster = sized_cluster()
    snapshots.write_snapshot(cluster, tmp_path / "cluster.json")
    _, moves = synthetic.synthetic_moves(cluster, "skew", 40, seed=2)
    write_plan(tmp_path / "plans" / "move.json", moves)
    (tmp_path / "plans" / "elect.json").write_text(json.dumps(
        {"version": 1, "partitions": [{"topic": "topic-000001", "partition": 0}]}))
    (tmp_path / "plans" / "drop.json").write_text(json.dumps(
        {"version": 1, "topics": ["topic-000002"]}))
    run = kadmin("plan", "validate", "plans", "--cluster", "cluster.json", "--report", "out")
    assert run.code == 0, run.out + run.err
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["plans__drop.json.html", "plans__elect.json.html",
                       "plans__move.json.html"]
    for name, kind in zip(written, ("deletion", "election", "reassign"), strict=True):
        page = tmp_path / "out" / name
        open_page(browser, page)
        assert_offline_and_clean(browser, page)
        assert text_of(browser, "summary-kind-0") == kind
        assert text_of(browser, "summary-verdict-0") == "valid"
    # a replica count per broker that the deletion takes away
    rows = table_rows(browser, "brokers-table-0")
    assert sum(int(r[2]) for r in rows) == 3 * 12 * 40


def test_validate_report_needs_a_cluster(kadmin, tmp_path):
    write_plan(tmp_path / "p.json", {("t", 0): [1, 2]})
    run = kadmin("plan", "validate", "p.json", "--report", "out")
    assert run.code == 2
    assert "--report needs the cluster" in run.err
    assert not (tmp_path / "out").exists()


def test_without_plotly_one_line_names_the_extra(kadmin, tmp_path, monkeypatch):
    snapshots.write_snapshot(sized_cluster(), tmp_path / "cluster.json")
    write_plan(tmp_path / "p.json", {("topic-000000", 0): [1, 2, 3]})
    monkeypatch.setitem(sys.modules, "plotly", None)  # import plotly: ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "kadmin.plan_report.page", raising=False)
    monkeypatch.delattr(kadmin_plan_report, "page", raising=False)  # imported anew
    run = kadmin("plan", "report", "p.json", "--cluster", "cluster.json", "-o", "r.html")
    assert run.code == 1
    assert run.err.strip().splitlines() == [
        "kadmin: error: kadmin plan report needs Plotly, which is not installed "
        "(pip install 'kadmin[report]')"]
    assert not (tmp_path / "r.html").exists()


def test_report_out_follows_the_file_rules(kadmin, tmp_path):
    snapshots.write_snapshot(sized_cluster(), tmp_path / "cluster.json")
    write_plan(tmp_path / "p.json", {("topic-000000", 0): [1, 2, 3]})
    (tmp_path / "target.html").write_text("mine")
    os.symlink(tmp_path / "target.html", tmp_path / "link.html")
    for out, message in (("link.html", "symbolic link"), ("target.html", "already exists")):
        run = kadmin("plan", "report", "p.json", "--cluster", "cluster.json", "-o", out)
        assert run.code == 2, run.err
        assert message in run.err
    assert (tmp_path / "target.html").read_text() == "mine"
    run = kadmin("plan", "report", "p.json", "--cluster", "cluster.json", "-o", "target.html",
                 "--force")
    assert run.code == 0, run.err
    assert (tmp_path / "target.html").read_text().startswith("<!DOCTYPE html>")


def test_report_takes_plans_as_plan_validate_does(kadmin, tmp_path):
    """--plan FILE beside the bare plans (one grammar with plan validate); none at all is one
    line naming both ways, before anything is read or written."""
    snapshots.write_snapshot(sized_cluster(), tmp_path / "cluster.json")
    write_plan(tmp_path / "a.json", {("topic-000000", 0): [1, 2, 3]})
    write_plan(tmp_path / "b.json", {("topic-000001", 0): [2, 3, 4]})
    run = kadmin("plan", "report", "a.json", "--plan", "b.json", "--cluster", "cluster.json",
                 "-o", "r.html", "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out) == {"report": "r.html", "plans": 2, "invalid": 0}
    page = (tmp_path / "r.html").read_text()
    assert "a.json" in page and "b.json" in page
    none = kadmin("plan", "report", "--cluster", "cluster.json", "-o", "none.html")
    assert (none.code, none.err) == (
        2, "kadmin: error: no plan given: name the plans to draw (kadmin plan report FILE ... "
           "or --plan FILE)\n")
    assert not (tmp_path / "none.html").exists()
