#!/usr/bin/env bash
# Install kadmin with its test tools and run the whole suite: unit, CLI, integration (a real
# ZooKeeper from PySpark's jars) and Spark (local[2]). Extra arguments go to pytest.
#
# On a system Python that its distribution manages (PEP 668), where pip refuses to install,
# the suite runs in a virtualenv of its own, .venv (made on the first run, reused after).
set -euo pipefail
cd "$(dirname "$0")/.."

externally_managed() {
  python3 - <<'PY'
import os, sys, sysconfig
in_venv = sys.prefix != sys.base_prefix
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
sys.exit(0 if not in_venv and os.path.exists(marker) else 1)
PY
}

if externally_managed; then
  if [ ! -x .venv/bin/python3 ]; then
    echo "tools/test.sh: $(command -v python3) is externally managed (PEP 668); making .venv" >&2
    python3 -m venv .venv || {
      echo "tools/test.sh: python3 -m venv failed; install the venv module (e.g. apt-get" \
           "install python3-venv) and run this again" >&2
      exit 1
    }
  fi
  # shellcheck disable=SC1091
  . .venv/bin/activate
fi

bash tools/install.sh --test
python3 -m ruff check kadmin tests bench
set +e
python3 -m pytest -q "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "tools/test.sh: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$code"
