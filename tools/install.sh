#!/usr/bin/env bash
# Install kadmin and everything it needs on a fresh machine: Java 17+ (PySpark and the embedded
# ZooKeeper run on it) when missing, then the Python package.
#   bash tools/install.sh          -> pip install .            (the product)
#   bash tools/install.sh --test   -> pip install -e '.[test]' (the product + test tools, editable)
set -euo pipefail
cd "$(dirname "$0")/.."

java_major() {
  java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}

if ! command -v java >/dev/null 2>&1 || [ "$(java_major)" -lt 17 ] 2>/dev/null; then
  echo "tools/install.sh: installing a Java 17 runtime (needed by PySpark and ZooKeeper)" >&2
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  else
    echo "tools/install.sh: no apt-get here; install a JDK 17+ and set JAVA_HOME" >&2
    exit 1
  fi
fi

PIP=(python3 -m pip install --quiet --disable-pip-version-check)
if [ "${1:-}" = "--test" ]; then
  "${PIP[@]}" -e '.[test]'
else
  "${PIP[@]}" .
fi
