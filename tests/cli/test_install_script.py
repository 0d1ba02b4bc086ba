"""tools/install.sh says what it does, a line per step on stderr (pip itself stays quiet for
a minute or more). Run against stand-ins for java and python3 on PATH that record their calls:
what is checked is the script's own narration and the install it asks for, not pip."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

JAVA = '#!/bin/sh\necho \'openjdk version "17.0.9" 2023-10-17\' >&2\n'
PYTHON = """#!/bin/sh
echo "$@" >> "$(dirname "$0")/calls"
case "$*" in
  "-m kadmin --version") echo "kadmin 9.9.9" ;;
esac
"""


def test_install_says_each_step(tmp_path: Path) -> None:
    for name, text in (("java", JAVA), ("python3", PYTHON)):
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(["bash", str(ROOT / "tools" / "install.sh")], capture_output=True,
                         text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        "tools/install.sh: checking for Java 17+ (PySpark and the embedded ZooKeeper run on it)",
        "tools/install.sh: Java 17 found",
        f"tools/install.sh: pip install .[spark] into {tmp_path / 'python3'} (a minute or two: "
        "PySpark is large)",
        "tools/install.sh: done: kadmin 9.9.9"]
    assert (tmp_path / "calls").read_text().splitlines() == [
        "-m pip install --quiet --disable-pip-version-check .[spark]", "-m kadmin --version"]
