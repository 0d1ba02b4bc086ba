"""A scratch git repository of kadmin's source as it is now, for pre-commit to use as the hook
repository (`repo: <path>`, `rev: <commit>`): what a user's pre-commit clones and installs.
Shared by bench/bench_hook_install.py and the hook's test in tests/cli/test_cli_validate.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git(cwd: Path, *args: str) -> str:
    """A git command in ``cwd`` with a throwaway identity; its output."""
    return subprocess.run(["git", "-c", "user.name=kadmin", "-c", "user.email=k@example.com",
                           "-c", "init.defaultBranch=main", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    """Make ``repo`` a git repository holding what is in it; the commit."""
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def hook_repo(where: Path, *, with_spark: bool = False) -> str:
    """Copy what kadmin's package is built from to ``where`` and commit it; the commit. With
    ``with_spark`` PySpark is a dependency again instead of an extra (to measure it)."""
    where.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, where / name)
    for tree in ("kadmin", "schemas"):
        shutil.copytree(ROOT / tree, where / tree,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if with_spark:
        pyproject = where / "pyproject.toml"
        pyproject.write_text(pyproject.read_text().replace(
            "dependencies = [\n", 'dependencies = [\n    "pyspark>=3.5",\n', 1))
    return commit_all(where, "kadmin")
