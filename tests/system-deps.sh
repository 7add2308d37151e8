#!/usr/bin/env bash
# Installs what the test suite needs from outside PyPI: kcat (Debian package), a real Kafka
# client built on librdkafka. Run by tox before the tests; a no-op when kcat is already there.
set -euo pipefail
if command -v kcat >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO="sudo"
fi
if command -v apt-get >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq kcat
else
  echo "kcat is needed by the tests; install it with your package manager" >&2
  exit 1
fi
command -v kcat >/dev/null
