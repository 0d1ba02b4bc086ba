#!/usr/bin/env bash
# Install kadmin with its test tools and run the whole suite: unit, CLI, integration (a real
# ZooKeeper from PySpark's jars) and Spark (local[2]). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
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
