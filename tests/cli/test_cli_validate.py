"""`kadmin plan validate FILE...` as a CI job runs it: many plans in one run, every format, the
line and column of each problem exactly, and the real `pre-commit` running the hook."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from bench.hook_repo import commit_all, git, hook_repo

ROOT = Path(__file__).resolve().parents[2]

CLUSTER = {"version": 1, "brokers": {str(b): {} for b in range(3)},
           "topics": {"orders": {"0": [0, 1], "1": [1, 2], "2": [2, 0]},
                      "payments": {"0": [0, 1]}}}

# each file as written: the line numbers below count these lines
GOOD = """\
{"version": 1, "partitions": [
  {"topic": "orders", "partition": 0, "replicas": [1, 2]}
]}
"""
BAD = """\
{"version": 1,
 "partitions": [
  {"topic": "orders", "partition": 1, "replicas": [2, 0]},
  {"topic": "orders", "partition": 2,
   "replicas": []},
    {"topic": "orders", "partition": 1, "replicas": [0, 2]}
]}
"""
SYNTAX = """\
{"version": 1, "partitions": [
  {"topic": "orders", "partition": 0, "replicas": [1, 2]}
  {"topic": "orders", "partition": 1, "replicas": [1, 2]}
]}
"""
UNKNOWN = """\
{"version":1,"partitions":[
{"topic":"payments","partition":0,"replicas":[1,0]},
   {"topic":"ghost","partition":3,"replicas":[0,1]}]}
"""
REPEATED_KEY = """\
{"version":1,"partitions":[
 {"topic":"payments","partition":0,"replicas":[1,0]},
      {"topic":"orders","partition":1,"replicas":[1,2],"replicas":[2,0]}]}
"""

EMPTY = "replica list is empty; a partition needs at least one replica"
GHOST = "unknown topic ghost (not in /brokers/topics; 1 partition(s) of the plan)"
PROBLEMS = [  # file, line, column, severity, message as shown
    ("bad.json", 4, 3, "error", f"$.partitions[1].replicas (orders-2): {EMPTY}"),
    ("bad.json", 6, 5, "error", "$.partitions[2] (orders-1): listed twice: also at "
                                "$.partitions[0]"),
    ("syntax.json", 3, 3, "error", "not valid JSON (Expecting ',' delimiter at line 3 column 3)"),
    ("unknown.json", 3, 4, "error", f"ghost: {GHOST}"),
    ("key.json", 3, 7, "error", 'not valid JSON (duplicate key "replicas" in the object at '
                                "$.partitions[1])"),
]
FILES = ["good.json", "bad.json", "syntax.json", "unknown.json", "key.json"]


@pytest.fixture
def plans(tmp_path: Path) -> list[str]:
    for name, text in zip(FILES, [GOOD, BAD, SYNTAX, UNKNOWN, REPEATED_KEY], strict=True):
        (tmp_path / name).write_text(text)
    (tmp_path / "cluster.json").write_text(json.dumps(CLUSTER))
    return FILES


def test_text_names_each_file_and_counts_the_plans(kadmin, plans):
    run = kadmin("plan", "validate", *plans, "--cluster", "cluster.json")
    assert run.code == 2
    assert run.err.splitlines() == [f"{file}: {severity}: {message}"
                                    for file, _, _, severity, message in PROBLEMS]
    assert run.out.splitlines() == [
        "good.json: reassign plan valid (0 error(s), 0 warning(s))",
        "bad.json: reassign plan INVALID (2 error(s), 0 warning(s))",
        "syntax.json: unknown plan INVALID (1 error(s), 0 warning(s))",
        "unknown.json: reassign plan INVALID (1 error(s), 0 warning(s))",
        "key.json: unknown plan INVALID (1 error(s), 0 warning(s))",
        "5 plans: 1 valid, 4 invalid",
    ]


def test_github_annotates_the_line_where_each_offending_entry_starts(kadmin, plans):
    run = kadmin("plan", "validate", *plans, "--cluster", "cluster.json", "--format", "github")
    assert run.code == 2
    assert run.out.splitlines() == [f"::{severity} file={file},line={line},col={column}::{message}"
                                    for file, line, column, severity, message in PROBLEMS]
    assert run.err == ""


def test_json_is_one_report_a_plan_with_places(kadmin, plans):
    for args in (["--json"], ["--format", "json"]):
        run = kadmin("plan", "validate", *plans, "--cluster", "cluster.json", *args)
        assert run.code == 2
        reports = [json.loads(line) for line in run.out.splitlines()]
        assert [(r["file"], r["valid"], r["error_count"]) for r in reports] == [
            ("good.json", True, 0), ("bad.json", False, 2), ("syntax.json", False, 1),
            ("unknown.json", False, 1), ("key.json", False, 1)]
        assert reports[1]["errors"][0] == {
            "path": "$.partitions[1].replicas", "partition": "orders-2", "message": EMPTY,
            "file": "bad.json", "line": 4, "column": 3}
        assert reports[3]["errors"][0] == {"path": "ghost", "partition": None, "message": GHOST,
                                           "file": "unknown.json", "line": 3, "column": 4}


def test_junit_is_one_well_formed_document_a_case_per_plan(kadmin, plans, tmp_path):
    weird = "odd\x1bname,:%.json"  # a control character XML cannot hold, and GitHub's specials
    shutil.copyfile(tmp_path / "bad.json", tmp_path / weird)
    run = kadmin("plan", "validate", *plans, weird, "--cluster", "cluster.json",
                 "--format", "junit")
    assert run.code == 2
    suites = ET.fromstring(run.out.encode())
    assert suites.tag == "testsuites"
    (suite,) = suites
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("6", "5", "0")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == [*plans, "odd\\x1bname,:%.json"]
    assert cases["good.json"].find("failure") is None
    failure = cases["bad.json"].find("failure")
    assert failure is not None
    assert failure.get("message") == "reassign plan INVALID (2 error(s), 0 warning(s))"
    assert failure.text.splitlines() == [f"{file}:{line}:{column}: {severity}: {message}"
                                         for file, line, column, severity, message in PROBLEMS
                                         if file == "bad.json"]
    assert cases["syntax.json"].find("failure").text == (
        "syntax.json:3:3: error: not valid JSON (Expecting ',' delimiter at line 3 column 3)")


def test_github_escapes_what_its_commands_would_misread(kadmin, tmp_path):
    (tmp_path / "a,b:c%.json").write_text(BAD)
    run = kadmin("plan", "validate", "a,b:c%.json", "--format", "github")
    assert run.out.splitlines()[0] == (
        f"::error file=a%2Cb%3Ac%25.json,line=4,col=3::$.partitions[1].replicas (orders-2): {EMPTY}")


def test_a_valid_run_exits_0_and_strict_fails_on_warnings(kadmin, tmp_path):
    (tmp_path / "cluster.json").write_text(json.dumps(CLUSTER))
    (tmp_path / "a.json").write_text(GOOD)
    (tmp_path / "b.json").write_text('{"version": 1, "partitions": [\n'
                                     '  {"topic": "orders", "partition": 0, "replicas": [2, 1]},\n'
                                     '  {"topic": "orders", "partition": 2, "replicas": [0, 1]}]}')
    run = kadmin("plan", "validate", "a.json", "b.json", "--cluster", "cluster.json")
    assert run.code == 0, run.err
    # b.json moves orders-0 too: a warning on b's entry, naming a.json
    assert run.out.splitlines()[:2] == [
        "a.json: reassign plan valid (0 error(s), 0 warning(s))",
        "b.json: warning: $.partitions[0] (orders-0): also moved by a.json: the two plans "
        "cannot run at once"]
    github = kadmin("plan", "validate", "a.json", "b.json", "--format", "github", "--strict")
    assert github.code == 2
    assert github.out == ("::warning file=b.json,line=2,col=3::$.partitions[0] (orders-0): also "
                          "moved by a.json: the two plans cannot run at once\n")


def test_folders_of_plans_and_spark_folders(kadmin, tmp_path):
    """A folder is its plans (journals aside), a Spark output folder among them one plan; a
    batch file also named is checked with its folder only; a plan and its own rollback are
    not two plans moving the same partitions."""
    plans = tmp_path / "plans"
    (plans / "big").mkdir(parents=True)
    (plans / "x.json").write_text(GOOD)
    (plans / "x.rollback.json").write_text(GOOD.replace("[1, 2]", "[0, 1]"))
    (plans / "x.journal.json").write_text('{"not": "a plan"}')
    (plans / "big" / "batch-1.json").write_text(UNKNOWN.replace("ghost", "orders"))
    (plans / "big" / "batch-2.json").write_text(BAD.replace('"partition": 2', '"partition": 7')
                                               .replace("[]", "[1]"))
    (plans / "big" / "manifest.json").write_text(json.dumps(
        {"batches": [{"file": "batch-1.json"}, {"file": "batch-2.json"}]}))
    run = kadmin("plan", "validate", "plans", "plans/big/batch-1.json", "--format", "github")
    assert run.code == 2
    assert run.out.splitlines() == [
        "::error file=plans/big/batch-2.json,line=6,col=5::plans/big/batch-2.json: "
        "$.partitions[2] (orders-1): listed twice: also at $.partitions[0]"]
    text = kadmin("plan", "validate", "plans")
    assert text.out.splitlines()[-4:] == [
        "plans/big: reassign plan INVALID (1 error(s), 0 warning(s))",
        "plans/x.json: reassign plan valid (0 error(s), 0 warning(s))",
        "plans/x.rollback.json: reassign plan valid (0 error(s), 0 warning(s))",
        "3 plans: 2 valid, 1 invalid"]
    (tmp_path / "none").mkdir()
    empty = kadmin("plan", "validate", "none")
    assert empty.code == 2
    assert empty.err.strip() == "kadmin: error: none is a folder without plans (*.json files or " \
                                "kadmin spark output folders)"


def test_a_missing_file_is_a_verdict_and_the_rest_are_still_checked(kadmin, tmp_path):
    (tmp_path / "good.json").write_text(GOOD)
    run = kadmin("plan", "validate", "gone.json", "good.json", "--format", "github")
    assert run.code == 2
    (line,) = run.out.splitlines()
    assert line.startswith("::error file=gone.json::") and "no such file" in line


def test_json_and_another_format_is_an_input_error(kadmin, tmp_path):
    (tmp_path / "good.json").write_text(GOOD)
    run = kadmin("plan", "validate", "good.json", "--json", "--format", "junit")
    assert run.code == 2
    assert "--json is short for --format json" in run.err


# --- PySpark is an extra ---------------------------------------------------------------------------

WITHOUT_PYSPARK = ("import sys; sys.modules['pyspark'] = sys.modules['py4j'] = None; "
                   "from kadmin.cli.app import main; main(sys.argv[1:])")


@pytest.mark.parametrize("args", [
    ["spark", "plan", "--cluster", "c.json", "--all-topics", "--out", "o"],
    ["spark", "rebalance", "--cluster", "c.json", "--out", "o"],
    ["zk", "serve"],
    ["demo"],
])
def test_without_pyspark_commands_that_need_it_say_how_to_get_it(args, tmp_path):
    (tmp_path / "c.json").write_text(json.dumps(CLUSTER))
    run = subprocess.run([sys.executable, "-c", WITHOUT_PYSPARK, *args], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    (line,) = run.stderr.splitlines()
    assert "pip install 'kadmin[spark]'" in line and "PySpark" in line
    assert not (tmp_path / "o").exists()


def test_without_pyspark_plans_are_still_validated(tmp_path):
    (tmp_path / "good.json").write_text(GOOD)
    run = subprocess.run([sys.executable, "-c", WITHOUT_PYSPARK, "plan", "validate", "good.json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


# --- the real pre-commit ------------------------------------------------------------------------

def test_the_pre_commit_hook_under_the_real_pre_commit(tmp_path):
    """kadmin's source as it is now, committed to a repository of its own, is the hook
    repository; a repository of plans uses it as a user would, from an empty pre-commit cache
    (pre-commit builds the hook's environment with pip, from PyPI)."""
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) \
        or shutil.which("pre-commit")
    assert pre_commit, "pre-commit is in the test extra (pip install -e '.[test]')"
    hooks = tmp_path / "kadmin-src"
    rev = hook_repo(hooks)

    repo = tmp_path / "ops"
    (repo / "plans").mkdir(parents=True)
    (repo / "plans" / "good.json").write_text(GOOD)
    (repo / "plans" / "bad.json").write_text(BAD)
    (repo / "plans" / "good.journal.json").write_text('{"a kadmin journal": true}')
    (repo / "cluster.json").write_text(json.dumps(CLUSTER))
    (repo / "notes.json").write_text('{"not": "a plan, outside plans/"}')
    (repo / ".pre-commit-config.yaml").write_text(f"""\
repos:
  - repo: {hooks}
    rev: {rev}
    hooks:
      - id: kadmin-validate
        files: ^plans/
        args: [--cluster, cluster.json]
""")
    commit_all(repo, "plans")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([pre_commit, "run", "--all-files", "--color", "never"], cwd=repo,
                              env=env, capture_output=True, text=True, timeout=900)

    failed = run()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "- hook id: kadmin-validate\n- exit code: 2" in failed.stdout
    lines = failed.stdout.splitlines()
    assert f"plans/bad.json: error: $.partitions[1].replicas (orders-2): {EMPTY}" in lines
    assert "plans/good.json: reassign plan valid (0 error(s), 0 warning(s))" in lines
    assert "2 plans: 1 valid, 1 invalid" in lines  # the journal and notes.json were not passed

    (repo / "plans" / "bad.json").unlink()
    git(repo, "commit", "-qam", "drop the bad plan")
    passed = run()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "kadmin plan validate" in passed.stdout and "Passed" in passed.stdout


# --- the README's CI jobs, run as written ----------------------------------------------------------

def ci_blocks() -> dict[str, object]:
    """The YAML blocks of the README's "Validate plans in CI" section, parsed."""
    import yaml  # pre-commit's own dependency

    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Validate plans in CI"):]
    section = section[:section.index("\n## ", 1)]
    blocks = section.split("```yaml\n")[1:]
    return {name: yaml.safe_load(block.split("```")[0])
            for name, block in zip(("pre-commit", "github", "gitlab"), blocks, strict=True)}


def test_the_readme_ci_jobs_run_as_written(tmp_path):
    """The commands the GitHub and GitLab jobs run, in a repository of plans (kadmin itself is
    installed here already): the exit code fails the job on an invalid plan, the JUnit report is
    written either way, and the pre-commit snippet names this repository's hook."""
    blocks = ci_blocks()
    hook = blocks["pre-commit"]["repos"][0]["hooks"][0]
    import yaml

    ours = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == ours[0]["id"] == "kadmin-validate"
    steps = [step["run"] for step in blocks["github"]["jobs"]["validate"]["steps"]
             if "run" in step]
    github = next(step for step in steps if "--format github" in step)
    gitlab = blocks["gitlab"]["validate-plans"]["script"][-1]
    assert blocks["gitlab"]["validate-plans"]["artifacts"]["reports"]["junit"] == "kadmin-plans.xml"
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "good.json").write_text(GOOD)
    (tmp_path / "cluster.json").write_text(json.dumps(CLUSTER))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def job(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    assert job(github).returncode == 0
    assert job(gitlab).returncode == 0
    (tmp_path / "plans" / "bad.json").write_text(BAD)
    failed = job(github)
    assert failed.returncode == 2
    assert failed.stdout.splitlines()[0].startswith(
        "::error file=plans/bad.json,line=4,col=3::$.partitions[1].replicas (orders-2)")
    assert job(gitlab).returncode == 2
    report = ET.parse(tmp_path / "kadmin-plans.xml").getroot()
    assert [(case.get("name"), case.find("failure") is not None)
            for case in report.iter("testcase")] == [("plans/bad.json", True),
                                                     ("plans/good.json", False)]


def test_the_readme_ci_jobs_upload_the_changed_plans_reports(tmp_path):
    """The report steps of the README's jobs, in a clone of a repository of plans whose change
    adds one plan: the report of that plan alone is written, beside the JUnit report, where the
    jobs upload them; the gate still fails the job on an invalid plan."""
    blocks = ci_blocks()
    steps = [step["run"] for step in blocks["github"]["jobs"]["validate"]["steps"]
             if "run" in step]
    github = next(step for step in steps if "--report" in step)
    uploaded = next(step for step in blocks["github"]["jobs"]["validate"]["steps"]
                    if "upload-artifact" in step.get("uses", ""))["with"]["path"].split()
    script = blocks["gitlab"]["validate-plans"]["script"]
    gitlab = "\n".join(line for line in script if "pip install" not in line)
    assert blocks["gitlab"]["validate-plans"]["artifacts"]["paths"] == ["plan-reports/"]
    assert uploaded == ["plan-reports/", "kadmin-plans.xml"]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join(sys.path),  # the kadmin under test
           "GITHUB_BASE_REF": "main", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}

    def sh(command: str, where: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-ec", command], cwd=where, env=env,
                              capture_output=True, text=True, timeout=300)

    origin = tmp_path / "origin"
    (origin / "plans").mkdir(parents=True)
    (origin / "plans" / "good.json").write_text(GOOD)
    (origin / "cluster.json").write_text(json.dumps(CLUSTER))
    assert sh("git init -q -b main . && git add . && git commit -qm plans", origin).returncode == 0
    for job, script_text, code in (("github", github, 0), ("gitlab", gitlab, 2)):
        work = tmp_path / job
        assert sh(f"git clone -q {origin} {work}", tmp_path).returncode == 0
        (work / "plans" / "new.json").write_text(GOOD.replace("[1, 2]", "[2, 1]"))
        (work / "plans" / "bad.json").write_text(BAD)
        assert sh("git add plans && git commit -qm change", work).returncode == 0
        ran = sh(script_text, work)
        assert ran.returncode == code, ran.stdout + ran.stderr
        written = sorted(p.name for p in (work / "plan-reports").iterdir())
        assert written == ["plans__bad.json.html", "plans__new.json.html"], ran.stderr
        page = (work / "plan-reports" / "plans__new.json.html").read_text()
        assert "plans/new.json" in page and "<script>" in page


def test_odd_entries_in_a_folder_of_plans(kadmin, tmp_path):
    """A FIFO named like a plan is refused by name without blocking, a link to a folder is not
    followed (a loop would never end), a link to a plan is read."""
    plans = tmp_path / "plans"
    plans.mkdir()
    (plans / "good.json").write_text(GOOD)
    os.mkfifo(plans / "pipe.json")
    (plans / "loop").symlink_to(plans)
    (plans / "link.json").symlink_to(plans / "good.json")
    run = kadmin("plan", "validate", "plans", "--format", "github")
    assert run.code == 2
    assert run.out.splitlines() == [
        "::error file=plans/pipe.json::plans/pipe.json is a named pipe (FIFO), not a regular file"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_a_folder_that_cannot_be_listed_is_named(kadmin, tmp_path):
    (tmp_path / "plans").mkdir(mode=0)
    run = kadmin("plan", "validate", "plans")
    assert run.code == 2
    assert run.err.strip() == "kadmin: error: plans: cannot list the folder (Permission denied)"
