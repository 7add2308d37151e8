#!/usr/bin/env bash
# Installs what the test suite needs from outside PyPI (Debian packages): kcat, a real Kafka
# client built on librdkafka, and chromium, the headless browser that looks at the report's page
# (tests/jobs/test_report_browser.py; skipped without it). Run by the README's test command (the
# one .ci/run runs) before tox, not by tox: tox installs Python packages only. A no-op when both
# are already there.
set -euo pipefail
missing=()
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO="sudo"
fi
if command -v apt-get >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
elif ! command -v kcat >/dev/null 2>&1; then
  echo "kcat is needed by the tests; install it with your package manager" >&2
  exit 1
else
  echo "chromium is not installed: the report's browser test will be skipped" >&2
fi
command -v kcat >/dev/null
