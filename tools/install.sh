#!/usr/bin/env bash
# Install kadmin and everything it needs on a fresh machine: Java 17+ (PySpark and the embedded
# ZooKeeper run on it) when missing, then the Python package into the active python3 - a
# virtualenv's, made with:  python3 -m venv .venv && . .venv/bin/activate
#   bash tools/install.sh          -> pip install '.[spark]'   (the product, with PySpark)
#   bash tools/install.sh --test   -> pip install -e '.[test]' (the product + PySpark + test tools,
#                                                               editable)
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
  TARGET=(-e '.[test]')
else
  TARGET=('.[spark]')
fi
# pip's own output is shown only when it fails; a system Python that its distribution manages
# (PEP 668: Debian 12, Ubuntu 23.04 and later) refuses every install, which needs saying plainly
if ! log=$("${PIP[@]}" "${TARGET[@]}" 2>&1); then
  printf '%s\n' "$log" >&2
  if grep -q "externally-managed-environment" <<<"$log"; then
    cat >&2 <<EOF

tools/install.sh: $(command -v python3) is a system Python that its distribution manages
(PEP 668), and pip refuses to install into it. Install kadmin into a virtualenv instead:

    python3 -m venv .venv && . .venv/bin/activate
    bash tools/install.sh${1:+ $1}
EOF
  fi
  exit 1
fi
