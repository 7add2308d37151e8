#!/usr/bin/env bash
# Installs what the test suite needs from outside PyPI: today nothing beyond Python packages.
# Real-client tests add kcat here (Debian package) when they land.
set -euo pipefail
exit 0
