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

say() { echo "tools/install.sh: $*" >&2; }  # a line per step: pip is quiet for a minute or so

say "checking for Java 17+ (PySpark and the embedded ZooKeeper run on it)"
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
else
  say "Java $(java_major) found"
fi

PIP=(python3 -m pip install --quiet --disable-pip-version-check)
if [ "${1:-}" = "--test" ]; then
  TARGET=(-e '.[test]')
  # the report tests open kadmin's HTML reports in a real headless browser (Debian's chromium
  # and its driver, through selenium); without them those tests fail, saying so
  if ! { command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; }; then
    if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; }; then
      SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
      echo "tools/install.sh: installing chromium and chromium-driver for the report tests" >&2
      $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq chromium chromium-driver >/dev/null \
        || echo "tools/install.sh: could not install chromium; the report tests will fail" >&2
    else
      echo "tools/install.sh: no apt-get (or no root): install chromium and chromedriver for" \
           "the report tests, which fail without them" >&2
    fi
  fi
  # Kerberos for the GSSAPI integration test: MIT's KDC and client tools, and the headers the
  # kerberos module builds against (kadmin[kerberos]). Where they cannot be installed the test
  # skips, saying so; everything else is installed as usual.
  KRB_PACKAGES=(krb5-kdc krb5-admin-server krb5-user libkrb5-dev)
  if command -v krb5kdc >/dev/null 2>&1 && command -v kinit >/dev/null 2>&1 \
      && [ -e /usr/include/gssapi/gssapi.h ]; then
    TARGET=(-e '.[test,kerberos]')
  elif command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; }; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "tools/install.sh: installing MIT Kerberos (${KRB_PACKAGES[*]}) for the GSSAPI test" >&2
    if $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq "${KRB_PACKAGES[@]}" >/dev/null; then
      TARGET=(-e '.[test,kerberos]')
    else
      echo "tools/install.sh: could not install ${KRB_PACKAGES[*]}; the Kerberos test will skip" >&2
    fi
  else
    echo "tools/install.sh: no apt-get (or no root): the Kerberos test will skip; install MIT" \
         "Kerberos (krb5kdc, kinit, the krb5 headers) and pip install -e '.[kerberos]' to run it" >&2
  fi
else
  TARGET=('.[spark]')
fi
# pip's own output is shown only when it fails; a system Python that its distribution manages
# (PEP 668: Debian 12, Ubuntu 23.04 and later) refuses every install, which needs saying plainly
say "pip install ${TARGET[*]} into $(command -v python3) (a minute or two: PySpark is large)"
if [ "${TARGET[*]}" = "-e .[test,kerberos]" ]; then
  if "${PIP[@]}" "${TARGET[@]}" >/dev/null 2>&1; then
    say "done: $(python3 -m kadmin --version)"
    exit 0
  fi
  echo "tools/install.sh: the kerberos module did not build; the Kerberos test will skip" >&2
  TARGET=(-e '.[test]')
fi
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
say "done: $(python3 -m kadmin --version)"
