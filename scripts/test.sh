#!/usr/bin/env bash
# The test command: lint and format check with ruff, then the whole pytest suite on both cores (pytest-xdist;
# Spark tests share one worker; offline; the page tests
# drive headless Chromium and the Spark tests need Java 17+, which scripts/browser.sh and scripts/java.sh install
# with apt-get when they are missing: that needs root, or run their `sudo apt-get install` line once).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/browser.sh
bash scripts/java.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -n 2 --dist loadgroup "$@"
